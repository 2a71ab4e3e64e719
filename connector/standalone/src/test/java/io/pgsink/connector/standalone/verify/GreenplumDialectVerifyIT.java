package io.pgsink.connector.standalone.verify;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.connector.standalone.service.LsnText;
import io.pgsink.connector.standalone.service.RunningService;
import io.pgsink.connector.standalone.service.TestingDatabase;
import io.pgsink.connector.standalone.service.TestingPipeline;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.session.TargetConnector;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code pgsink verify} and {@code pgsink repair} with {@code target.dialect=greenplum} against
 * PostgreSQL, as sink-merge's GreenplumDialectOnPostgreSqlIT runs the merge: every statement the
 * Greenplum dialect sends runs on a real server with only its {@code DISTRIBUTED} clauses cut off,
 * and the distribution keys come from a {@code gp_distribution_policy} of Greenplum's shape in the
 * target's {@code public} schema. A target without {@code hashtextextended} (Greenplum 6) is
 * simulated by answering the capability query with false, so both chunk hashes run on the same
 * divergences. The repair's search for rows on a segment that does not own their key runs with
 * every row on segment 0. Segments and Greenplum's own planner are left to a real cluster (none here).
 */
class GreenplumDialectVerifyIT
{
    private static final Duration CATCH_UP = Duration.ofSeconds(90);
    private static final Pattern DISTRIBUTED = Pattern.compile(
            "\\s+DISTRIBUTED\\s+(?:RANDOMLY|REPLICATED|BY\\s*\\((?:\"(?:[^\"]|\"\")*\"|[^()\"])*\\))\\s*$",
            Pattern.CASE_INSENSITIVE);
    private static final String CAPABILITY = "to_regprocedure('pg_catalog.hashtextextended(text, bigint)')";
    private static final VerifyOptions OPTIONS = new VerifyOptions(1000, 2, 100, Duration.ofSeconds(30), 5);

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("verifygp");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();
    /** Every SQL string the verify and repair sent to the target, as the dialect generated it. */
    private final List<String> sent = Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void streamThenDiverge()
            throws Exception
    {
        source.execute(
                "CREATE TABLE public.orders (id bigint PRIMARY KEY, status text NOT NULL, amount numeric(12,2),"
                        + " note text)",
                "CREATE TABLE public.items (\"Order\" bigint, line int, sku text, PRIMARY KEY (\"Order\", line))",
                "INSERT INTO public.orders SELECT g, 'new', g * 1.5, NULL FROM generate_series(1, 2500) g",
                "UPDATE public.orders SET note = (SELECT string_agg(md5(g::text), '') FROM "
                        + "generate_series(1, 300) g) WHERE id = 30",
                "INSERT INTO public.items SELECT g / 3, g % 3, 'sku-' || g FROM generate_series(3, 300) g");
        Map<String, String> streaming = pipeline.properties("public.orders,public.items");
        streaming.put("schema.evolution", "add-columns");
        try (RunningService running = RunningService.start(streaming)) {
            pipeline.awaitEqual(running, "SELECT * FROM public.orders ORDER BY id", CATCH_UP);
            pipeline.awaitEqual(running, "SELECT * FROM public.items ORDER BY 1, 2", CATCH_UP);
        }
        target.execute(
                // Greenplum's catalog, as the Greenplum dialect reads it: both tables distributed by their key
                "CREATE TABLE public.gp_distribution_policy (localoid oid PRIMARY KEY, policytype \"char\" NOT NULL,"
                        + " numsegments integer NOT NULL, distkey int2vector NOT NULL, distclass oidvector NOT NULL)",
                "CREATE TABLE public.pg_appendonly (relid oid PRIMARY KEY)",
                "INSERT INTO public.gp_distribution_policy VALUES ('public.orders'::regclass, 'p', 2, '1', ''),"
                        + " ('public.items'::regclass, 'p', 2, '1 2', '')",
                "UPDATE public.orders SET amount = NULL WHERE id = 2001",
                "DELETE FROM public.orders WHERE id IN (1, 999)",
                // a TOASTed value one character shorter
                "UPDATE public.orders SET note = left(note, -1) WHERE id = 30",
                "INSERT INTO public.items VALUES (5, 7, 'extra'), (101, 0, 'extra')",
                "UPDATE public.items SET sku = upper(sku) WHERE \"Order\" = 50 AND line = 2");
    }

    private LoadSettings settings()
    {
        Map<String, String> properties = pipeline.properties("public.orders,public.items");
        properties.put(SinkConfig.TARGET_DIALECT, "greenplum");
        properties.put(SinkConfig.TARGET_UPDATE_MODE, "delete-insert");
        return StandaloneConfig.parse(properties).loadSettings();
    }

