package io.pgsink.merge.write;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.merge.plan.TablePlan;
import io.pgsink.merge.table.TargetTable;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

import java.sql.SQLException;

/**
 * Unique and exclusion violations of the indexes a target has beyond its primary key
 * ({@link TargetTable#uniqueIndexes}). Tables with such indexes are applied by deleting every
 * touched key before inserting the final rows ({@link TablePlan#mergeable}), so the final rows of
 * valid source transactions never collide with one another: a violation that remains is one row's
 * collision with a target row the batch does not touch, which no retry can mend.
 */
final class UniqueViolations
{
    /** SQLState 23P01. */
    static final String EXCLUSION_VIOLATION = "23P01";
    static final String REMEDY = "; another key's row in the target holds the same value in this index"
            + " beyond the primary key (a row the source does not have, or an index the source lacks):"
            + " delete or change that row, or drop the index, and apply the row again";

    private UniqueViolations() {}

    /**
     * Whether {@code e} is a unique violation of one of {@code target}'s indexes beyond its primary
     * key, as the server names it; not a fresh key that exists after all.
     */
    static boolean beyondKey(TargetTable target, SQLException e)
    {
        if (!SqlFailures.UNIQUE_VIOLATION.equals(e.getSQLState()) || !(e instanceof PSQLException psql)) {
            return false;
        }
        ServerErrorMessage server = psql.getServerErrorMessage();
        return server != null && server.getConstraint() != null
                && target.uniqueIndexes().contains(server.getConstraint());
    }

    /** {@link SqlFailures#describe}, followed by what to do about a unique or exclusion violation. */
    static String describe(SQLException e)
    {
        String state = e.getSQLState();
        boolean violation = SqlFailures.UNIQUE_VIOLATION.equals(state) || EXCLUSION_VIOLATION.equals(state);
        return SqlFailures.describe(e) + (violation ? REMEDY : "");
    }
}
