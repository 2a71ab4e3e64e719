package io.pgsink.merge.state;

import io.pgsink.core.change.SourcePosition;
import io.pgsink.merge.dialect.Dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.TreeMap;

import static java.util.Objects.requireNonNull;

/**
 * What a flush writes before its data where positions go first (PostgreSQL): the position of each
 * source partition ({@link PositionStore}) and the check of each writer fence the applier holds
 * ({@link WriterFence}), in that order, as one multi-statement {@code PreparedStatement}. pgjdbc
 * sends its statements together, after the transaction's {@code BEGIN}, and reads their results
 * after one {@code Sync}: one round trip however many partitions and fences (a Kafka Connect task
 * holds a fence per topic partition), where a statement each took a round trip each.
 *
 * <p>Where a position takes two statements, the second only when the first wrote nothing
 * (Greenplum, which stores positions last), the statements go one by one.
 *
 * <p>Stateless apart from its two collaborators; every method works on the connection it is given.
 */
public final class FlushHead
{
    private final PositionStore positions;
    private final WriterFence fence;

    public FlushHead(PositionStore positions, WriterFence fence)
    {
        this.positions = requireNonNull(positions, "positions is null");
        this.fence = requireNonNull(fence, "fence is null");
    }

    /**
     * Stores {@code stored} and checks {@code claims} in the connection's transaction.
     *
     * @return the transaction's id where the position statement returns it, else 0 (see {@link PositionStore#store})
     * @throws WriterFencedException when another writer claimed one of the fences since
     */
    public long write(Connection connection, Dialect dialect, Map<String, SourcePosition> stored,
            Map<String, Long> claims)
            throws SQLException
    {
        Optional<String> single = positions.singleStatement(dialect);
        if (single.isEmpty() || stored.size() + claims.size() <= 1) {
            long transactionId = positions.store(connection, dialect, stored);
            fence.check(connection, claims);
            return transactionId;
        }
        List<SourcePosition> inOrder = List.copyOf(new TreeMap<>(stored).values());
        List<Map.Entry<String, Long>> checks = List.copyOf(new TreeMap<>(claims).entrySet());
        StringJoiner sql = new StringJoiner("; ");
        inOrder.forEach(position -> sql.add(single.get()));
        checks.forEach(check -> sql.add(fence.checkStatement()));
        long transactionId = 0;
        try (PreparedStatement statement = connection.prepareStatement(sql.toString())) {
            int parameter = 1;
            for (SourcePosition position : inOrder) {
                positions.bind(statement, parameter, position);
                parameter += 3;
            }
            for (Map.Entry<String, Long> check : checks) {
                fence.bindCheck(statement, parameter, check.getKey(), check.getValue());
                parameter += 3;
            }
            // the results come in the statements' order: a row with the transaction's id per position, then a count per
            // check
            boolean rows = statement.execute();
            for (int i = 0; i < inOrder.size(); i++, rows = statement.getMoreResults()) {
                if (!rows) {
                    throw new IllegalStateException("Storing position " + (i + 1) + " of " + inOrder.size()
                            + " returned no rows");
                }
                try (ResultSet result = statement.getResultSet()) {
                    if (result.next()) {
                        transactionId = result.getLong(1);
                    }
                }
            }
            for (Map.Entry<String, Long> check : checks) {
                if (rows) {
                    throw new IllegalStateException("The check of writer fence '" + check.getKey() + "' returned rows");
                }
                fence.checked(check.getKey(), check.getValue(), statement.getUpdateCount());
                rows = statement.getMoreResults();
            }
        }
        return transactionId;
    }
}
