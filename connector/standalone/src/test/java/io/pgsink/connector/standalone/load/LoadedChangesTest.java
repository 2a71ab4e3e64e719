package io.pgsink.connector.standalone.load;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class LoadedChangesTest
{
    @Test
    void aTransactionIsCoveredExactlyWhenTheSnapshotShowsIt()
    {
        // xmin 100, xmax 110, 103 and 107 still running at the snapshot
        LoadedChanges.Cut cut = LoadedChanges.Cut.parse("0/5000", "100:110:103,107");
        long before = 0x4000;
        assertThat(cut.covers(before, 99)).as("committed before xmin").isTrue();
        assertThat(cut.covers(before, 100)).as("between xmin and xmax, not running").isTrue();
        assertThat(cut.covers(before, 103)).as("running at the snapshot").isFalse();
        assertThat(cut.covers(before, 107)).isFalse();
        assertThat(cut.covers(before, 110)).as("xmax and later").isFalse();
        assertThat(cut.covers(before, 5000)).isFalse();
        // a change at or after the snapshot's LSN belongs to a transaction the snapshot cannot show
        assertThat(cut.covers(0x5000, 99)).isFalse();
        assertThat(cut.covers(0x6000, 99)).isFalse();
    }

    @Test
    void transactionIdsCompareModulo32Bits()
    {
        // 64-bit ids of epoch 1, near the 32-bit wraparound: xmin 2^32 + 2^32 - 5, xmax 2^32 + 2^32 + 5
        long epoch = 1L << 32;
        LoadedChanges.Cut cut = LoadedChanges.Cut.parse("1/0", (epoch + epoch - 5) + ":" + (epoch + epoch + 5) + ":" + (epoch + epoch + 1));
        long before = 0x10L;
        // pgoutput sends 32-bit ids
        assertThat(cut.covers(before, (1L << 32) - 10)).as("before xmin, just below the wrap").isTrue();
        assertThat(cut.covers(before, (1L << 32) - 2)).as("between xmin and xmax, below the wrap").isTrue();
        assertThat(cut.covers(before, 0)).as("between xmin and xmax, after the wrap").isTrue();
        assertThat(cut.covers(before, 1)).as("running").isFalse();
        assertThat(cut.covers(before, 5)).as("xmax").isFalse();
    }

    @Test
    void lsnsParse()
    {
        assertThat(LoadedChanges.parseLsn("0/16B3748")).isEqualTo(0x16B3748L);
        assertThat(LoadedChanges.parseLsn("1A/0")).isEqualTo(0x1AL << 32);
    }

    @Test
    void chunksCoverTheWholeHeap()
    {
        assertThat(LoadTable.chunkConditions(100 * 8192, 1024 * 1024, true)).containsExactly("");
        assertThat(LoadTable.chunkConditions(1000L * 8192, 300L * 8192, false)).containsExactly("");
        assertThat(LoadTable.chunkConditions(1000L * 8192, 300L * 8192, true)).isEqualTo(List.of(
                " WHERE ctid < '(250,0)'::tid",
                " WHERE ctid >= '(250,0)'::tid AND ctid < '(500,0)'::tid",
                " WHERE ctid >= '(500,0)'::tid AND ctid < '(750,0)'::tid",
                " WHERE ctid >= '(750,0)'::tid"));
    }
}
