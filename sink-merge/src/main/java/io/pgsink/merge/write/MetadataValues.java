package io.pgsink.merge.write;

import io.pgsink.core.buffer.RowChange;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.config.ChangeMetadata;
import org.jetbrains.annotations.Nullable;

import java.time.Instant;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

/**
 * The values of the metadata columns for a change (see {@link ChangeMetadata.Kind}): its operation
 * code, source commit time, source position as text, the flush's apply time, and its deleted mark.
 *
 * <p>Not thread-safe: owned by the sink's thread; {@link #startFlush} sets the apply time of the
 * flush transaction that follows.
 */
public final class MetadataValues
{
    /** Kafka Connect's positions, {@code <topic>-<partition>} and an offset: {@code orders-3:4711}. */
    public static final Function<SourcePosition, String> PARTITION_AND_OFFSET = position -> position.partition() + ":"
            + position.offset();

    private final Function<SourcePosition, String> positionText;
    private Instant applied = Instant.EPOCH;

    public MetadataValues(Function<SourcePosition, String> positionText)
    {
        this.positionText = requireNonNull(positionText, "positionText is null");
    }

    /** The apply time of the next flush transaction. */
    public void startFlush(Instant applied)
    {
        this.applied = requireNonNull(applied, "applied is null");
    }

    @Nullable
    Object value(ChangeMetadata.Kind kind, RowChange change)
    {
        boolean deleted = change.operation() == Operation.DELETE;
        return switch (kind) {
            case OPERATION -> code(change.operation());
            case SOURCE_TIMESTAMP -> change.sourceTimeMillis() == 0 ? null
                    : Instant.ofEpochMilli(change.sourceTimeMillis());
            case SOURCE_POSITION -> positionText.apply(change.position());
            case APPLIED_TIMESTAMP -> applied;
            case DELETED_FLAG -> deleted;
            case DELETED_TIMESTAMP -> !deleted ? null : change.sourceTimeMillis() == 0 ? applied
                    : Instant.ofEpochMilli(change.sourceTimeMillis());
        };
    }

    /** Debezium's operation codes. */
    static String code(Operation operation)
    {
        return switch (operation) {
            case INSERT -> "c";
            case READ -> "r";
            case UPDATE -> "u";
            case DELETE -> "d";
            case TRUNCATE -> "t";
        };
    }
}
