package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;
import io.pgsink.copy.write.ValueEncodingException;

import java.util.List;
import java.util.RandomAccess;

import static java.util.Objects.requireNonNull;

/**
 * Arrays ({@code _int4}, {@code _text}, ...): a {@link List} of element values, written as an array
 * literal such as {@code {1,2,"a b",NULL}}. Null elements are {@code NULL}; nested lists are the
 * sub-arrays of a multi-dimensional array, {@code {{1,2},{3,4}}} (PostgreSQL rejects ragged ones).
 * Each element is encoded by the element type's encoder and quoted for {@code array_in} where
 * needed; the whole literal then goes through CSV quoting like any field. A String is taken as an
 * array literal already.
 */
final class ArrayEncoder
        extends TextFormEncoder
{
    /** PostgreSQL's MAXDIM. */
    private static final int MAX_DIMENSIONS = 6;

    private final TextFormEncoder elementEncoder;
    private final char delimiter;

    /**
     * @param delimiter {@code pg_type.typdelim} of the element type: {@code ;} for box, {@code ,} for all
     *         other built-in types
     */
    ArrayEncoder(String typeName, TextFormEncoder elementEncoder, char delimiter)
    {
        super(typeName);
        this.elementEncoder = requireNonNull(elementEncoder, "elementEncoder is null");
        this.delimiter = delimiter;
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (!(value instanceof List<?> list)) {
            throw unsupported(value);
        }
        appendArray(list, out, 1);
    }

    private void appendArray(List<?> list, CsvWriter out, int dimension)
    {
        if (dimension > MAX_DIMENSIONS) {
            throw new ValueEncodingException("array of PostgreSQL type " + typeName() + " has more than "
                    + MAX_DIMENSIONS + " dimensions");
        }
        out.appendAscii('{');
        if (list instanceof RandomAccess) {
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) {
                    out.appendAscii(delimiter);
                }
                appendElement(list.get(i), out, dimension);
            }
        }
        else {
            boolean first = true;
            for (Object element : list) {
                if (!first) {
                    out.appendAscii(delimiter);
                }
                first = false;
                appendElement(element, out, dimension);
            }
        }
        out.appendAscii('}');
    }

    private void appendElement(Object element, CsvWriter out, int dimension)
    {
        if (element == null) {
            out.appendArrayNull();
        }
        else if (element instanceof List<?> nested) {
            appendArray(nested, out, dimension + 1);
        }
        else {
            out.beginArrayElement();
            elementEncoder.appendElement(element, out);
            out.endArrayElement();
        }
    }
}
