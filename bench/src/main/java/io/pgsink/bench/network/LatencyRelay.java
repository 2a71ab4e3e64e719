package io.pgsink.bench.network;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP relay on the loopback interface that puts a network between the benchmark's connections
 * and PostgreSQL: every chunk of bytes is delayed by half the configured round trip in each
 * direction, so a request and its answer cost one round trip more than they do directly (0.5 ms
 * is a switched network, 5 ms WiFi; {@code tc netem} does the same in the kernel where allowed).
 *
 * <p>It delays without limiting throughput: per connection and direction, one thread reads
 * chunks and stamps each with the moment it may leave, a second thread writes them in arrival
 * order once that moment has come, so bytes in flight do not wait for each other (like a long
 * pipe, not a slow one). Up to {@value #CHUNKS_IN_FLIGHT} chunks are in flight per direction;
 * a reader that gets that far ahead waits, as a full TCP window would. Bytes are relayed
 * unchanged and never parsed.
 */
public final class LatencyRelay
        implements AutoCloseable
{
    private static final int CHUNKS_IN_FLIGHT = 1024;
    private static final byte[] END = new byte[0];

    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final long oneWayNanos;
    private final List<Socket> sockets = new ArrayList<>();

    /** @param roundTripMillis the round trip added, half of it in each direction; may be fractional */
    LatencyRelay(InetSocketAddress target, double roundTripMillis)
            throws IOException
    {
        if (!(roundTripMillis >= 0)) {
            throw new IllegalArgumentException("Invalid round trip " + roundTripMillis + " ms: must be 0 or more");
        }
        this.target = target;
        this.oneWayNanos = Math.round(roundTripMillis * 1e6 / 2);
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        start(this::accept, "latency-relay");
    }

    /** A relay to the server of a {@code jdbc:postgresql://} URL. */
    public static LatencyRelay forUrl(String url, double roundTripMillis)
            throws IOException
    {
        return new LatencyRelay(RoundTripCounter.targetOf(url), roundTripMillis);
    }

    /** {@code url} with its host and port replaced by this relay's. */
    public String relayedUrl(String url)
    {
        return RoundTripCounter.proxiedUrl(url, listener.getLocalPort());
    }

    int port()
    {
        return listener.getLocalPort();
    }

    private void accept()
    {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                synchronized (sockets) {
                    sockets.add(client);
                    sockets.add(server);
                }
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                server.connect(target);
                // both sockets close once both directions have delivered their end
                AtomicInteger open = new AtomicInteger(2);
                direction(client, server, open);
                direction(server, client, open);
            }
            catch (IOException e) {
                // the listener closed, or the target refused: the client sees its connection close
                if (listener.isClosed()) {
                    return;
                }
            }
        }
    }

    private void direction(Socket from, Socket to, AtomicInteger open)
    {
        BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(CHUNKS_IN_FLIGHT);
        start(() -> read(from, to, queue), "latency-relay-read");
        start(() -> write(from, to, queue, open), "latency-relay-write");
    }

    private void read(Socket from, Socket to, BlockingQueue<Chunk> queue)
    {
        byte[] buffer = new byte[64 * 1024];
        try {
            InputStream in = from.getInputStream();
            while (true) {
                int read = in.read(buffer);
                long due = System.nanoTime() + oneWayNanos;
                if (read < 0) {
                    queue.put(new Chunk(END, due));
                    return;
                }
                queue.put(new Chunk(Arrays.copyOf(buffer, read), due));
            }
        }
        catch (IOException e) {
            // the other side closed: so does this one, after what is in flight
            putQuietly(queue, new Chunk(END, System.nanoTime() + oneWayNanos));
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            RoundTripCounter.closeQuietly(from);
            RoundTripCounter.closeQuietly(to);
        }
    }

    private void write(Socket from, Socket to, BlockingQueue<Chunk> queue, AtomicInteger open)
    {
        try {
            OutputStream out = to.getOutputStream();
            while (true) {
                Chunk chunk = queue.take();
                // parkNanos may return early: wait until the chunk is due, never less
                for (long wait = chunk.due - System.nanoTime(); wait > 0; wait = chunk.due - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                }
                if (chunk.bytes == END) {
                    to.shutdownOutput();
                    if (open.decrementAndGet() == 0) {
                        forget(from, to);
                    }
                    return;
                }
                out.write(chunk.bytes);
                out.flush();
            }
        }
        catch (IOException e) {
            // the receiving side closed
            forget(from, to);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void forget(Socket one, Socket other)
    {
        RoundTripCounter.closeQuietly(one);
        RoundTripCounter.closeQuietly(other);
        synchronized (sockets) {
            sockets.remove(one);
            sockets.remove(other);
        }
    }

    private static void putQuietly(BlockingQueue<Chunk> queue, Chunk chunk)
    {
        try {
            if (!queue.offer(chunk, 10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("latency relay: the writer took no chunk for 10 s");
            }
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void start(Runnable runnable, String name)
    {
        Thread thread = new Thread(runnable, name);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close()
            throws IOException
    {
        listener.close();
        synchronized (sockets) {
            sockets.forEach(RoundTripCounter::closeQuietly);
        }
    }

    /** Bytes read at once, and the moment ({@link System#nanoTime()}) they may be written. */
    private record Chunk(byte[] bytes, long due) {}
}
