package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The source/target pair of one test: a fresh source database ({@link TestingPostgreSqlServer#source()}),
 * a fresh target database (on {@link TestingPostgreSqlServer#target()} or the server given), a sink name,
 * the service properties that join them and the polling that compares them. Register it on an instance
 * field, where it is made before each test and dropped after it:
 * <pre>
 * &#64;RegisterExtension
 * final TestingPipeline pipeline = TestingPipeline.create("load");
 * private final TestingDatabase source = pipeline.source();
 * </pre>
 * or use it in a try-with-resources block. Dropping it also checks the source keeps no replication slot.
 */
public final class TestingPipeline
        implements AfterEachCallback, AutoCloseable
{
    private final TestingDatabase source;
    private final TestingDatabase target;
    private final String sinkName;

    private TestingPipeline(TestingDatabase source, TestingDatabase target, String sinkName)
    {
        this.source = source;
        this.target = target;
        this.sinkName = sinkName;
    }

    /** Databases {@code pgsink_<name>_source} and {@code pgsink_<name>_target}, sink {@code <name>_<random>}. */
    public static TestingPipeline create(String name)
    {
        return create(name, TestingPostgreSqlServer.target());
    }

    /** As {@link #create(String)}, with the target database on {@code targetServer} (such as Greenplum). */
    public static TestingPipeline create(String name, TestingPostgreSqlServer targetServer)
    {
        return create(name, TestingPostgreSqlServer.source(), targetServer);
    }

    /** As {@link #create(String)}, with the source database on {@code sourceServer} (such as a given version). */
    public static TestingPipeline create(String name, TestingPostgreSqlServer sourceServer, TestingPostgreSqlServer targetServer)
    {
        TestingDatabase source = null;
        try {
            source = TestingDatabase.create(sourceServer, "pgsink_" + name + "_source");
            TestingDatabase target = TestingDatabase.create(targetServer, "pgsink_" + name + "_target");
            return new TestingPipeline(source, target, TestingDatabase.randomName(name));
        }
        catch (SQLException e) {
            IllegalStateException failure = new IllegalStateException("cannot create the databases of pipeline " + name, e);
            if (source != null) {
                try {
                    source.close();
                }
                catch (SQLException closing) {
                    failure.addSuppressed(closing);
                }
            }
            throw failure;
        }
    }

    public TestingDatabase source()
    {
        return source;
    }

    public TestingDatabase target()
    {
        return target;
    }

    /** The sink name {@link #properties()} gives, also the name of its replication slot and publication. */
    public String sinkName()
    {
        return sinkName;
    }

    /**
     * The configuration of a service streaming this source into this target, without an include list:
     * a filtered publication, this pipeline's sink name, 100 ms flushes, no HTTP endpoint, and the
     * application name {@code pgsink-connector-it} on target connections; a mutable map, for the
     * test's own keys.
     */
    public Map<String, String> properties()
    {
        Map<String, String> properties = new HashMap<>(source.sourceProperties());
        properties.putAll(target.targetProperties());
        properties.put("source.publication.autocreate.mode", "filtered");
        properties.put("sink.name", sinkName);
        properties.put("flush.interval.ms", "100");
        properties.put("http.port", "-1");
        // not "pgsink ...": other modules' tests count connections by that application name
        properties.put("target.jdbc.ApplicationName", "pgsink-connector-it");
        return properties;
    }

    /** {@link #properties()} capturing the tables {@code includeList}. */
    public Map<String, String> properties(String includeList)
    {
        Map<String, String> properties = properties();
        properties.put("source.table.include.list", includeList);
        return properties;
    }

    /** Runs the statements in the source and in the target database. */
    public void executeInBoth(String... sql)
            throws SQLException
    {
        source.execute(sql);
        target.execute(sql);
    }

    /** Waits until {@code query} returns the same rows in the target as in the source, while {@code running} runs. */
    public void awaitEqual(RunningService running, String query, Duration timeout)
    {
        awaitEqual(running, query, query, timeout);
    }

    /** Waits until {@code targetQuery} returns in the target what {@code sourceQuery} returns in the source. */
    public void awaitEqual(RunningService running, String sourceQuery, String targetQuery, Duration timeout)
    {
        RunningService.await("target to equal source: " + targetQuery, timeout, () -> {
            running.assertRunning();
            assertThat(target.query(targetQuery)).isEqualTo(source.query(sourceQuery));
        });
    }

    @Override
    public void afterEach(ExtensionContext context)
            throws SQLException
    {
        close();
    }

    /** Drops both databases, and checks the source kept no replication slot. */
    @Override
    public void close()
            throws SQLException
    {
        try {
            source.close();
            assertThat(source.replicationSlots()).as("replication slots left in " + source.name()).isEmpty();
        }
        finally {
            target.close();
        }
    }
}
