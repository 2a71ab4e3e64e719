package io.pgsink.bench.jmh;

import io.pgsink.bench.workload.Columns;
import io.pgsink.bench.workload.Workload;
import io.pgsink.connector.debezium.DebeziumRecordMapper;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.SourcePosition;
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
        forEachCopyWriterRows((rows, bytes) -> {
            BenchmarkCsvWriter benchmark = new BenchmarkCsvWriter();
            benchmark.setUp(rows);
            benchmark.encodeRows(rows, bytes, BLACKHOLE);
            assertThat(bytes.bytes).isGreaterThan((long) CopyWriterRows.ROWS * rows.columns);
        });
    }

    @Test
    void binaryCopyWriter()
            throws Exception
    {
        forEachCopyWriterRows((rows, bytes) -> {
            BenchmarkBinaryCopyWriter benchmark = new BenchmarkBinaryCopyWriter();
            benchmark.setUp(rows);
            benchmark.encodeRows(rows, bytes, BLACKHOLE);
            assertThat(bytes.bytes).isGreaterThan((long) CopyWriterRows.ROWS * rows.columns * 4);
        });
    }

    /** Runs {@code run} once with the rows of each parameter combination of {@link CopyWriterRows}. */
    private static void forEachCopyWriterRows(CopyWriterRun run)
            throws Exception
    {
        for (int columns : new int[] {8, 32}) {
            for (double quotedShare : new double[] {0.0, 0.2}) {
                CopyWriterRows rows = new CopyWriterRows();
                rows.columns = columns;
                rows.quotedShare = quotedShare;
                rows.setUp();
                run.run(rows, new CopyWriterRows.Bytes());
            }
        }
    }

    @FunctionalInterface
    private interface CopyWriterRun
    {
        void run(CopyWriterRows rows, CopyWriterRows.Bytes bytes)
                throws Exception;
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
                assertThat(benchmark.mergeAndBatch(BLACKHOLE)).as("rows of the merged batch, %s columns, %s collisions", columns, collisions)
                        .isEqualTo(benchmark.distinctKeys())
                        .isLessThanOrEqualTo(BenchmarkMergeBuffer.EVENTS);
            }
        }
    }

    @Test
    void debeziumMapper()
    {
        for (int columns : new int[] {5, 30}) {
            BenchmarkDebeziumMapper benchmark = new BenchmarkDebeziumMapper();
            benchmark.columns = columns;
            benchmark.setUp();
            assertThat(benchmark.mapRecords(BLACKHOLE)).as("events mapped from %s-column records", columns).isEqualTo(BenchmarkDebeziumMapper.RECORDS);
        }
    }

    @Test
    void debeziumMapperRecordsMapToTheWorkloadsChanges()
    {
        Workload workload = Workload.mixed("mapper", Columns.WIDE, 300, 300, 42);
        DebeziumRecordMapper mapper = new DebeziumRecordMapper();
        for (int i = 0; i < workload.changes.size(); i++) {
            Workload.Change change = workload.changes.get(i);
            ChangeEvent event = mapper.map(workload.connectRecords().get(i), new SourcePosition("bench", Integer.toString(i))).orElseThrow();
            assertThat(event.operation()).isEqualTo(switch (change.kind()) {
                case INSERT -> Operation.INSERT;
                case UPDATE -> Operation.UPDATE;
                case DELETE -> Operation.DELETE;
            });
            Object[] values = change.kind() == Workload.Kind.DELETE ? event.before() : event.after();
            assertThat(values).hasSize(30);
            assertThat(values[0]).isEqualTo(change.key());
            if (change.row() != null) {
                assertThat(values).containsExactly(change.row());
            }
        }
    }
}
