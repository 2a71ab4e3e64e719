package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;
import io.pgsink.copy.write.ValueEncodingException;

/**
 * Pieces of PostgreSQL's ISO date/time text form, appended without allocating.
 *
 * <p>Years: java.time counts a year 0 (proleptic ISO), PostgreSQL does not: ISO year 0 is 1 BC,
 * year -1 is 2 BC, written {@code 0001-01-01 BC}. Years past 9999 are written with all their digits
 * and no sign. Fractions: PostgreSQL keeps microseconds; a value with a non-zero part below the
 * microsecond is refused instead of silently rounded.
 */
public final class DateTimeText
{
    private static final int SECONDS_PER_DAY = 86_400;

    private DateTimeText() {}

    /**
     * Appends {@code YYYY-MM-DD} for an ISO year.
     *
     * @return whether the date is BC, so that the caller appends {@link #appendBc} after the rest
     */
    static boolean appendDate(CsvWriter out, long isoYear, int month, int day)
    {
        boolean bc = isoYear <= 0;
        out.appendDigits(bc ? 1 - isoYear : isoYear, 4);
        out.appendAscii('-');
        out.appendDigits(month, 2);
        out.appendAscii('-');
        out.appendDigits(day, 2);
        return bc;
    }

    static void appendBc(CsvWriter out)
    {
        out.appendAscii(" BC");
    }

    /** Appends {@code HH:MM:SS} and, when not zero, the microseconds without trailing zeros. */
    static void appendTime(CsvWriter out, int hour, int minute, int second, int nano, String typeName)
    {
        checkMicroseconds(nano, typeName);
        out.appendDigits(hour, 2);
        out.appendAscii(':');
        out.appendDigits(minute, 2);
        out.appendAscii(':');
        out.appendDigits(second, 2);
        int micros = nano / 1000;
        if (micros != 0) {
            int width = 6;
            while (micros % 10 == 0) {
                micros /= 10;
                width--;
            }
            out.appendAscii('.');
            out.appendDigits(micros, width);
        }
    }

    /** Appends a UTC offset as {@code +HH:MM}, with {@code :SS} when it has seconds. */
    static void appendOffset(CsvWriter out, int totalSeconds)
    {
        out.appendAscii(totalSeconds < 0 ? '-' : '+');
        int seconds = Math.abs(totalSeconds);
        out.appendDigits(seconds / 3600, 2);
        out.appendAscii(':');
        out.appendDigits((seconds / 60) % 60, 2);
        if (seconds % 60 != 0) {
            out.appendAscii(':');
            out.appendDigits(seconds % 60, 2);
        }
    }

    /** Appends an instant as a UTC timestamp with zone, {@code YYYY-MM-DD HH:MM:SS[.ffffff]+00:00[ BC]}. */
    static void appendInstant(CsvWriter out, long epochSecond, int nano, String typeName)
    {
        checkMicroseconds(nano, typeName);
        long days = Math.floorDiv(epochSecond, SECONDS_PER_DAY);
        int secondOfDay = Math.floorMod(epochSecond, SECONDS_PER_DAY);
        long civil = civilFromDays(days);
        boolean bc = appendDate(out, civilYear(civil), civilMonth(civil), civilDay(civil));
        out.appendAscii(' ');
        appendTime(out, secondOfDay / 3600, (secondOfDay / 60) % 60, secondOfDay % 60, nano, typeName);
        appendOffset(out, 0);
        if (bc) {
            appendBc(out);
        }
    }

    /**
     * Converts days since 1970-01-01 to a proleptic Gregorian date, packed as
     * {@code year << 9 | month << 5 | day} to avoid allocating (H. Hinnant's civil_from_days).
     */
    static long civilFromDays(long epochDay)
    {
        long z = epochDay + 719_468;
        long era = Math.floorDiv(z, 146_097);
        long dayOfEra = z - era * 146_097;
        long yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365;
        long dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
        long shiftedMonth = (5 * dayOfYear + 2) / 153;
        long day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1;
        long month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
        long year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
        return (year << 9) | (month << 5) | day;
    }

    static long civilYear(long civil)
    {
        return civil >> 9;
    }

    static int civilMonth(long civil)
    {
        return (int) ((civil >> 5) & 0xF);
    }

    static int civilDay(long civil)
    {
        return (int) (civil & 0x1F);
    }

    public static void checkMicroseconds(int nano, String typeName)
    {
        if (nano % 1000 != 0) {
            throw new ValueEncodingException(typeName + " value has nanosecond precision, but PostgreSQL keeps "
                    + "microseconds; "
                    + "pgsink does not round silently");
        }
    }
}
