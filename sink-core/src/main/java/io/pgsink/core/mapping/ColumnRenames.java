package io.pgsink.core.mapping;

import io.pgsink.core.change.TableId;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * A {@code column.rename} map: comma-separated entries {@code schema.table.column:new_name}, each
 * naming one source column exactly (case matters, no expressions) and the target column it is
 * written to. Names containing {@code .}, {@code ,} or {@code :} cannot be written here.
 *
 * <p>Immutable.
 */
public final class ColumnRenames
{
    public static final ColumnRenames NONE = new ColumnRenames(List.of());

    /** One entry: the source column and its target name. */
    public record Rename(TableId table, String column, String newName)
    {
        public Rename
        {
            requireNonNull(table, "table is null");
            requireNonNull(column, "column is null");
            requireNonNull(newName, "newName is null");
        }

        @Override
        public String toString()
        {
            return table.schema() + "." + table.table() + "." + column + ":" + newName;
        }
    }

    private final List<Rename> renames;

    private ColumnRenames(List<Rename> renames)
    {
        this.renames = List.copyOf(renames);
    }

    /**
     * @throws IllegalArgumentException naming every entry that is not {@code schema.table.column:new_name}
     */
    public static ColumnRenames parse(String text)
    {
        requireNonNull(text, "text is null");
        List<Rename> renames = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        Map<String, String> seen = new LinkedHashMap<>();
        for (String part : text.split(",")) {
            String entry = part.trim();
            if (entry.isEmpty()) {
                continue;
            }
            int colon = entry.indexOf(':');
            String[] names = colon < 0 ? new String[0] : entry.substring(0, colon).split("\\.", -1);
            String newName = colon < 0 ? "" : entry.substring(colon + 1).trim();
            if (names.length != 3 || names[0].isBlank() || names[1].isBlank() || names[2].isBlank() || newName.isEmpty()
                    || newName.indexOf(':') >= 0) {
                problems.add("'" + entry + "' is not schema.table.column:new_name");
                continue;
            }
            String qualified = entry.substring(0, colon);
            if (seen.put(qualified, newName) != null) {
                problems.add(qualified + " is renamed twice");
                continue;
            }
            renames.add(new Rename(TableId.of(names[0].trim(), names[1].trim()), names[2].trim(), newName));
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems));
        }
        return new ColumnRenames(renames);
    }

    public boolean isEmpty()
    {
        return renames.isEmpty();
    }

    public List<Rename> entries()
    {
        return renames;
    }

    /** The entries for columns of {@code table}. */
    public List<Rename> of(TableId table)
    {
        return renames.stream().filter(rename -> rename.table().equals(table)).toList();
    }

    /** The target name of column {@code column} of {@code table}, when renamed. */
    public Optional<String> newName(TableId table, String column)
    {
        for (Rename rename : renames) {
            if (rename.column().equals(column) && rename.table().equals(table)) {
                return Optional.of(rename.newName());
            }
        }
        return Optional.empty();
    }

    @Override
    public String toString()
    {
        List<String> texts = new ArrayList<>();
        renames.forEach(rename -> texts.add(rename.toString()));
        return String.join(",", texts);
    }
}
