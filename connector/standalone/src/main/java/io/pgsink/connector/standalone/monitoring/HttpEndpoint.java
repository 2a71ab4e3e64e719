package io.pgsink.connector.standalone.monitoring;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * The service's HTTP endpoint: {@code GET /metrics} (Prometheus text format 0.0.4) and
 * {@code GET /health} (200 with {@code {"status":"UP",...}} while the service is healthy, 503
 * otherwise; the states are {@link ServiceState}'s). Served by the JDK's HTTP server on one
 * daemon thread, over HTTPS when {@link HttpSecurity#tls()} is given, {@code /metrics} behind the
 * credentials of {@link HttpSecurity} when given ({@code /health} stays open to liveness probes).
 */
public final class HttpEndpoint
        implements AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);

    /** What {@code /health} reports. */
    public record Health(boolean up, String json) {}

    private final HttpServer server;
    private final ExecutorService executor;

    private HttpEndpoint(HttpServer server, ExecutorService executor)
    {
        this.server = server;
        this.executor = executor;
    }

    public static HttpEndpoint start(String host, int port, HttpSecurity security, Supplier<String> metrics,
            Supplier<Health> health)
            throws IOException
    {
        HttpServer server;
        if (security.tls().isPresent()) {
            HttpsServer https = HttpsServer.create(new InetSocketAddress(host, port), 16);
            https.setHttpsConfigurator(new HttpsConfigurator(security.tls().get()));
            server = https;
        }
        else {
            server = HttpServer.create(new InetSocketAddress(host, port), 16);
        }
        server.createContext("/metrics", exchange -> {
            if (!security.authenticates() || security.accepts(exchange.getRequestHeaders().getFirst("Authorization"))) {
                respond(exchange, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.get());
                return;
            }
            exchange.getResponseHeaders().set("WWW-Authenticate", security.challenge());
            respond(exchange, 401, "text/plain; charset=utf-8", "pgsink: /metrics needs credentials\n");
        });
        server.createContext("/health", exchange -> {
            Health current = health.get();
            respond(exchange, current.up() ? 200 : 503, "application/json", current.json());
        });
        server.createContext("/", exchange -> respond(exchange, 404, "text/plain; charset=utf-8",
                "pgsink serves /metrics and /health\n"));
        ExecutorService executor = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "pgsink-http");
            thread.setDaemon(true);
            return thread;
        });
        server.setExecutor(executor);
        server.start();
        log.info("metrics at {}://{}:{}/metrics{}, health at /health", security.tls().isPresent() ? "https" : "http",
                host, server.getAddress().getPort(), security.authenticates() ? " (with credentials)" : "");
        return new HttpEndpoint(server, executor);
    }

    public int port()
    {
        return server.getAddress().getPort();
    }

    private static void respond(HttpExchange exchange, int status, String contentType, String body)
            throws IOException
    {
        try (exchange) {
            if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", contentType);
            boolean head = exchange.getRequestMethod().equals("HEAD");
            exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
            if (!head) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(bytes);
                }
            }
        }
    }

    @Override
    public void close()
    {
        server.stop(0);
        executor.shutdownNow();
    }
}
