package io.pgsink.merge;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.buffer.FlushListener;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.merge.state.WriterFencedException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.SQLException;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two writers with one {@code sink.name}: the one that claimed last commits, the other's flushes
 * fail with {@link WriterFencedException} and apply nothing; per fence (a Kafka Connect partition)
 * the same, and a released fence is no longer checked.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WriterFencingIT
{
    private static final TableSchema ITEMS = TableSchema.of(TableId.of("src", "items"), List.of("id", "note"), List.of("id"));

    private TestingSchema schema;

    @BeforeAll
    void setUp()
            throws SQLException
    {
        schema = TestingPostgreSqlServer.target().createSchema("fencing");
        schema.execute("CREATE TABLE items (id int PRIMARY KEY, note text)");
    }

    @AfterAll
    void tearDown()
            throws SQLException
    {
        if (schema != null) {
            schema.close();
        }
    }

    private SinkConfig config(String sinkName)
    {
        return TestingSink.config(schema, Map.of(SinkConfig.SINK_NAME, sinkName));
    }

    private static BufferedSink sink(SinkConfig config, MergeApplier applier)
    {
        return new BufferedSink(config.sinkName(), config.flushPolicy(), applier, FlushListener.NONE, System::nanoTime, false);
    }

    @Test
    void theWriterThatClaimedLastCommitsAndTheOlderStops()
            throws SQLException
    {
        SinkConfig config = config("fenced_sink");
        try (MergeApplier older = new MergeApplier(config); MergeApplier newer = new MergeApplier(config)) {
            assertThat(older.claim("")).isEqualTo(1);
            try (BufferedSink sink = sink(config, older)) {
                sink.accept(ChangeEvent.insert(ITEMS, new Object[] {1, "older, before the newer claimed"}, new SourcePosition("p", "1"), 0));
                sink.flush();
            }
            assertThat(newer.claim("")).isEqualTo(2);
            try (BufferedSink sink = sink(config, older)) {
                sink.accept(ChangeEvent.insert(ITEMS, new Object[] {2, "older, late"}, new SourcePosition("p", "2"), 0));
                assertThatThrownBy(sink::flush)
                        .isInstanceOf(WriterFencedException.class)
                        .hasMessageStartingWith("Another writer with sink.name fenced_sink took over since this one claimed it (generation 1 in ")
                        .satisfies(e -> assertThat(((WriterFencedException) e).errorCode()).isEqualTo(ErrorCode.CONFIG));
            }
            try (BufferedSink sink = sink(config, newer)) {
                assertThat(sink.committedPositions()).as("generation rows are not positions").containsOnlyKeys("p");
                sink.accept(ChangeEvent.insert(ITEMS, new Object[] {3, "newer"}, new SourcePosition("p", "3"), 0));
                sink.flush();
            }
        }
        assertThat(TestingSink.query(schema, "SELECT id FROM items ORDER BY id")).containsExactly(List.of("1"), List.of("3"));
        assertThat(TestingSink.query(schema, "SELECT source_offset FROM pgsink_offsets WHERE sink_name = 'fenced_sink' AND source_partition = 'p'")).containsExactly(List.of("3"));
    }

    @Test
    void aWriterHoldingAnEarlierClaimKeepsItAcrossAppliers()
            throws SQLException
    {
        SinkConfig config = config("held_sink");
        long generation;
        try (MergeApplier first = new MergeApplier(config)) {
            generation = first.claim("");
        }
        try (MergeApplier again = new MergeApplier(config)) {
            again.hold("", generation);
            again.apply(new Batch(List.of(), Map.of("p", new SourcePosition("p", "1")), 0));
            try (MergeApplier other = new MergeApplier(config)) {
                other.claim("");
            }
            assertThatThrownBy(() -> again.apply(new Batch(List.of(), Map.of("p", new SourcePosition("p", "2")), 0))).isInstanceOf(WriterFencedException.class);
        }
    }

    @Test
    void partitionsAreFencedOneByOne()
            throws SQLException
    {
        SinkConfig config = config("partitioned_sink");
        try (MergeApplier taskA = new MergeApplier(config); MergeApplier taskB = new MergeApplier(config)) {
            taskA.claim("topic-0");
            taskA.claim("topic-1");
            // a rebalance gives topic-1 to task B while task A, paused, still has a batch of it
            taskB.claim("topic-1");
            assertThatThrownBy(() -> taskA.apply(new Batch(List.of(), Map.of("topic-1", new SourcePosition("topic-1", "7")), 0)))
                    .isInstanceOf(WriterFencedException.class)
                    .satisfies(e -> assertThat(((WriterFencedException) e).fence()).isEqualTo("topic-1"));
            // once task A is told (close), it keeps writing the partition it still owns
            taskA.release("topic-1");
            taskA.apply(new Batch(List.of(), Map.of("topic-0", new SourcePosition("topic-0", "5")), 0));
            taskB.apply(new Batch(List.of(), Map.of("topic-1", new SourcePosition("topic-1", "9")), 0));
            assertThat(taskA.committedPositions()).containsOnlyKeys("topic-0", "topic-1");
            assertThat(taskA.committedPositions().get("topic-1").offset()).isEqualTo("9");
        }
    }
}
