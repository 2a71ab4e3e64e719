package io.pgsink.connector.kafka;

import io.pgsink.core.change.SourcePosition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.sink.SinkRecord;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Reads the records of a {@code put} on a thread of its own, ahead of the task's thread, which
 * takes their events in the records' order and does everything else as before (positions, key
 * changes, the buffer, flushes, the errant-record reporter): reading (the JSON of
 * {@code record.format=debezium-json}, the mapping) was most of the task thread's time of a put
 * (issue #29), and the two now overlap. Only the reading moves: its failures are kept with the
 * record and thrown, or reported, when the task's thread takes it, so what a put applies, skips or
 * fails on is what it was.
 *
 * <p>The records are read in chunks, in order, by one thread, so the {@link RecordReader} (whose
 * caches are not thread-safe) is only ever used by one thread at a time: every read of a put ends
 * ({@link Batch#close}) before the put returns and before the task's thread reads again.
 *
 * <p>Owned by the task's thread.
 */
final class ReadAhead
        implements AutoCloseable
{
    private static final int CHUNK = 256;

    private final RecordReader reader;
    private final ExecutorService thread;
    /** Per partition of the records read, its name in positions (reading thread only). */
    private final Map<TopicPartition, String> names = new HashMap<>();

    ReadAhead(String name, RecordReader reader)
    {
        this.reader = reader;
        this.thread = Executors.newSingleThreadExecutor(runnable -> {
            Thread reading = new Thread(runnable, "pgsink-" + name + "-reader");
            reading.setDaemon(true);
            return reading;
        });
    }

    /** Starts reading {@code records}; the batch must be closed before the reader is used otherwise. */
    Batch read(List<SinkRecord> records)
    {
        return new Batch(records);
    }

    private SourcePosition position(SinkRecord record)
    {
        TopicPartition partition = new TopicPartition(record.topic(), record.kafkaPartition());
        String name = names.computeIfAbsent(partition, KafkaPositions::partition);
        return KafkaPositions.position(name, record.kafkaOffset());
    }

    @Override
    public void close()
    {
        thread.shutdownNow();
    }

    /** The records of one put being read ahead. */
    final class Batch
            implements AutoCloseable
    {
        private final List<SinkRecord> records;
        private final RecordReader.Decoded[] decoded;
        private final List<CompletableFuture<Void>> chunks = new ArrayList<>();
        private final AtomicBoolean stopped = new AtomicBoolean();

        private Batch(List<SinkRecord> records)
        {
            this.records = records;
            this.decoded = new RecordReader.Decoded[records.size()];
            for (int start = 0; start < records.size(); start += CHUNK) {
                int from = start;
                int to = Math.min(records.size(), start + CHUNK);
                chunks.add(CompletableFuture.runAsync(() -> readChunk(from, to), thread));
            }
        }

        private void readChunk(int from, int to)
        {
            if (names.size() > 10_000) {
                names.clear();
            }
            for (int i = from; i < to && !stopped.get(); i++) {
                SinkRecord record = records.get(i);
                decoded[i] = reader.decode(record, position(record));
            }
        }

        /** What the reader made of record {@code index}, waiting for it to be read. */
        RecordReader.Decoded get(int index)
        {
            CompletableFuture<Void> chunk = chunks.get(index / CHUNK);
            try {
                chunk.join();
            }
            catch (CompletionException e) {
                throw e.getCause() instanceof RuntimeException failure ? failure : e;
            }
            return decoded[index];
        }

        /** Stops reading what is not read yet, and waits until the reading thread is done with this batch. */
        @Override
        public void close()
        {
            stopped.set(true);
            for (CompletableFuture<Void> chunk : chunks) {
                try {
                    chunk.join();
                }
                catch (CompletionException | CancellationException e) {
                    // its failure, if any, was thrown by get
                }
            }
        }
    }
}
