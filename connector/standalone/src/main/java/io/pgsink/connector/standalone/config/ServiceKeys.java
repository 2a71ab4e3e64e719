package io.pgsink.connector.standalone.config;

import io.pgsink.connector.standalone.engine.FlushBoundary;
import io.pgsink.connector.standalone.load.LoadFormat;
import io.pgsink.connector.standalone.monitoring.HttpSecurity;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigType;
import io.pgsink.core.config.definition.ConfigValidator;

import java.util.List;

import static io.pgsink.connector.standalone.config.StandaloneConfig.FLUSH_BOUNDARY;
import static io.pgsink.connector.standalone.config.StandaloneConfig.HTTP_HOST;
import static io.pgsink.connector.standalone.config.StandaloneConfig.HTTP_PORT;
import static io.pgsink.connector.standalone.config.StandaloneConfig.PROGRESS_INTERVAL_MS;
import static io.pgsink.connector.standalone.config.StandaloneConfig.SLOT_CREATION_LOG_INTERVAL_MS;
import static io.pgsink.connector.standalone.config.StandaloneConfig.SLOT_CREATION_TIMEOUT_MS;

/**
 * The standalone service's own configuration keys, each with its type, default, validator and
 * documentation, as {@link io.pgsink.core.config.SinkKeys} holds the sink's. {@link StandaloneConfig}
 * reads them and publishes the list as {@link StandaloneConfig#KEYS}; the configuration reference
 * is built from it.
 */
final class ServiceKeys
{
    private ServiceKeys() {}

    static final ConfigKey<Long> HTTP_PORT_KEY = ConfigKey.optional(HTTP_PORT, ConfigType.LONG, 9464L,
            "Port of the HTTP endpoint serving /metrics (Prometheus text format) and /health; 0 picks a free port, -1 "
                    + "disables it.").withValidator(ConfigValidator.between(-1, 65535));
    static final ConfigKey<String> HTTP_HOST_KEY = ConfigKey.optional(HTTP_HOST, ConfigType.STRING, "127.0.0.1",
            "Address the HTTP endpoint listens on: the loopback interface by default; 0.0.0.0 for every interface "
                    + "(the Docker image sets it), with http.tls.* and http.auth.* where others can reach it.")
            .withValidator(ConfigValidator.notBlank());
    static final ConfigKey<Long> PROGRESS_INTERVAL_MS_KEY = ConfigKey.optional(PROGRESS_INTERVAL_MS, ConfigType.LONG,
            30_000L,
            "How often progress (events in, rows applied, lag, position) is logged while changes flow; 0 disables "
                    + "it.").withValidator(ConfigValidator.atLeast(0));

    static final ConfigKey<Long> SLOT_CREATION_TIMEOUT_MS_KEY = ConfigKey.optional(SLOT_CREATION_TIMEOUT_MS,
            ConfigType.LONG, 600_000L,
            "How long starting may wait for the replication slot to be created (PostgreSQL waits for every open "
                    + "transaction on the source to end); then the service stops, naming the transactions it waited "
                    + "for. Sets the Debezium engine's internal.task.management.timeout.ms unless "
                    + "source.internal.task.management.timeout.ms is given.")
            .withValidator(ConfigValidator.atLeast(1000));
    static final ConfigKey<Long> SLOT_CREATION_LOG_INTERVAL_MS_KEY = ConfigKey.optional(SLOT_CREATION_LOG_INTERVAL_MS,
            ConfigType.LONG, 10_000L,
            "While the replication slot is being created, how often the open source transactions it waits for (pid, "
                    + "xid, age) are logged.").withValidator(ConfigValidator.atLeast(100));

    static final ConfigKey<Long> INITIAL_LOAD_PARALLELISM = ConfigKey.optional("initial.load.parallelism",
            ConfigType.LONG, 0L,
            "How many chunks the initial load copies at once (one source and one target connection each); tables and "
                    + "chunks of large tables are loaded in parallel. "
                    + "0: as many as the JVM has processors, at least 2 and at most 4 (each chunk keeps a client "
                            + "thread and two server processes busy: "
                    + "on 2 cores, 2 at once copied 5% to 20% faster than 4).")
            .withValidator(ConfigValidator.between(0, 64));
    static final ConfigKey<Long> INITIAL_LOAD_CHUNK_BYTES = ConfigKey.optional("initial.load.chunk.bytes",
            ConfigType.LONG, 64L * 1024 * 1024,
            "The initial load splits a source table into chunks of this many bytes of heap (ctid ranges, PostgreSQL "
                    + "14+ sources), each copied and committed on its own.")
            .withValidator(ConfigValidator.atLeast(1024 * 1024));
    static final ConfigKey<LoadFormat> INITIAL_LOAD_COPY_FORMAT = ConfigKey.optional("initial.load.copy.format",
            ConfigType.choice(LoadFormat.class), LoadFormat.AUTO,
            "The COPY format of the initial load. binary: for tables whose columns all have built-in types, identical "
                    + "on both sides (others go as text). auto: binary as that, where source "
                    + "and target are PostgreSQL of the same major version, else text. text: always text.");
    static final ConfigKey<Long> INITIAL_LOAD_PROGRESS_INTERVAL_MS =
            ConfigKey.optional("initial.load.progress.interval.ms", ConfigType.LONG, 10_000L,
            "How often the initial load logs each loading table's rows, bytes, rate and estimated time left; 0 "
                    + "disables it.").withValidator(ConfigValidator.atLeast(0));

    static final ConfigKey<FlushBoundary> FLUSH_BOUNDARY_KEY = ConfigKey.optional(FLUSH_BOUNDARY,
            ConfigType.choice(FlushBoundary.class), FlushBoundary.BATCH,
            "Where a flush may end. transaction: only between source transactions, so every committed target state "
                    + "equals a committed source state (across tables); a transaction is applied whole "
                    + "whatever flush.max.events says, and one that alone takes buffer.max.bytes stops the service "
                            + "until buffer.max.bytes is raised. batch: at engine batch ends and when the buffer "
                    + "is full, which may show a source transaction partly applied until the next flush.");

    /** The service's own keys; the sink's are {@link SinkConfig#KEYS}. */
    static final List<ConfigKey<?>> KEYS = List.of(FLUSH_BOUNDARY_KEY, HTTP_PORT_KEY, HTTP_HOST_KEY,
            PROGRESS_INTERVAL_MS_KEY, SLOT_CREATION_TIMEOUT_MS_KEY, SLOT_CREATION_LOG_INTERVAL_MS_KEY,
            INITIAL_LOAD_PARALLELISM, INITIAL_LOAD_CHUNK_BYTES, INITIAL_LOAD_COPY_FORMAT,
                    INITIAL_LOAD_PROGRESS_INTERVAL_MS,
            HttpSecurity.TLS_CERTIFICATE_FILE_KEY, HttpSecurity.TLS_KEY_FILE_KEY, HttpSecurity.AUTH_USERNAME_KEY,
            HttpSecurity.AUTH_PASSWORD_KEY, HttpSecurity.AUTH_BEARER_TOKEN_KEY);
}
