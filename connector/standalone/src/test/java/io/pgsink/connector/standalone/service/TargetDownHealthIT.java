package io.pgsink.connector.standalone.service;

import io.pgsink.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * While the target is down, {@code /health} answers 503 {@code RETRYING} with the error's class,
 * the attempt and since when, and {@code pgsink_state{state="RETRYING"}} is 1; once the target is
 * back, 200 {@code STREAMING} again, with the changes made meanwhile applied. The target is a
 * private PostgreSQL ({@link EmbeddedPostgres}) that the test stops and starts, not the shared
 * test server.
 */
class TargetDownHealthIT
{
    private static final Duration WAIT = Duration.ofSeconds(180);

    private TestingDatabase source;

    @BeforeEach
    void createSource()
            throws Exception
    {
        source = TestingDatabase.create("pgsink_health_source");
        source.execute("CREATE TABLE public.items (id int PRIMARY KEY, note text)", "INSERT INTO public.items VALUES (1, 'one')");
    }

    @AfterEach
    void dropSource()
            throws Exception
    {
        source.close();
    }

    @Test
    void healthIsRetryingWhileTheTargetIsDownAndStreamingAfter()
            throws Exception
    {
        try (EmbeddedPostgres server = EmbeddedPostgres.start()) {
            String url = server.jdbcUrl("postgres");
            try (Connection connection = DriverManager.getConnection(url, "postgres", ""); Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE public.items (id int PRIMARY KEY, note text)");
            }
            Map<String, String> properties = new HashMap<>(source.sourceProperties());
            properties.put("target.url", url);
            properties.put("target.user", "postgres");
            properties.put("source.table.include.list", "public.items");
            properties.put("source.publication.autocreate.mode", "filtered");
            properties.put("sink.name", TestingDatabase.randomName("health"));
            properties.put("flush.interval.ms", "100");
            properties.put("retry.backoff.max.ms", "1000");
            properties.put("http.port", "0");
            properties.put("http.host", "127.0.0.1");
            HttpClient client = HttpClient.newHttpClient();
            try (RunningService running = RunningService.start(properties)) {
                RunningService.await("the snapshot", WAIT, () -> {
                    running.assertRunning();
                    assertThat(count(url)).isEqualTo(1);
                });
                RunningService.await("healthy", WAIT, () -> {
                    HttpResponse<String> health = get(client, running, "/health");
                    assertThat(health.statusCode()).isEqualTo(200);
                    assertThat(health.body()).contains("\"status\":\"UP\"");
                });

                server.stop();
                source.execute("INSERT INTO public.items VALUES (2, 'two')");
                RunningService.await("503 RETRYING while the target is down", WAIT, () -> {
                    running.assertRunning();
                    HttpResponse<String> health = get(client, running, "/health");
                    assertThat(health.statusCode()).isEqualTo(503);
                    assertThat(health.body()).contains("\"status\":\"DOWN\"", "\"state\":\"RETRYING\"", "\"error_class\":\"TRANSIENT\"", "\"attempt\":", "\"since\":\"");
                    assertThat(get(client, running, "/metrics").body()).containsPattern("pgsink_state\\{sink=\"[^\"]+\",state=\"RETRYING\"} 1.0");
                });

                server.startAgain();
                RunningService.await("the change made while the target was down", WAIT, () -> {
                    running.assertRunning();
                    assertThat(count(url)).isEqualTo(2);
                });
                RunningService.await("200 STREAMING once the target is back", WAIT, () -> {
                    HttpResponse<String> health = get(client, running, "/health");
                    assertThat(health.statusCode()).isEqualTo(200);
                    assertThat(health.body()).contains("\"state\":\"STREAMING\"").doesNotContain("error");
                    assertThat(get(client, running, "/metrics").body()).containsPattern("pgsink_state\\{sink=\"[^\"]+\",state=\"STREAMING\"} 1.0");
                });
            }
        }
    }

    private static int count(String url)
            throws Exception
    {
        try (Connection connection = DriverManager.getConnection(url, "postgres", ""); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT count(*) FROM public.items")) {
            rows.next();
            return rows.getInt(1);
        }
    }

    private static HttpResponse<String> get(HttpClient client, RunningService running, String path)
            throws Exception
    {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + running.service().httpPort() + path)).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
