package io.pgsink.merge.schema;

import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.SourceAttribute;
import io.pgsink.core.change.SourceColumns;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.table.Statements;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;
import org.jetbrains.annotations.Nullable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;

/**
 * Tells a renamed source column from a dropped and an added one. Change events name columns, so a
 * rename looks like a column gone and a column new; the source catalog tells them apart: a renamed
 * column keeps its attribute number, a dropped one is marked dropped, an added one gets a new
 * number. So the numbers of a table's columns are recorded with each schema version
 * ({@link #numbers}), and when a later
 * version lacks columns of the recorded one and has columns the target lacks, the recorded numbers
 * are looked up in the catalog ({@link #detect}).
 *
 * <p>Where that cannot tell (no catalog, as in Kafka Connect; no recorded version, as for the first
 * schema seen after a start; the source changed again since), the sink stops naming the columns and
 * both ways to go on, rather than guess: a wrong guess would leave the target different from the
 * source without a word.
 */
final class ColumnRenames
{
    private ColumnRenames() {}

    /**
     * What the sink knows of a table's columns before a new schema version: the columns of the
     * version it applied last (null when it applied none since it started) and the attribute numbers
     * the catalog gave them ({@link #numbers}).
     */
    record Recorded(@Nullable List<String> columns, Map<String, Integer> numbers, int highestNumber)
    {
        static Recorded of(TableSchema schema, Optional<List<SourceAttribute>> catalog)
        {
            return new Recorded(schema.columnNames(),
                    catalog.map(attributes -> ColumnRenames.numbers(schema.columnNames(), attributes)).orElse(Map.of()),
                    0);
        }

        /**
         * The catalog as the sink started: its numbers, but not the columns of the version the next
         * change has, which may be older (the stream resumes from a stored position).
         */
        static Recorded initial(List<SourceAttribute> catalog)
        {
            List<String> columns = catalog.stream().filter(attribute -> !attribute.dropped()).map(SourceAttribute::name)
                    .toList();
            return new Recorded(null, ColumnRenames.numbers(columns, catalog),
                    catalog.stream().mapToInt(SourceAttribute::number).max().orElse(0));
        }
    }

    /**
     * The attribute number of each column of {@code schema} the catalog still shows under its name
     * (the catalog is read later than the schema's changes were made; a column renamed or dropped
     * since has none).
     */
    static Map<String, Integer> numbers(List<String> columns, List<SourceAttribute> catalog)
    {
        Map<String, Integer> numbers = new HashMap<>();
        for (SourceAttribute attribute : catalog) {
            if (!attribute.dropped() && columns.contains(attribute.name())) {
                numbers.put(attribute.name(), attribute.number());
            }
        }
        return numbers;
    }

    /**
     * The renames, old name to new, that turn the target's columns into {@code current}'s; empty
     * when no column of the target went missing from the source while another appeared.
     *
     * @param recorded the version planned and committed before, or the one the sink started with,
     *         or null when neither is known
     * @throws SinkException ({@link ErrorCode#SCHEMA_MISMATCH}) when a rename cannot be told from a drop and an add
     */
    static Map<String, String> detect(@Nullable Recorded recorded, TableSchema current, TargetTable target,
            SourceColumns catalog)
    {
        return detect(recorded, current, target, catalog, column -> false);
    }

