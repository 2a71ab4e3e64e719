package io.pgsink.reference;

import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;

/** docs/reference/metrics.md is what the service's meter registry exports. */
class MetricsReferenceTest
{
    @Test
    void committedPageIsTheGeneratedOne()
            throws IOException
    {
        GeneratedPage.check(MetricsReference.FILE, MetricsReference.generate(), "MetricsReferenceTest");
    }

    @Test
    void everyMeterOfTheServiceHasARowWithItsTypeAndLabels()
    {
        assertThat(MetricsReference.generate())
                .contains("| `pgsink_events_in_total` | counter | `sink` | Records received from the source |")
                .contains("| `pgsink_rows_applied_total` | counter | `operation` (delete, upsert), `sink`, `table` |")
                .contains("| `pgsink_source_lag_seconds` | gauge | `sink` |")
                .contains("| `pgsink_flush_seconds` | histogram | `sink`, `le` |")
                .contains("`state` (FAILED, LOADING, RETRYING, SNAPSHOT, STARTING, STOPPED, STOPPING, STREAMING)")
                .contains("| `pgsink_initial_load_rows_total` | counter | `sink`, `table` |");
    }
}
