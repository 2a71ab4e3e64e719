package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;

import java.time.LocalDate;

/** date: {@link LocalDate}. Infinite dates arrive as the strings {@code infinity}/{@code -infinity}. */
final class DateEncoder
        extends TextFormEncoder
{
    DateEncoder(String typeName)
    {
        super(typeName);
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (!(value instanceof LocalDate date)) {
            throw unsupported(value);
        }
        if (DateTimeText.appendDate(out, date.getYear(), date.getMonthValue(), date.getDayOfMonth())) {
            DateTimeText.appendBc(out);
        }
    }
}
