package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;

/**
 * text, varchar, bpchar, name, json, jsonb, xml, citext, and every type pgsink has no encoder for
 * (enums, domains over text...): the value must be a {@link CharSequence} holding the text form.
 * Numbers and other objects are refused rather than written with {@code toString()}, whose form
 * is nobody's contract.
 */
final class TextEncoder
        extends TextFormEncoder
{
    TextEncoder(String typeName)
    {
        super(typeName);
    }

    @Override
    public void encode(Object value, CsvWriter out)
    {
        if (value instanceof CharSequence text) {
            out.writeText(text);
            return;
        }
        throw unsupported(value);
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (value instanceof CharSequence text) {
            out.appendText(text);
            return;
        }
        throw unsupported(value);
    }
}
