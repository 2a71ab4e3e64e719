package io.pgsink.bench;

import org.junit.jupiter.api.Test;
import org.openjdk.jmh.infra.Blackhole;

import static org.assertj.core.api.Assertions.assertThat;

/** Runs every JMH benchmark method once with each parameter combination, so CI catches a broken benchmark. Times nothing. */
class BenchmarksRunOnceTest
{
    private static final Blackhole BLACKHOLE = new Blackhole("Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");

    @Test
    void csvWriter()
            throws Exception
    {
        for (int columns : new int[] {8, 32}) {
            for (double quotedShare : new double[] {0.0, 0.2}) {
                BenchmarkCsvWriter benchmark = new BenchmarkCsvWriter();
                benchmark.columns = columns;
                benchmark.quotedShare = quotedShare;
                benchmark.setUp();
                BenchmarkCsvWriter.Bytes bytes = new BenchmarkCsvWriter.Bytes();
                benchmark.encodeRows(bytes, BLACKHOLE);
                assertThat(bytes.bytes).isGreaterThan((long) BenchmarkCsvWriter.ROWS * columns);
            }
        }
    }

    @Test
    void mergeBuffer()
    {
        for (int columns : new int[] {5, 30}) {
            for (double collisions : new double[] {0.0, 0.5, 0.9}) {
                BenchmarkMergeBuffer benchmark = new BenchmarkMergeBuffer();
                benchmark.columns = columns;
                benchmark.keyCollisionRate = collisions;
                benchmark.setUp();
                benchmark.mergeAndBatch(BLACKHOLE);
            }
        }
    }
}
