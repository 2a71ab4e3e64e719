package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;
import io.pgsink.copy.write.ValueEncodingException;

import static java.util.Objects.requireNonNull;

/**
 * Base of the built-in encoders: each appends the PostgreSQL text form of a value, which serves
 * both as a CSV field and as an element of an array literal. A {@link String} is taken as the text
 * form already and written as is.
 */
abstract class TextFormEncoder
        implements ValueEncoder
{
    private final String typeName;

    TextFormEncoder(String typeName)
    {
        this.typeName = requireNonNull(typeName, "typeName is null");
    }

    final String typeName()
    {
        return typeName;
    }

    @Override
    public void encode(Object value, CsvWriter out)
    {
        if (value instanceof String text) {
            out.writeText(text);
            return;
        }
        out.beginField();
        appendValue(value, out);
        out.endField();
    }

    /** Appends the text form of an array element; the caller quotes it for the array literal. */
    final void appendElement(Object value, CsvWriter out)
    {
        if (value instanceof String text) {
            out.appendText(text);
        }
        else {
            appendValue(value, out);
        }
    }

    /**
     * Appends the text form of {@code value}, which is not a {@link String}, to the field being
     * composed.
     *
     * @throws ValueEncodingException for a Java class the type does not accept, see {@link #unsupported}
     */
    abstract void appendValue(Object value, CsvWriter out);

    final ValueEncodingException unsupported(Object value)
    {
        return new ValueEncodingException("cannot encode " + value.getClass().getName() + " as PostgreSQL type "
                + typeName);
    }

    @Override
    public String toString()
    {
        return getClass().getSimpleName() + "[" + typeName + "]";
    }
}
