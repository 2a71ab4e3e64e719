package io.pgsink.connector.standalone;

import io.pgsink.merge.TargetConnector;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;
import org.postgresql.copy.CopyManager;
import org.postgresql.core.BaseConnection;
import org.postgresql.util.ByteStreamWriter;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.LongConsumer;

import static java.util.Objects.requireNonNull;

/**
 * Counts the bytes the sink sends with COPY, for the {@code pgsink_copy_bytes_total} metric,
 * without changing the applier: connections are wrapped so that {@code unwrap(PGConnection.class)
 * .getCopyAPI().copyIn(sql)} hands out a {@link CopyIn} that reports every {@code writeToCopy}.
 * Everything else goes straight to the driver's connection.
 */
final class CopyByteCounting
{
    private CopyByteCounting() {}

    static TargetConnector counting(TargetConnector connector, LongConsumer bytes)
    {
        requireNonNull(connector, "connector is null");
        requireNonNull(bytes, "bytes is null");
        return () -> wrap(connector.connect(), bytes);
    }

    private static Connection wrap(Connection connection, LongConsumer bytes)
            throws SQLException
    {
        PGConnection driverConnection = connection.unwrap(PGConnection.class);
        CopyManager copyManager = new CopyManager(connection.unwrap(BaseConnection.class))
        {
            @Override
            public CopyIn copyIn(String sql)
                    throws SQLException
            {
                CopyIn copy = super.copyIn(sql);
                return proxy(CopyIn.class, copy, (method, args) -> {
                    if (method.getName().equals("writeToCopy")) {
                        if (args.length == 3 && args[2] instanceof Integer length) {
                            bytes.accept(length);
                        }
                        else if (args.length == 1 && args[0] instanceof ByteStreamWriter writer) {
                            bytes.accept(writer.getLength());
                        }
                    }
                    return NOT_HANDLED;
                });
            }
        };
        PGConnection countingDriverConnection = proxy(PGConnection.class, driverConnection,
                (method, args) -> method.getName().equals("getCopyAPI") && (args == null || args.length == 0) ? copyManager : NOT_HANDLED);
        return proxy(Connection.class, connection, (method, args) -> {
            if (method.getName().equals("unwrap") && args[0] == PGConnection.class) {
                return countingDriverConnection;
            }
            return NOT_HANDLED;
        });
    }

    private static final Object NOT_HANDLED = new Object();

    @FunctionalInterface
    private interface Interceptor
    {
        /** Returns the call's result, or {@link #NOT_HANDLED} to pass the call on. */
        Object intercept(Method method, Object[] args)
                throws Throwable;
    }

    private static <T> T proxy(Class<T> type, T target, Interceptor interceptor)
    {
        InvocationHandler handler = (proxy, method, args) -> {
            Object[] arguments = args == null ? new Object[0] : args;
            Object result = interceptor.intercept(method, arguments);
            if (result != NOT_HANDLED) {
                return result;
            }
            try {
                return method.invoke(target, args);
            }
            catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return type.cast(Proxy.newProxyInstance(CopyByteCounting.class.getClassLoader(), new Class<?>[] {type}, handler));
    }
}
