package io.pgsink.connector.standalone.load;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LoadFormatTest
{
    @Test
    void autoIsBinaryOnlyForBuiltInTypesBetweenServersOfOneVersion()
    {
        assertThat(LoadFormat.AUTO.forTable(true, true)).isEqualTo(LoadFormat.BINARY);
        assertThat(LoadFormat.AUTO.forTable(true, false)).isEqualTo(LoadFormat.TEXT);
        assertThat(LoadFormat.AUTO.forTable(false, true)).isEqualTo(LoadFormat.TEXT);
        assertThat(LoadFormat.AUTO.forTable(false, false)).isEqualTo(LoadFormat.TEXT);
    }

    @Test
    void binaryIsAskedForButNeverForTypesCreatedInTheDatabase()
    {
        assertThat(LoadFormat.BINARY.forTable(true, false)).isEqualTo(LoadFormat.BINARY);
        assertThat(LoadFormat.BINARY.forTable(false, true)).isEqualTo(LoadFormat.TEXT);
        assertThat(LoadFormat.TEXT.forTable(true, true)).isEqualTo(LoadFormat.TEXT);
    }

    @Test
    void aTableIsPlannedInTextOrBinaryNotAuto()
    {
        assertThatThrownBy(LoadFormat.AUTO::option).isInstanceOf(IllegalStateException.class);
        assertThat(LoadFormat.BINARY.option()).isEqualTo(" (FORMAT binary)");
        assertThat(LoadFormat.TEXT.option()).isEmpty();
    }
}