    @Test
    void bothChunkHashesNameExactlyTheDivergentKeysAndRepairMakesThemEqual()
            throws Exception
    {
        LoadSettings settings = settings();
        String offsets = "SELECT source_offset FROM public.pgsink_offsets ORDER BY 1";
        List<List<String>> positions = target.query(offsets);

        List<String> hashed = divergences(new Verifier(settings, connector(settings, true), OPTIONS).run());
        assertThat(chunkQueries()).isNotEmpty().allSatisfy(sql -> assertThat(sql).contains("hashtextextended("));
        sent.clear();
        List<String> md5 = divergences(new Verifier(settings, connector(settings, false), OPTIONS).run());
        assertThat(chunkQueries()).isNotEmpty().allSatisfy(sql -> assertThat(sql).contains("md5(")
                .doesNotContain("hashtextextended("));

        assertThat(hashed).containsExactly(
                "[DIFFERS] \"public\".\"items\": 3 keys differ (missing 0, extra 2, different 1);"
                        + " 298 source rows, 300 target rows, 1 chunk",
                "    extra: (Order, line)=(101, 0), (Order, line)=(5, 7)",
                "    different: (Order, line)=(50, 2)",
                "[DIFFERS] \"public\".\"orders\": 4 keys differ (missing 2, extra 0, different 2);"
                        + " 2500 source rows, 2498 target rows, 3 chunks",
                "    missing: (id)=(1), (id)=(999)",
                "    different: (id)=(2001), (id)=(30)");
        assertThat(md5).isEqualTo(hashed);

        sent.clear();
        Repairer.Result repaired = new Repairer(settings, connector(settings, false), OPTIONS, LsnText::of).run();
        assertThat(repaired.complete()).as(repaired.lines().toString()).isTrue();
        // the repair went through the Greenplum apply path: staging tables distributed by the key
        assertThat(sent).anySatisfy(sql -> assertThat(sql).startsWith("CREATE TEMPORARY TABLE \"pgsink_stage_")
                .endsWith("DISTRIBUTED BY (\"id\")"));
        // it locked the sink's positions and left them as they were
        assertThat(sent).anySatisfy(sql -> assertThat(sql).contains("pgsink_offsets").contains("FOR UPDATE"));
        assertThat(target.query(offsets)).isEqualTo(positions);
        for (boolean hashTextExtended : List.of(true, false)) {
            VerifyReport after = new Verifier(settings, connector(settings, hashTextExtended), OPTIONS).run();
            assertThat(after.equal()).as(after.lines().toString()).isTrue();
        }
        assertThat(target.query("SELECT * FROM public.orders ORDER BY id"))
                .isEqualTo(source.query("SELECT * FROM public.orders ORDER BY id"));
        assertThat(target.query("SELECT * FROM public.items ORDER BY 1, 2"))
                .isEqualTo(source.query("SELECT * FROM public.items ORDER BY 1, 2"));
    }

    /** The report's lines but the summary (which has the elapsed time), with each line's keys in order. */
    private static List<String> divergences(VerifyReport report)
    {
        List<String> lines = new ArrayList<>();
        for (String line : report.lines().subList(0, report.lines().size() - 1)) {
            int colon = line.indexOf(": ");
            if (line.startsWith("    ") && line.contains(", (")) {
                String[] keys = line.substring(colon + 2).split(", (?=\\()");
                Arrays.sort(keys);
                line = line.substring(0, colon + 2) + String.join(", ", keys);
            }
            lines.add(line);
        }
        return lines;
    }

    /** The chunk hashes sent since the last clear. */
    private List<String> chunkQueries()
    {
        synchronized (sent) {
            return sent.stream().filter(sql -> sql.contains("sum(")).toList();
        }
    }

    /**
     * The target's connections, each SQL string recorded in {@link #sent}, a trailing
     * {@code DISTRIBUTED} clause cut off, and (unless {@code hashTextExtended}) the chunk hash
     * capability query answered as on Greenplum 6.
     */
    private TargetConnector connector(LoadSettings settings, boolean hashTextExtended)
    {
        TargetConnector connector = TargetConnector.fromConfig(settings.sink());
        return () -> intercept(Connection.class, connector.connect(), hashTextExtended);
    }

    @SuppressWarnings("unchecked")
    private <T> T intercept(Class<T> type, T delegate, boolean hashTextExtended)
    {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, method, arguments) -> {
            String name = method.getName();
            boolean takesSql = name.startsWith("execute") || name.equals("addBatch") || name.startsWith("prepare");
            if (takesSql && arguments != null && arguments.length > 0 && arguments[0] instanceof String sql) {
                sent.add(sql);
                // and every row on the one segment of a cluster of one: none is misplaced
                String rewritten = DISTRIBUTED.matcher(sql).replaceFirst("").replace("gp_segment_id", "0");
                arguments[0] = !hashTextExtended && sql.contains(CAPABILITY) ? "SELECT false"
                        // Greenplum's own settings, which PostgreSQL does not know
                        : sql.startsWith("SET gp_") ? "SELECT 1" : rewritten;
            }
            Object result;
            try {
                result = method.invoke(delegate, arguments);
            }
            catch (InvocationTargetException e) {
                throw e.getCause();
            }
            return name.equals("createStatement") ? intercept(Statement.class, (Statement) result, hashTextExtended)
                    : result;
        });
    }
}
