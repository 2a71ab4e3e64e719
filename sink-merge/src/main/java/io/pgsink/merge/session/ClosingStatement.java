package io.pgsink.merge.session;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * A transaction's last statement, left to travel with its {@code COMMIT}
 * ({@link TargetTransaction#commit(long, java.util.Optional)}): one round trip for both, where each took its own.
 */
@FunctionalInterface
public interface ClosingStatement
{
    /**
     * Executes the statement followed by {@code commit} ({@code "; COMMIT"}) as one execution: the server runs them
     * in order and stops at the first failure, so that {@code COMMIT} only runs after the statement succeeded.
     */
    void executeWith(Connection connection, String commit)
            throws SQLException;
}
