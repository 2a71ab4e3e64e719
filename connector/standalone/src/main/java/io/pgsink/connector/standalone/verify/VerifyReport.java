package io.pgsink.connector.standalone.verify;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

import static java.util.Objects.requireNonNull;

/**
 * What {@code pgsink verify} found: a verdict per table and a summary, as text for people and JSON
 * for programs. Keys only, never other values.
 *
 * @param recheck how the differences were confirmed (the sink's position and the source's), for the summary
 */
public record VerifyReport(List<TableReport> tables, long elapsedMillis, String recheck)
{
    private static final ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    public VerifyReport
    {
        tables = List.copyOf(tables);
        requireNonNull(recheck, "recheck is null");
    }

    public boolean equal()
    {
        return tables.stream().allMatch(TableReport::equal);
    }

    public long differences()
    {
        return tables.stream().mapToLong(TableReport::differences).sum();
    }

    /** One line per table, the differing keys below it, then a summary line. */
    public List<String> lines()
    {
        List<String> lines = new ArrayList<>();
        for (TableReport table : tables) {
            String counts = table.sourceRows() + " source rows, " + table.targetRows() + " target rows, "
                    + table.chunks()
                    + (table.chunks() == 1 ? " chunk" : " chunks");
            if (table.equal()) {
                lines.add("[ EQUAL ] " + table.table().describe() + ": " + counts);
                continue;
            }
            lines.add("[DIFFERS] " + table.table().describe() + ": " + table.differences()
                    + (table.differences() == 1 ? " key differs" : " keys differ")
                    + " (missing " + table.count(Difference.Kind.MISSING) + ", extra "
                    + table.count(Difference.Kind.EXTRA)
                    + ", different " + table.count(Difference.Kind.DIFFERENT)
                    + (table.count(Difference.Kind.MISPLACED) > 0
                    ? ", misplaced " + table.count(Difference.Kind.MISPLACED) : "") + "); " + counts);
            for (Difference.Kind kind : Difference.Kind.values()) {
                List<List<String>> keys = table.keys(kind);
                long unlisted = table.unlisted().getOrDefault(kind, 0L);
                if (!keys.isEmpty() || unlisted > 0) {
                    StringJoiner shown = new StringJoiner(", ");
                    keys.forEach(key -> shown.add(keyText(table.table().keyNames(), key)));
                    String more = unlisted > 0 ? (keys.isEmpty() ? "" : ", ") + "and " + unlisted + " more" : "";
                    lines.add("    " + kind.name().toLowerCase(Locale.ROOT) + ": " + shown + more);
                }
            }
        }
        long differing = tables.stream().filter(table -> !table.equal()).count();
        long rows = tables.stream().mapToLong(TableReport::sourceRows).sum();
        lines.add("pgsink verify: " + tables.size() + (tables.size() == 1 ? " table, " : " tables, ")
                + (tables.size() - differing)
                + " equal, " + differing + " differing (" + differences()
                + (differences() == 1 ? " key" : " keys") + "); " + rows
                + " source rows compared in " + elapsedMillis + " ms" + (recheck.isEmpty() ? "" : "; " + recheck));
        return lines;
    }

    /** {@code (id, line)=(5, 2)}, as PostgreSQL names a key. */
    static String keyText(List<String> names, List<String> values)
    {
        return "(" + String.join(", ", names) + ")=(" + String.join(", ", values) + ")";
    }

    /** The report as a JSON document. */
    public String json()
    {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("equal", equal());
        document.put("differences", differences());
        document.put("elapsedMillis", elapsedMillis);
        document.put("recheck", recheck);
        List<Map<String, Object>> tableList = new ArrayList<>();
        for (TableReport table : tables) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("source", table.table().sourceTable().toString());
            entry.put("target", table.table().targetTable().toString());
            entry.put("equal", table.equal());
            entry.put("sourceRows", table.sourceRows());
            entry.put("targetRows", table.targetRows());
            entry.put("chunks", table.chunks());
            entry.put("elapsedMillis", table.elapsedMillis());
            entry.put("keyColumns", table.table().keyNames());
            for (Difference.Kind kind : Difference.Kind.values()) {
                String name = kind.name().toLowerCase(Locale.ROOT);
                entry.put(name + "Count", table.count(kind));
                entry.put(name, table.keys(kind));
            }
            tableList.add(entry);
        }
        document.put("tables", tableList);
        try {
            return MAPPER.writeValueAsString(document);
        }
        catch (JsonProcessingException e) {
            throw new IllegalStateException("Cannot write the verify report as JSON: " + e.getOriginalMessage(), e);
        }
    }
}
