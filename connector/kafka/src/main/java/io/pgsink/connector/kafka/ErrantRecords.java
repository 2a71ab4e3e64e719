package io.pgsink.connector.kafka;

import io.pgsink.core.buffer.RejectedRow;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

/**
 * Under {@code errors.tolerance=all} with Connect's errant-record reporter (the dead-letter queue):
 * keeps the records behind the buffered events, so that a row the target refuses is reported with
 * its original record, and reports records, waiting until Connect has them, so that they are in
 * the dead-letter queue before their positions are stored. Owned by the task's thread: the task
 * does not pipeline its flushes when it reports to Connect (see {@code PgsinkSinkTask#flushPolicy}),
 * so a batch is applied, and its refused rows reported, before it is handed off.
 */
final class ErrantRecords
{
    private final String name;
    private final ErrantRecordReporter reporter;
    /** The partition a position names, for a record not kept; null when the task does not own it. */
    private final Function<String, TopicPartition> partitions;
    /** Records behind the buffered events. */
    private final Map<SourcePosition, SinkRecord> buffered = new HashMap<>();

    ErrantRecords(String name, ErrantRecordReporter reporter, Function<String, TopicPartition> partitions)
    {
        this.name = requireNonNull(name, "name is null");
        this.reporter = requireNonNull(reporter, "reporter is null");
        this.partitions = requireNonNull(partitions, "partitions is null");
    }

    void keep(SourcePosition position, SinkRecord record)
    {
        buffered.put(position, record);
    }

    void forget(SourcePosition position)
    {
        buffered.remove(position);
    }

    /** The buffer was emptied into a batch, which was applied first, or dropped. */
    void clear()
    {
        buffered.clear();
    }

    /** Reports the records of rows the target refused; called in the flush transaction, before it commits. */
    void reportRejected(List<RejectedRow> rows)
    {
        List<SinkRecord> records = new ArrayList<>(rows.size());
        List<Throwable> errors = new ArrayList<>(rows.size());
        for (RejectedRow row : rows) {
            SourcePosition position = row.change().position();
            SinkRecord record = buffered.get(position);
            if (record == null) {
                // not kept (cannot happen for rows of this task's records): report where it was
                TopicPartition partition = partitions.apply(position.partition());
                if (partition == null) {
                    partition = KafkaPositions.parsePartition(position.partition())
                            .orElse(new TopicPartition(position.partition(), 0));
                }
                record = new SinkRecord(partition.topic(), partition.partition(), null, null, null, null,
                        Long.parseLong(position.offset()));
            }
            records.add(record);
            errors.add(new SinkException(ErrorCode.DATA, "Cannot write a row of " + row.describe()));
        }
        report(records, errors);
    }

    /** Reports records and waits until Connect has them. */
    void report(List<SinkRecord> records, List<? extends Throwable> errors)
    {
        List<Future<Void>> sent = new ArrayList<>(records.size());
        for (int i = 0; i < records.size(); i++) {
            sent.add(reporter.report(records.get(i), errors.get(i)));
        }
        for (int i = 0; i < sent.size(); i++) {
            SinkRecord record = records.get(i);
            try {
                sent.get(i).get();
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ConnectException(name + " - interrupted while reporting the record of topic " + record.topic()
                        + " partition " + record.kafkaPartition()
                        + " at offset " + record.kafkaOffset(), e);
            }
            catch (ExecutionException e) {
                throw new ConnectException(name + " - cannot report the record of topic " + record.topic()
                        + " partition " + record.kafkaPartition()
                        + " at offset " + record.kafkaOffset() + " to the errant-record reporter: "
                        + e.getCause().getMessage(), e.getCause());
            }
        }
    }
}
