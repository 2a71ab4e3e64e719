package io.pgsink.core.change;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class SourcePositionTest
{
    @Test
    void aDeferredOffsetIsWrittenOnceWhenFirstAskedFor()
    {
        AtomicInteger writes = new AtomicInteger();
        SourcePosition deferred = SourcePosition.deferred("{\"server\":\"db1\"}", () -> {
            writes.incrementAndGet();
            return "{\"lsn\":42}";
        });
        // the buffer's size estimate does not write it
        assertThat(deferred.offsetLengthEstimate()).isEqualTo(SourcePosition.DEFERRED_OFFSET_ESTIMATE);
        assertThat(writes).hasValue(0);

        assertThat(deferred.offset()).isEqualTo("{\"lsn\":42}");
        assertThat(deferred.offset()).isEqualTo("{\"lsn\":42}");
        assertThat(writes).hasValue(1);
        assertThat(deferred.offsetLengthEstimate()).isEqualTo(10);
    }

    @Test
    void deferredAndWrittenPositionsAreEqualWhenTheirTextsAre()
    {
        SourcePosition written = new SourcePosition("{\"server\":\"db1\"}", "{\"lsn\":42}");
        SourcePosition deferred = SourcePosition.deferred("{\"server\":\"db1\"}", () -> "{\"lsn\":42}");
        assertThat(deferred).isEqualTo(written).hasSameHashCodeAs(written);
        assertThat(written).isEqualTo(deferred);
        assertThat(deferred).isNotEqualTo(new SourcePosition("{\"server\":\"db1\"}", "{\"lsn\":43}"));
        assertThat(deferred).hasToString("offset {\"lsn\":42} of {\"server\":\"db1\"}");
    }
}
