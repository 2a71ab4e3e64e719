package io.pgsink.connector.standalone.engine;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class PostgresTextConverterTest
{
    private final PostgresTextConverter converter = new PostgresTextConverter();

    /**
     * Streamed, Debezium parses a timestamp's text into an {@code Instant}; the converter prints
     * it back as PostgreSQL does ({@code DateStyle=ISO}), so a streamed value and the same value
     * read by a snapshot (as text) are the same string.
     */
    @Test
    void streamedTimestampsBecomeThePostgresText()
    {
        assertThat(converter.timestampText(utc(LocalDateTime.of(294276, 12, 31, 23, 59, 59, 999_999_000))))
                .isEqualTo("294276-12-31 23:59:59.999999");
        assertThat(converter.timestampText(utc(LocalDateTime.of(294270, 6, 1, 0, 0))))
                .isEqualTo("294270-06-01 00:00:00");
        assertThat(converter.timestampText(utc(LocalDateTime.of(-4713, 11, 24, 0, 0))))
                .isEqualTo("4714-11-24 00:00:00 BC");
        assertThat(converter.timestampText(utc(LocalDateTime.of(-4712, 1, 1, 12, 34, 56, 789_000_000))))
                .isEqualTo("4713-01-01 12:34:56.789 BC");
        assertThat(converter.timestampText(utc(LocalDateTime.of(0, 1, 1, 0, 0)))).isEqualTo("0001-01-01 00:00:00 BC");
        assertThat(converter.timestampText(utc(LocalDateTime.of(1, 1, 1, 0, 0, 0, 500_000_000))))
                .isEqualTo("0001-01-01 00:00:00.5");
        assertThat(converter.timestampText(utc(LocalDateTime.of(1969, 12, 31, 23, 59, 59, 10_000))))
                .isEqualTo("1969-12-31 23:59:59.00001");
    }

    /** Debezium parses {@code infinity} into pgjdbc's sentinel read as microseconds ({@code toInstantFromMicros}). */
    @Test
    void infinitiesStayInfinite()
    {
        assertThat(converter.timestampText(debeziumInstant(9223372036825200000L))).isEqualTo("infinity");
        assertThat(converter.timestampText(debeziumInstant(-9223372036832400000L))).isEqualTo("-infinity");
        // the positive sentinel is also a timestamp PostgreSQL has, which Debezium's Instant cannot tell from infinity
        assertThat(converter.timestampText(utc(LocalDateTime.of(294247, 1, 10, 4, 0, 25, 200_000_000))))
                .isEqualTo("infinity");
        assertThat(converter.timestampText(utc(LocalDateTime.of(294247, 1, 10, 4, 0, 25, 200_001_000))))
                .isEqualTo("294247-01-10 04:00:25.200001");
        // a column default, parsed by pgjdbc
        assertThat(converter.timestampText(OffsetDateTime.MAX)).isEqualTo("infinity");
        assertThat(converter.timestampText(OffsetDateTime.MIN)).isEqualTo("-infinity");
        assertThat(converter.timestampText(OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 0, ZoneOffset.UTC)))
                .isEqualTo("2024-01-02 03:04:05");
        // a snapshot reads the text
        assertThat(converter.timestampText("4714-11-24 00:00:00 BC")).isEqualTo("4714-11-24 00:00:00 BC");
        assertThat(converter.timestampText("infinity")).isEqualTo("infinity");
    }

    private static Instant utc(LocalDateTime timestamp)
    {
        return timestamp.toInstant(ZoneOffset.UTC);
    }

    private static Instant debeziumInstant(long micros)
    {
        return Instant.ofEpochSecond(TimeUnit.MICROSECONDS.toSeconds(micros),
                TimeUnit.MICROSECONDS.toNanos(micros % 1_000_000));
    }
}
