package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.cli.TestingCommand;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code target.session.replication.role} through the real Debezium engine, into a target whose
 * tables have what the source's lack: a foreign key from {@code a_child} to {@code b_parent}, and a
 * trigger on {@code b_parent} that logs every change. A flush applies tables in name order, so a
 * child that arrives before its parent is inserted first. With {@code replica} the trigger does not
 * fire and the child goes in; with {@code origin} (the default) the trigger fires and the child's
 * insert fails on the foreign key, stopping the service with an error naming the table.
 * {@code pgsink check} says whether the target user may set the role.
 */
class ReplicationRoleIT
{
    private static final Duration CATCH_UP = Duration.ofSeconds(90);
    private static final String PARENTS = "SELECT id, name FROM public.b_parent ORDER BY id";
    private static final String CHILDREN = "SELECT id, parent_id FROM public.a_child ORDER BY id";

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("role");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();

    @BeforeEach
    void createTables()
            throws Exception
    {
        source.execute("CREATE TABLE public.a_child (id int PRIMARY KEY, parent_id int)", "CREATE TABLE public.b_parent (id int PRIMARY KEY, name text)");
        target.execute("CREATE TABLE public.b_parent (id int PRIMARY KEY, name text)",
                "CREATE TABLE public.a_child (id int PRIMARY KEY, parent_id int REFERENCES public.b_parent (id))",
                "CREATE TABLE public.trigger_log (op text, id int)",
                "CREATE FUNCTION log_parent() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO public.trigger_log VALUES (TG_OP, COALESCE(NEW.id, OLD.id)); RETURN NULL; END $$",
                "CREATE TRIGGER log_parent AFTER INSERT OR UPDATE OR DELETE ON public.b_parent FOR EACH ROW EXECUTE FUNCTION log_parent()");
    }

    private Map<String, String> properties(String role)
    {
        Map<String, String> properties = pipeline.properties("public.a_child,public.b_parent");
        properties.put("target.session.replication.role", role);
        properties.put("flush.interval.ms", "200");
        return properties;
    }

