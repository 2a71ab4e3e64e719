package io.pgsink.bench.network;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on the loopback interface between the benchmark's connections and PostgreSQL that
 * counts round trips: a round trip is counted each time a client sends bytes after the server last
 * sent it bytes (or for the first time), i.e. every time the client had to wait for an answer
 * before it could go on. Messages the client pipelines (pgjdbc's Parse/Bind/Execute/Sync of a
 * batch, the CopyData of a COPY) cost no extra round trip; a COPY costs two (the {@code COPY}
 * statement waits for CopyInResponse, then the data waits for CommandComplete).
 *
 * <p>It relays bytes unchanged and never parses them. Used only for counting: the relay adds its
 * own latency, so timings are taken without it.
 */
public final class RoundTripCounter
        implements AutoCloseable
{
    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final AtomicLong roundTrips = new AtomicLong();
    private final List<Socket> sockets = new ArrayList<>();
    private final Thread acceptor;

    RoundTripCounter(InetSocketAddress target)
            throws IOException
    {
        this.target = target;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = new Thread(this::accept, "round-trip-counter");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** {@code url} with its host and port replaced by this proxy's. */
    public static String proxiedUrl(String url, int port)
    {
        URI uri = URI.create(url.substring("jdbc:".length()));
        return "jdbc:postgresql://" + InetAddress.getLoopbackAddress().getHostAddress() + ":" + port + uri.getRawPath()
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    }

    public static RoundTripCounter forUrl(String url)
            throws IOException
    {
        return new RoundTripCounter(targetOf(url));
    }

    /** The host and port of a {@code jdbc:postgresql://} URL (localhost and 5432 where absent). */
    static InetSocketAddress targetOf(String url)
    {
        URI uri = URI.create(url.substring("jdbc:".length()));
        return new InetSocketAddress(uri.getHost() == null ? "localhost" : uri.getHost(), uri.getPort() < 0 ? 5432
                : uri.getPort());
    }

    public int port()
    {
        return listener.getLocalPort();
    }

    public long roundTrips()
    {
        return roundTrips.get();
    }

    private void accept()
    {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                client.setTcpNoDelay(true);
                Socket server = new Socket();
                server.setTcpNoDelay(true);
                server.connect(target);
                synchronized (sockets) {
                    sockets.add(client);
                    sockets.add(server);
                }
                // true while the client is the last one who spoke on this connection
                boolean[] clientSpoke = {false};
                start(() -> relay(client, server, clientSpoke, true));
                start(() -> relay(server, client, clientSpoke, false));
            }
            catch (IOException e) {
                return;
            }
        }
    }

    private static void start(Runnable relay)
    {
        Thread thread = new Thread(relay, "round-trip-relay");
        thread.setDaemon(true);
        thread.start();
    }

    private void relay(Socket from, Socket to, boolean[] clientSpoke, boolean fromClient)
    {
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            while (true) {
                int read = in.read(buffer);
                if (read < 0) {
                    break;
                }
                synchronized (clientSpoke) {
                    if (fromClient && !clientSpoke[0]) {
                        roundTrips.incrementAndGet();
                    }
                    clientSpoke[0] = fromClient;
                }
                out.write(buffer, 0, read);
                out.flush();
            }
        }
        catch (IOException e) {
            // the other side closed: so does this one
        }
        finally {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    static void closeQuietly(Socket socket)
    {
        try {
            socket.close();
        }
        catch (IOException e) {
            // closing anyway
        }
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
}
