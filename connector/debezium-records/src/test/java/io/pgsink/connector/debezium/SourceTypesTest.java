package io.pgsink.connector.debezium;

import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class SourceTypesTest
{
    @Test
    void declaresPropagatedTypesAsPostgreSqlReadsThem()
    {
        assertThat(SourceTypes.declaration(propagated("VARCHAR", 20, 0))).isEqualTo("varchar(20)");
        assertThat(SourceTypes.declaration(propagated("BPCHAR", 3, 0))).isEqualTo("bpchar(3)");
        assertThat(SourceTypes.declaration(propagated("NUMERIC", 12, 2))).isEqualTo("numeric(12,2)");
        assertThat(SourceTypes.declaration(propagated("_INT4", 10, 0))).isEqualTo("int4[]");
        assertThat(SourceTypes.declaration(propagated("TIMESTAMPTZ", 35, 6))).isEqualTo("timestamptz");
    }

    @Test
    void theOneByteCharTypeIsQuoted()
    {
        // unquoted, char is character(1): it would refuse the non-ASCII bytes "char" holds
        assertThat(SourceTypes.declaration(propagated("CHAR", 1, 0))).isEqualTo("\"char\"");
        assertThat(SourceTypes.declaration(propagated("_CHAR", 1, 0))).isEqualTo("\"char\"[]");
    }

    private static Schema propagated(String type, int length, int scale)
    {
        return SchemaBuilder.string().optional()
                .parameter(SourceTypes.TYPE_PARAMETER, type)
                .parameter(SourceTypes.LENGTH_PARAMETER, Integer.toString(length))
                .parameter(SourceTypes.SCALE_PARAMETER, Integer.toString(scale))
                .build();
    }
}
