package io.pgsink.connector.debezium;

import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

class MadeUpDefaultsTest
{
    /** What Debezium 3.x sends for defaults it cannot evaluate, per source type. */
    @Test
    void standInsMayBeMadeUp()
    {
        assertThat(MadeUpDefaults.mayBeMadeUp("timestamptz", OffsetDateTime.of(1970, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC))).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("timestamptz", "1970-01-01T00:00:00Z")).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("timestamp", LocalDateTime.of(1970, 1, 1, 0, 0))).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("timestamp(3)", Instant.EPOCH)).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("date", LocalDate.EPOCH)).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("time", LocalTime.MIDNIGHT)).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("uuid", "00000000-0000-0000-0000-000000000000")).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("jsonb", "{}")).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("xml", "")).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("interval", "PT0S")).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("text", "CURRENT_USER")).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("varchar(20)", "session_user")).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("text", "md5((random())::text)")).isTrue();
        assertThat(MadeUpDefaults.mayBeMadeUp("text", "'a'::text || 'b'::text")).isTrue();
    }

    @Test
    void otherConstantsAreKnown()
    {
        assertThat(MadeUpDefaults.mayBeMadeUp("timestamptz", OffsetDateTime.of(2024, 2, 29, 10, 0, 0, 0, ZoneOffset.UTC))).isFalse();
        assertThat(MadeUpDefaults.mayBeMadeUp("date", LocalDate.of(2024, 2, 29))).isFalse();
        assertThat(MadeUpDefaults.mayBeMadeUp("uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")).isFalse();
        assertThat(MadeUpDefaults.mayBeMadeUp("jsonb", "{\"a\": 1}")).isFalse();
        assertThat(MadeUpDefaults.mayBeMadeUp("interval", "P1D")).isFalse();
        assertThat(MadeUpDefaults.mayBeMadeUp("text", "it's")).isFalse();
        assertThat(MadeUpDefaults.mayBeMadeUp("text", "")).isFalse();
        assertThat(MadeUpDefaults.mayBeMadeUp("int4", 0)).isFalse();
        assertThat(MadeUpDefaults.mayBeMadeUp("numeric(8,3)", new BigDecimal("12.5"))).isFalse();
        assertThat(MadeUpDefaults.mayBeMadeUp("bool", true)).isFalse();
        assertThat(MadeUpDefaults.mayBeMadeUp("", "CURRENT_USER")).isFalse();
    }
}