    /**
     * As {@link #detect(Recorded, TableSchema, TargetTable, SourceColumns)}, where {@code notFromSource}
     * tells the target columns that no source column of the sink's is written to: the change-metadata
     * columns the sink writes itself, and columns the column selection leaves out. They are never
     * columns that went missing from the source.
     */
    static Map<String, String> detect(@Nullable Recorded recorded, TableSchema current, TargetTable target,
            SourceColumns catalog, Predicate<String> notFromSource)
    {
        List<String> appeared = new ArrayList<>();
        for (ColumnSchema column : current.columns()) {
            if (target.column(column.name()).isEmpty()) {
                appeared.add(column.name());
            }
        }
        if (appeared.isEmpty()) {
            return Map.of();
        }
        // target columns the source had before and lacks now: dropped, or renamed to one of appeared
        List<String> vanished = new ArrayList<>();
        for (TargetColumn column : target.columns()) {
            if (current.columnIndex(column.name()).isEmpty() && !notFromSource.test(column.name())
                    && (recorded == null || recorded.columns() == null || recorded.columns().contains(column.name()))) {
                vanished.add(column.name());
            }
        }
        if (vanished.isEmpty()) {
            return Map.of();
        }
        if (recorded == null) {
            throw ambiguous(current, target, vanished, appeared, "pgsink saw no earlier version of the table since it "
                    + "started and has no source catalog to ask");
        }
        Optional<List<SourceAttribute>> attributes = catalog.read(current.table());
        if (attributes.isEmpty()) {
            throw ambiguous(current, target, vanished, appeared, "the source catalog cannot be read (a Kafka Connect "
                    + "sink has only its records)");
        }
        Map<Integer, SourceAttribute> byNumber = new HashMap<>();
        for (SourceAttribute attribute : attributes.get()) {
            byNumber.put(attribute.number(), attribute);
            if (recorded.columns() == null && attribute.number() > recorded.highestNumber()) {
                // numbered after every column the table had when the sink started: added since, not renamed
                appeared.remove(attribute.name());
            }
        }
        if (appeared.isEmpty()) {
            return Map.of();
        }
        Map<String, String> renames = new LinkedHashMap<>();
        boolean unknownBefore = false;
        for (String old : vanished) {
            Integer number = recorded.numbers().get(old);
            if (number == null && recorded.columns() == null) {
                // not a source column when the sink started: in the target only, or renamed or dropped before
                unknownBefore = true;
                continue;
            }
            if (number == null) {
                throw ambiguous(current, target, vanished, appeared, "the source catalog had changed again when the "
                        + "version with column " + old + " was read");
            }
            SourceAttribute now = byNumber.get(number);
            if (now != null && now.dropped()) {
                continue;
            }
            if (now == null || !appeared.contains(now.name())) {
                throw ambiguous(current, target, vanished, appeared, "the source catalog changed again since (column "
                        + old + " is neither dropped nor one of them there now)");
            }
            renames.put(old, now.name());
        }
        if (unknownBefore && !renames.values().containsAll(appeared)) {
            throw ambiguous(current, target, vanished, appeared, "pgsink does not know which columns the source had "
                    + "before (the change happened while it was stopped, or a column is in the target only)");
        }
        return renames;
    }

    /** {@code ALTER TABLE ... RENAME COLUMN} for each rename. */
    static List<String> statements(TargetTable target, Map<String, String> renames)
    {
        List<String> statements = new ArrayList<>();
        renames.forEach((old, renamed) ->
                statements.add("ALTER TABLE " + Statements.qualified(target.id()) + " RENAME COLUMN " + quote(old)
                        + " TO " + quote(renamed)));
        return statements;
    }

    /** The target as it is once the renames ran. */
    static TargetTable renamed(TargetTable target, Map<String, String> renames)
    {
        List<TargetColumn> columns = target.columns().stream()
                .map(column ->
                        new TargetColumn(renames.getOrDefault(column.name(), column.name()), column.declaredType(),
                                column.encodingType(), column.notNull(), column.generated(), column.identityAlways()))
                .toList();
        return new TargetTable(target.id(), columns, rename(target.primaryKey(), renames),
                rename(target.distributionKey(), renames), target.updatable(), target.appendOptimized(),
                target.uniqueIndexes());
    }

    private static List<String> rename(List<String> names, Map<String, String> renames)
    {
        return names.stream().map(name -> renames.getOrDefault(name, name)).toList();
    }

    private static SinkException ambiguous(TableSchema current, TargetTable target, List<String> vanished,
            List<String> appeared, String reason)
    {
        return new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot tell whether column(s) " + appeared + " of "
                + current.table() + " are column(s) " + vanished
                + " of " + target.id() + " renamed on the source, or were added while those were dropped: " + reason
                + "."
                + " If renamed, rename them in the target (ALTER TABLE " + target.id()
                + " RENAME COLUMN ... TO ...); if not, add them to the target yourself"
                + " (ALTER TABLE " + target.id() + " ADD COLUMN ...); then restart.");
    }
}
