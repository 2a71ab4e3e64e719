package io.pgsink.merge;

import javax.net.SocketFactory;

import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A pgjdbc {@code socketFactory} ({@code target.jdbc.socketFactory}) whose sockets count round
 * trips: one each time the client sends bytes after it last received some (or for the first time),
 * i.e. every time it waited for an answer before it could go on. Messages the client sends
 * together (a pipelined batch, a COPY's data) cost nothing extra. Counters are kept by
 * {@code socketFactoryArg}, so that each test counts its own connections. {@link Across} adds a
 * round trip's latency to each.
 */
public class RoundTripCountingSocketFactory
        extends SocketFactory
{
    private static final Map<String, AtomicLong> ROUND_TRIPS = new ConcurrentHashMap<>();

    private final AtomicLong roundTrips;
    private final long roundTripNanos;

    /** Called by pgjdbc with {@code socketFactoryArg}. */
    public RoundTripCountingSocketFactory(String counter)
    {
        this(counter, 0);
    }

    /** Sockets that also hold each round trip's request back for {@code roundTripNanos}: a target across a network. */
    RoundTripCountingSocketFactory(String counter, long roundTripNanos)
    {
        this.roundTrips = ROUND_TRIPS.computeIfAbsent(counter, name -> new AtomicLong());
        this.roundTripNanos = roundTripNanos;
    }

    /** The round trips of every connection opened with {@code socketFactoryArg=counter} so far. */
    static long roundTrips(String counter)
    {
        return ROUND_TRIPS.computeIfAbsent(counter, name -> new AtomicLong()).get();
    }

    @Override
    public Socket createSocket()
    {
        return new CountingSocket(roundTrips, roundTripNanos);
    }

    @Override
    public Socket createSocket(String host, int port)
            throws IOException
    {
        Socket socket = createSocket();
        socket.connect(new InetSocketAddress(host, port));
        return socket;
    }

    @Override
    public Socket createSocket(InetAddress host, int port)
            throws IOException
    {
        return createSocket(host.getHostAddress(), port);
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort)
            throws IOException
    {
        Socket socket = createSocket();
        socket.bind(new InetSocketAddress(localHost, localPort));
        socket.connect(new InetSocketAddress(host, port));
        return socket;
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
            throws IOException
    {
        return createSocket(address.getHostAddress(), port, localAddress, localPort);
    }

    private static final class CountingSocket
            extends Socket
    {
        private final AtomicLong roundTrips;
        private final long roundTripNanos;
        /** Whether the client received bytes since it last sent some; true before the first send. */
        private volatile boolean answered = true;

        CountingSocket(AtomicLong roundTrips, long roundTripNanos)
        {
            this.roundTrips = roundTrips;
            this.roundTripNanos = roundTripNanos;
        }

        @Override
        public InputStream getInputStream()
                throws IOException
        {
            return new FilterInputStream(super.getInputStream())
            {
                @Override
                public int read()
                        throws IOException
                {
                    int read = super.read();
                    answered |= read >= 0;
                    return read;
                }

                @Override
                public int read(byte[] buffer, int offset, int length)
                        throws IOException
                {
                    int read = super.read(buffer, offset, length);
                    answered |= read > 0;
                    return read;
                }
            };
        }

        @Override
        public OutputStream getOutputStream()
                throws IOException
        {
            return new FilterOutputStream(super.getOutputStream())
            {
                @Override
                public void write(int b)
                        throws IOException
                {
                    sent();
                    out.write(b);
                }

                @Override
                public void write(byte[] buffer, int offset, int length)
                        throws IOException
                {
                    sent();
                    out.write(buffer, offset, length);
                }
            };
        }

        private void sent()
        {
            if (answered) {
                roundTrips.incrementAndGet();
                answered = false;
                // the request and its answer take the round trip: the answer cannot come sooner
                long until = System.nanoTime() + roundTripNanos;
                for (long wait = roundTripNanos; wait > 0; wait = until - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                }
            }
        }
    }

    /** Counting sockets to a target 20 ms away: each round trip waits that long before the request leaves. */
    public static final class Across
            extends RoundTripCountingSocketFactory
    {
        static final long ROUND_TRIP_MILLIS = 20;

        /** Called by pgjdbc with {@code socketFactoryArg}. */
        public Across(String counter)
        {
            super(counter, ROUND_TRIP_MILLIS * 1_000_000);
        }
    }
}
