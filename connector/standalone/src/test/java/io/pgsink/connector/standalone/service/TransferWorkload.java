package io.pgsink.connector.standalone.service;

import org.intellij.lang.annotations.Language;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Transfers between accounts kept in two tables, {@code accounts_a} and {@code accounts_b}: every
 * source transaction keeps the sum of all balances at {@link #TOTAL}, so any state of the target
 * whose sum differs shows part of a source transaction. Large transfers debit every account of one
 * table many times (one change event per row per debit) before crediting the other table once at the
 * end: a flush that ends anywhere inside such a transaction commits a wrong sum.
 *
 * <p>Not thread-safe: one thread runs the transactions, on its own connection.
 */
final class TransferWorkload
{
    static final int ACCOUNTS = 100;
    static final long BALANCE = 1_000_000;
    static final long TOTAL = 2 * ACCOUNTS * BALANCE;

    @Language("SQL")
    static final String[] CREATE_TABLES = {
            "CREATE TABLE public.accounts_a (id integer PRIMARY KEY, balance bigint NOT NULL)",
            "CREATE TABLE public.accounts_b (id integer PRIMARY KEY, balance bigint NOT NULL)"};

    /** Both tables' sums in one statement, so at one snapshot. */
    @Language("SQL")
    static final String TOTAL_QUERY = "SELECT (SELECT coalesce(sum(balance), 0) FROM public.accounts_a) + (SELECT coalesce(sum(balance), 0) FROM public.accounts_b)";

    @Language("SQL")
    static final String CHECKSUM = "SELECT md5(coalesce((SELECT string_agg(t::text, '|' ORDER BY t.id) FROM public.accounts_a t), '') || '#'"
            + " || coalesce((SELECT string_agg(t::text, '|' ORDER BY t.id) FROM public.accounts_b t), ''))";

    /**
     * On a target: records the sum of both tables as every transaction that changes them commits
     * (a deferred constraint trigger runs at commit, after all of the flush's statements), in
     * {@code committed_totals}, one row per target transaction.
     */
    @Language("SQL")
    static final String[] AUDIT_COMMITS = {
            "CREATE TABLE public.committed_totals (tx bigint PRIMARY KEY, total bigint NOT NULL)",
            """
            CREATE FUNCTION public.record_total() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO public.committed_totals VALUES (txid_current(), (SELECT coalesce(sum(balance), 0) FROM public.accounts_a) + (SELECT coalesce(sum(balance), 0) FROM public.accounts_b))
                ON CONFLICT (tx) DO NOTHING;
                RETURN NULL;
            END $$""",
            "CREATE CONSTRAINT TRIGGER record_total AFTER INSERT OR UPDATE OR DELETE ON public.accounts_a DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.record_total()",
            "CREATE CONSTRAINT TRIGGER record_total AFTER INSERT OR UPDATE OR DELETE ON public.accounts_b DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.record_total()"};

    private final Connection connection;
    private final Random random;
    private long transactions;
    private long events;

    TransferWorkload(Connection connection, long seed)
            throws SQLException
    {
        this.connection = connection;
        this.random = new Random(seed);
        connection.setAutoCommit(false);
    }

    void seed()
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute("INSERT INTO public.accounts_a SELECT i, " + BALANCE + " FROM generate_series(1, " + ACCOUNTS + ") i");
            statement.execute("INSERT INTO public.accounts_b SELECT i, " + BALANCE + " FROM generate_series(1, " + ACCOUNTS + ") i");
        }
        connection.commit();
    }

    /** One to three transfers between random accounts of random tables: 2 to 6 change events. */
    void smallTransaction()
            throws SQLException
    {
        int transfers = 1 + random.nextInt(3);
        try (PreparedStatement debit = connection.prepareStatement("UPDATE public.accounts_" + table() + " SET balance = balance - ? WHERE id = ?")) {
            for (int i = 0; i < transfers; i++) {
                long amount = 1 + random.nextInt(100);
                debit.setLong(1, amount);
                debit.setInt(2, 1 + random.nextInt(ACCOUNTS));
                debit.executeUpdate();
                try (PreparedStatement credit = connection.prepareStatement("UPDATE public.accounts_" + table() + " SET balance = balance + ? WHERE id = ?")) {
                    credit.setLong(1, amount);
                    credit.setInt(2, 1 + random.nextInt(ACCOUNTS));
                    credit.executeUpdate();
                }
            }
        }
        connection.commit();
        transactions++;
        events += 2L * transfers;
    }

    /**
     * Debits every account of one table by 1, {@code rounds} times, then credits the other table's
     * accounts by {@code rounds} each: {@code (rounds + 1) * ACCOUNTS} change events in one transaction.
     */
    long largeTransaction(int rounds)
            throws SQLException
    {
        String debited = table();
        String credited = debited.equals("a") ? "b" : "a";
        try (Statement statement = connection.createStatement()) {
            for (int round = 0; round < rounds; round++) {
                statement.execute("UPDATE public.accounts_" + debited + " SET balance = balance - 1");
            }
            statement.execute("UPDATE public.accounts_" + credited + " SET balance = balance + " + rounds);
        }
        connection.commit();
        transactions++;
        long changes = (rounds + 1L) * ACCOUNTS;
        events += changes;
        return changes;
    }

    private String table()
    {
        return random.nextBoolean() ? "a" : "b";
    }

    long transactions()
    {
        return transactions;
    }

    long events()
    {
        return events;
    }

    static long total(Connection connection)
            throws SQLException
    {
        return single(connection, TOTAL_QUERY);
    }

    static String checksum(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(CHECKSUM)) {
            rows.next();
            return rows.getString(1);
        }
    }

    static long single(Connection connection, @Language("SQL") String query)
            throws SQLException
    {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(query)) {
            rows.next();
            return rows.getLong(1);
        }
    }

    /** Up to ten accounts whose rows differ between the two databases, with both rows (test data), and both sums. */
    static String differences(TestingDatabase source, TestingDatabase target)
    {
        try {
            List<String> differing = new ArrayList<>();
            for (String table : List.of("accounts_a", "accounts_b")) {
                String rows = "SELECT t.id, t::text FROM public." + table + " t ORDER BY t.id";
                Map<String, String> sourceRows = new TreeMap<>();
                source.query(rows).forEach(row -> sourceRows.put(row.get(0), row.get(1)));
                Map<String, String> targetRows = new TreeMap<>();
                target.query(rows).forEach(row -> targetRows.put(row.get(0), row.get(1)));
                Set<String> keys = new TreeSet<>(sourceRows.keySet());
                keys.addAll(targetRows.keySet());
                for (String key : keys) {
                    if (!Objects.equals(sourceRows.get(key), targetRows.get(key)) && differing.size() < 10) {
                        differing.add(table + " id " + key + ": source " + sourceRows.get(key) + ", target " + targetRows.get(key));
                    }
                }
            }
            return differing + "; sums: source " + source.query(TOTAL_QUERY) + ", target " + target.query(TOTAL_QUERY);
        }
        catch (SQLException e) {
            return "(cannot read them: " + e.getMessage() + ")";
        }
    }
}
