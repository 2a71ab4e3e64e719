package io.pgsink.bench.network;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.support.TestingBenchmarkDatabase;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The latency relay delays every round trip by at least the configured time (only a lower bound
 * is asserted: a loaded machine may add any amount) and delivers bytes intact and in order.
 */
class LatencyRelayTest
{
    private static final double ROUND_TRIP_MILLIS = 20;

    @Test
    void queryRoundTripTakesAtLeastTheConfiguredDelay()
            throws Exception
    {
        String url = TestingBenchmarkDatabase.url();
        try (LatencyRelay relay = LatencyRelay.forUrl(url, ROUND_TRIP_MILLIS);
                BenchmarkDatabase database = new BenchmarkDatabase(url, "pgsink_latency_relay_test");
                Connection connection = database.through(relay.relayedUrl(url)).connect(false);
                Statement statement = connection.createStatement()) {
            for (int query = 0; query < 5; query++) {
                long start = System.nanoTime();
                try (ResultSet rows = statement.executeQuery("SELECT " + query)) {
                    assertThat(rows.next()).isTrue();
                    assertThat(rows.getInt(1)).isEqualTo(query);
                }
                assertThat((System.nanoTime() - start) / 1e6).as("milliseconds of query %s", query).isGreaterThanOrEqualTo(ROUND_TRIP_MILLIS);
            }
        }
    }

    @Test
    void largeValuesCrossThePostgreSqlProtocolIntact()
            throws Exception
    {
        String url = TestingBenchmarkDatabase.url();
        StringBuilder text = new StringBuilder();
        Random random = new Random(7);
        while (text.length() < 2_000_000) {
            text.append(Long.toString(random.nextLong(), 36)).append('\n');
        }
        String expectedMd5 = HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(text.toString().getBytes(StandardCharsets.UTF_8)));
        try (LatencyRelay relay = LatencyRelay.forUrl(url, 1);
                BenchmarkDatabase database = new BenchmarkDatabase(url, "pgsink_latency_relay_test");
                Connection connection = database.through(relay.relayedUrl(url)).connect(false);
                PreparedStatement statement = connection.prepareStatement("SELECT md5(?), ?")) {
            statement.setString(1, text.toString());
            statement.setString(2, text.toString());
            try (ResultSet rows = statement.executeQuery()) {
                assertThat(rows.next()).isTrue();
                assertThat(rows.getString(1)).as("md5 the server computed of what arrived").isEqualTo(expectedMd5);
                assertThat(rows.getString(2)).as("the value sent back").isEqualTo(text.toString());
            }
        }
    }

    @Test
    void bytesArriveInOrderBothWays()
            throws Exception
    {
        byte[] sent = new byte[8 * 1024 * 1024];
        new Random(42).nextBytes(sent);
        try (ServerSocket echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                LatencyRelay relay = new LatencyRelay(new InetSocketAddress(InetAddress.getLoopbackAddress(), echo.getLocalPort()), 2)) {
            CompletableFuture<Void> echoing = CompletableFuture.runAsync(() -> echo(echo));
            try (Socket client = new Socket(InetAddress.getLoopbackAddress(), relay.port())) {
                CompletableFuture<Void> sending = CompletableFuture.runAsync(() -> send(client, sent));
                byte[] received = client.getInputStream().readAllBytes();
                sending.join();
                assertThat(received).hasSize(sent.length);
                assertThat(received).as("bytes echoed through the relay, in order").isEqualTo(sent);
            }
            echoing.join();
        }
    }

    /** Writes {@code bytes} in chunks of varying size, then half-closes. */
    private static void send(Socket socket, byte[] bytes)
    {
        try {
            OutputStream out = socket.getOutputStream();
            Random sizes = new Random(1);
            for (int offset = 0; offset < bytes.length; ) {
                int length = Math.min(bytes.length - offset, 1 + sizes.nextInt(100_000));
                out.write(bytes, offset, length);
                offset += length;
            }
            out.flush();
            socket.shutdownOutput();
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Accepts one connection and sends back everything it reads until the end. */
    private static void echo(ServerSocket listener)
    {
        try (Socket socket = listener.accept(); InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
            in.transferTo(out);
            socket.shutdownOutput();
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
