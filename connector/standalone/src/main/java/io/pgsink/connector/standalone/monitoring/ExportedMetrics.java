package io.pgsink.connector.standalone.monitoring;

import io.pgsink.connector.standalone.verify.VerifyListener;
import io.pgsink.core.change.TableId;

import java.time.Instant;

/**
 * Every meter {@code /metrics} exports, registered as a running service registers them: the service's
 * meters, its state gauges, and the per-table meters of one streamed, one loaded and one verified table
 * ({@code pgsink verify --http-port}). What
 * docs/reference/metrics.md is generated from. HikariCP's pool meters ({@code hikaricp_connections_*})
 * are HikariCP's and are not in it.
 */
public final class ExportedMetrics
{
    private ExportedMetrics()
    {
    }

    /** The Prometheus text exposition of a fresh service's meters, with table {@code schema.table}. */
    public static String prometheusExposition(String sinkName, String schema, String table)
    {
        SinkMetrics metrics = new SinkMetrics(sinkName);
        metrics.stateGauges(new ServiceState(sinkName, Instant::now));
        TableId id = TableId.of(schema, table);
        metrics.tableCounters(id);
        metrics.chunkLoaded(id, 0, 0);
        metrics.progressed(new VerifyListener.TableProgress(id, 0, 0, 0, 0, 0));
        return metrics.scrape();
    }
}
