package io.pgsink.connector.debezium;

import org.junit.jupiter.api.Test;

import java.time.OffsetDateTime;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class TemporalConvertersTest
{
    @Test
    void readsDebeziumTimestampsWithTimeZoneAsOffsetDateTimeParseDoes()
    {
        List<String> texts = List.of("2026-01-01T00:00:00Z", "2026-11-27T23:59:59.9Z", "2024-02-29T12:34:56.123456Z",
                "0001-01-01T00:00:00.000000001Z", "9999-12-31T23:59:59.999999999Z", "1970-01-01T00:00:00.10Z");
        for (String text : texts) {
            assertThat(TemporalConverters.utcTimestamp(text)).as(text).isEqualTo(OffsetDateTime.parse(text));
            assertThat(TemporalConverters.ZONED_TIMESTAMP_TEXT.convert(text)).as(text)
                    .isEqualTo(OffsetDateTime.parse(text));
        }
    }

    @Test
    void leavesOtherFormsToOffsetDateTimeParse()
    {
        // other offsets, years beyond four digits, no seconds, an empty or too long fraction, invalid dates and times
        List<String> others = List.of("2026-01-01T00:00:00+01:00", "+10000-01-01T00:00:00Z", "2026-01-01T00:00Z",
                "2026-01-01T00:00:00.Z",
                "2026-01-01T00:00:00.1234567890Z", "2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z",
                        "2026-01-01T00:00:60Z", "2026-01-01 00:00:00Z",
                "2026-0a-01T00:00:00Z", "infinity");
        for (String text : others) {
            assertThat(TemporalConverters.utcTimestamp(text)).as(text).isNull();
        }
        assertThat(TemporalConverters.ZONED_TIMESTAMP_TEXT.convert("2026-01-01T00:00:00+01:00"))
                .isEqualTo(OffsetDateTime.parse("2026-01-01T00:00:00+01:00"));
        assertThat(TemporalConverters.ZONED_TIMESTAMP_TEXT.convert("infinity")).isEqualTo("infinity");
    }
}
