package io.pgsink.connector.standalone.service;

import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Creating the replication slot waits for an open transaction on the source: the service stops
 * after {@code slot.creation.timeout.ms} naming the transaction (pid, xid) and what to do. The
 * source is a private PostgreSQL ({@link EmbeddedPostgres}): an open transaction on the shared
 * test server would hold up every other test's slot creation.
 */
class SlotCreationIT
{
    @Test
    void slotCreationHeldUpByAnOpenTransactionNamesIt()
            throws Exception
    {
        try (EmbeddedPostgres server = EmbeddedPostgres.start();
                TestingDatabase target = TestingDatabase.createTarget("pgsink_slot_target");
                Connection blocker = DriverManager.getConnection(server.jdbcUrl("postgres"), "postgres", "")) {
            try (Connection connection = DriverManager.getConnection(server.jdbcUrl("postgres"), "postgres", ""); Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE public.items (id int PRIMARY KEY)");
            }
            target.execute("CREATE TABLE public.items (id int PRIMARY KEY)");
            // an idle session in a transaction that holds a transaction id
            blocker.setAutoCommit(false);
            long pid;
            long xid;
            try (Statement statement = blocker.createStatement(); ResultSet rows = statement.executeQuery("SELECT pg_backend_pid(), txid_current()")) {
                rows.next();
                pid = rows.getLong(1);
                xid = rows.getLong(2);
            }

            Map<String, String> properties = new HashMap<>(target.targetProperties());
            properties.put("source.database.hostname", "127.0.0.1");
            properties.put("source.database.port", Integer.toString(server.port()));
            properties.put("source.database.user", "postgres");
            properties.put("source.database.dbname", "postgres");
            properties.put("source.table.include.list", "public.items");
            properties.put("source.publication.autocreate.mode", "filtered");
            properties.put("sink.name", TestingDatabase.randomName("slot"));
            properties.put("http.port", "-1");
            properties.put("slot.creation.timeout.ms", "15000");
            properties.put("slot.creation.log.interval.ms", "1000");
            RunningService running = RunningService.start(properties);
            try {
                Throwable failure = running.awaitFailure(Duration.ofSeconds(180));
                assertThat(failure).isInstanceOf(SinkException.class)
                        .hasMessageContaining("did not finish within 15000 ms (slot.creation.timeout.ms): PostgreSQL waits for open transactions to end: pid " + pid + " (xid " + xid + ", open ")
                        .hasMessageContaining("End them (COMMIT, ROLLBACK or SELECT pg_terminate_backend(pid)) or raise slot.creation.timeout.ms");
                assertThat(((SinkException) failure).errorCode()).isEqualTo(ErrorCode.CONFIG);
            }
            finally {
                running.service().close();
                blocker.rollback();
            }
        }
    }
}