    @Test
    void replicaAppliesWithoutTriggersOrForeignKeyChecks()
            throws Exception
    {
        // loaded in parallel, each table on its own connection: the children may go in before their parents
        source.execute("INSERT INTO public.a_child SELECT g, g FROM generate_series(10, 19) g", "INSERT INTO public.b_parent SELECT g, 'loaded' FROM generate_series(10, 19) g");
        try (RunningService running = RunningService.start(properties("replica"))) {
            InitialLoadIT.awaitStreaming(running);
            // the child first, in a transaction of its own: applied before its parent exists
            source.execute("INSERT INTO public.a_child VALUES (1, 1)");
            source.execute("INSERT INTO public.b_parent VALUES (1, 'one'), (2, 'two')",
                    "UPDATE public.b_parent SET name = 'ONE' WHERE id = 1",
                    "DELETE FROM public.b_parent WHERE id = 2",
                    "INSERT INTO public.a_child VALUES (2, 2)");
            RunningService.await("target to equal source", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query(PARENTS)).isEqualTo(source.query(PARENTS));
                assertThat(target.query(CHILDREN)).isEqualTo(source.query(CHILDREN));
            });
            running.assertRunning();
        }
        assertThat(target.query(CHILDREN + " LIMIT 2")).containsExactly(List.of("1", "1"), List.of("2", "2"));
        // child 2's parent is gone: only a replica-role writer can leave that behind
        assertThat(target.query("SELECT count(*) FROM public.a_child c WHERE NOT EXISTS (SELECT 1 FROM public.b_parent p WHERE p.id = c.parent_id)")).containsExactly(List.of("1"));
        assertThat(target.query("SELECT count(*) FROM public.trigger_log")).containsExactly(List.of("0"));
        assertThat(target.query("SELECT count(*) FROM pg_constraint WHERE conrelid = 'public.a_child'::regclass AND contype = 'f'")).containsExactly(List.of("1"));
    }

    @Test
    void originFiresTriggersAndChecksForeignKeys()
            throws Exception
    {
        RunningService running = RunningService.start(properties("origin"));
        try {
            // rows loaded by the initial load could go in child first (tables load in parallel): stream them
            InitialLoadIT.awaitStreaming(running);
            source.execute("INSERT INTO public.b_parent VALUES (1, 'one'), (2, 'two')");
            RunningService.await("the parents", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query(PARENTS)).isEqualTo(source.query(PARENTS));
            });
            // its parent committed in the target before: the foreign key holds
            source.execute("INSERT INTO public.a_child VALUES (1, 1)");
            RunningService.await("target to equal source", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query(PARENTS)).isEqualTo(source.query(PARENTS));
                assertThat(target.query(CHILDREN)).isEqualTo(source.query(CHILDREN));
            });
            assertThat(target.query("SELECT op, id FROM public.trigger_log ORDER BY id")).containsExactly(List.of("INSERT", "1"), List.of("INSERT", "2"));

            // a child whose parent arrives later (or in the same flush: tables apply in name order): its insert fails on the foreign key
            source.execute("INSERT INTO public.a_child VALUES (3, 3)");
            source.execute("INSERT INTO public.b_parent VALUES (3, 'three')");
            Throwable failure = running.awaitFailure(CATCH_UP);
            assertThat(failure).hasMessageContaining("\"public\".\"a_child\"").hasMessageContaining("a_child_parent_id_fkey").hasMessageContaining("23503");
        }
        finally {
            running.service().close();
        }
        assertThat(target.query(CHILDREN)).containsExactly(List.of("1", "1"));
    }

    @Test
    @Timeout(180)
    void checkSaysWhetherTheTargetUserMaySetTheRole(@TempDir Path directory)
            throws Exception
    {
        Map<String, String> properties = new TreeMap<>(properties("replica"));
        TestingCommand superuser = TestingCommand.run("check", "--config", TestingCommand.configFile(directory.resolve("superuser.properties"), properties).toString());
        assertThat(superuser.out()).contains("[ OK ] target " + target.jdbcUrl() + ": the user may set session_replication_role = replica (target.session.replication.role)");

        String role = TestingDatabase.randomName("pgsink_role_user");
        target.execute("CREATE ROLE " + role + " LOGIN");
        try {
            properties.put("target.user", role);
            TestingCommand plain = TestingCommand.run("check", "--config", TestingCommand.configFile(directory.resolve("plain.properties"), properties).toString());
            assertThat(plain.exitCode()).isEqualTo(1);
            assertThat(plain.out()).contains("[FAIL] target " + target.jdbcUrl() + ": target.session.replication.role=replica, but the target user may not set session_replication_role:"
                    + " it needs a superuser, or on PostgreSQL 15+ GRANT SET ON PARAMETER session_replication_role TO the target user");

            target.execute("GRANT SET ON PARAMETER session_replication_role TO " + role);
            TestingCommand granted = TestingCommand.run("check", "--config", TestingCommand.configFile(directory.resolve("granted.properties"), properties).toString());
            assertThat(granted.out()).contains("[ OK ] target " + target.jdbcUrl() + ": the user may set session_replication_role = replica");
        }
        finally {
            target.execute("REVOKE SET ON PARAMETER session_replication_role FROM " + role, "DROP OWNED BY " + role, "DROP ROLE " + role);
        }
    }

    /**
     * A parent and its child inserted in one source transaction: a flush applies the child's table
     * first (name order), and under {@code origin} the foreign key stops the service. What
     * {@code pgsink run} prints names the table, the constraint, the SQLState and both ways out:
     * the replica role, or a foreign key checked at commit (one flush is one transaction).
     */
    @Test
    @Timeout(180)
    void foreignKeyFailureNamesBothRemedies(@TempDir Path directory)
            throws Exception
    {
        source.execute("BEGIN; INSERT INTO public.b_parent VALUES (1, 'one'); INSERT INTO public.a_child VALUES (1, "
                + "1); COMMIT");
        Map<String, String> properties = new TreeMap<>(properties("origin"));
        // Debezium streams the rows (no initial load): both arrive in one flush
        properties.put("source.snapshot.mode", "no_data");
        Path file = TestingCommand.configFile(directory.resolve("origin.properties"), properties);
        AtomicBoolean stopped = new AtomicBoolean();
        Thread writer = new Thread(() -> {
            try {
                RunningService.await("the slot to stream", CATCH_UP, () -> assertThat(source.query(
                        "SELECT active FROM pg_replication_slots WHERE database = current_database()"))
                        .containsExactly(List.of("t")));
                // a parent and its child in one transaction, which the engine hands over in one poll, one flush,
                // almost always; on a busy machine its poll can end between the two rows, and both apply in
                // flush order: then the next pair, until one stops the service
                for (int id = 2; id < 50 && !stopped.get(); id++) {
                    source.execute("BEGIN; INSERT INTO public.b_parent VALUES (" + id + ", 'two'); INSERT INTO "
                            + "public.a_child VALUES (" + id + ", " + id + "); COMMIT");
                    String child = "SELECT count(*) FROM public.a_child WHERE id = " + id;
                    RunningService.await("child " + id + " applied, or the service stopped", CATCH_UP, () -> {
                        if (!stopped.get()) {
                            assertThat(target.query(child)).containsExactly(List.of("1"));
                        }
                    });
                }
            }
            catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, "fk-writer");
        writer.start();
        TestingCommand outcome;
        try {
            outcome = TestingCommand.run("run", "--config", file.toString());
        }
        finally {
            stopped.set(true);
        }
        writer.join();
        assertThat(outcome.exitCode()).as(outcome.err()).isEqualTo(1);
        assertThat(outcome.err())
                .contains("\"public\".\"a_child\"")
                .contains("a_child_parent_id_fkey")
                .contains("[SQLState 23503]")
                .contains("target.session.replication.role=replica")
                .contains("DEFERRABLE INITIALLY DEFERRED")
                .doesNotContain("\tat ");
    }
}
