package io.pgsink.connector.standalone.demo;

import org.intellij.lang.annotations.Language;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A live change workload on a demo table ({@code public.orders}), used by the quickstart and the
 * end-to-end tests: transactions of one to five inserts, updates, deletes, primary-key changes and
 * large (TOASTed) notes that later updates leave unchanged.
 *
 * <p>Not thread-safe: one thread drives it, on its own connection.
 */
public final class DemoWorkload
{
    @Language("SQL")
    public static final String CREATE_TABLE = """
            CREATE TABLE public.orders (
                id bigint PRIMARY KEY,
                customer text NOT NULL,
                status text NOT NULL,
                amount numeric(12,2),
                items int4[],
                note text,
                updated_at timestamptz NOT NULL)""";

    /**
     * Run on the source only. The workload changes primary keys of rows whose large note is stored
     * out of line: PostgreSQL then logs the new row without the unchanged note, and only with
     * REPLICA IDENTITY FULL does the old row (and with it the note) reach Debezium, which then puts
     * it into the new row. With the default identity the sink would have no note to write for the
     * new key and stops with an error that says so.
     */
    @Language("SQL")
    public static final String SOURCE_REPLICA_IDENTITY = "ALTER TABLE public.orders REPLICA IDENTITY FULL";

    /** Row count and an md5 of every row's text in key order: equal checksums, equal tables. */
    @Language("SQL")
    static final String CHECKSUM =
            "SELECT count(*), coalesce(md5(string_agg(t::text, '|' ORDER BY t.id)), '-') FROM public.orders t";

    private static final String[] STATUSES = {"new", "paid", "packed", "shipped", "delivered", "returned"};
    private static final String[] CUSTOMERS = {"Ada", "Grace", "Edsger", "Barbara", "Donald", "Frances", "Ken",
            "Leslie", "Niklaus", "Margaret"};

    private final Connection connection;
    private final Random random;
    private final List<Long> ids = new ArrayList<>();
    private long nextId;
    private long changes;
    private long transactions;

    public DemoWorkload(Connection connection, long seed)
            throws SQLException
    {
        this.connection = connection;
        this.random = new Random(seed);
        connection.setAutoCommit(false);
        try (Statement statement = connection.createStatement(); ResultSet rows =
                statement.executeQuery("SELECT id FROM public.orders ORDER BY id")) {
            while (rows.next()) {
                ids.add(rows.getLong(1));
            }
        }
        connection.commit();
        nextId = ids.isEmpty() ? 1 : ids.get(ids.size() - 1) + 1;
    }

    /** Inserts {@code rows} rows in one transaction. */
    public void seed(int rows)
            throws SQLException
    {
        for (int i = 0; i < rows; i++) {
            insert();
        }
        connection.commit();
        transactions++;
    }

    /** Runs one transaction of one to five random changes. */
    public void runTransaction()
            throws SQLException
    {
        int statements = 1 + random.nextInt(5);
        for (int i = 0; i < statements; i++) {
            int kind = random.nextInt(100);
            if (ids.isEmpty() || kind < 45) {
                insert();
            }
            else if (kind < 75) {
                updateStatus();
            }
            else if (kind < 87) {
                delete();
            }
            else if (kind < 93) {
                changeKey();
            }
            else {
                writeLargeNote();
            }
        }
        connection.commit();
        transactions++;
    }

    public long changes()
    {
        return changes;
    }

    long transactions()
    {
        return transactions;
    }

    private void insert()
            throws SQLException
    {
        long id = nextId++;
        try (PreparedStatement statement = connection.prepareStatement(
                "INSERT INTO public.orders (id, customer, status, amount, items, note, updated_at) VALUES (?, ?, ?, "
                        + "?, ?, ?, ?)")) {
            statement.setLong(1, id);
            statement.setString(2, CUSTOMERS[random.nextInt(CUSTOMERS.length)]);
            statement.setString(3, STATUSES[0]);
            statement.setBigDecimal(4, BigDecimal.valueOf(random.nextInt(10_000_000), 2));
            statement.setArray(5, connection.createArrayOf("int4", new Object[] {random.nextInt(100),
                    random.nextInt(100), null}));
            statement.setString(6, random.nextInt(4) == 0 ? null : "order " + id + ", \"gift\", line\nbreak");
            statement.setTimestamp(7, new Timestamp(System.currentTimeMillis()));
            statement.executeUpdate();
        }
        ids.add(id);
        changes++;
    }

    private void updateStatus()
            throws SQLException
    {
        try (PreparedStatement statement =
                connection.prepareStatement("UPDATE public.orders SET status = ?, amount = amount + 1, updated_at = ? "
                + "WHERE id = ?")) {
            statement.setString(1, STATUSES[random.nextInt(STATUSES.length)]);
            statement.setTimestamp(2, new Timestamp(System.currentTimeMillis()));
            statement.setLong(3, pick());
            statement.executeUpdate();
        }
        changes++;
    }

    private void delete()
            throws SQLException
    {
        int index = random.nextInt(ids.size());
        long id = ids.get(index);
        removeAt(index);
        try (PreparedStatement statement = connection.prepareStatement("DELETE FROM public.orders WHERE id = ?")) {
            statement.setLong(1, id);
            statement.executeUpdate();
        }
        changes++;
    }

    private void changeKey()
            throws SQLException
    {
        int index = random.nextInt(ids.size());
        long id = ids.get(index);
        long newId = nextId++;
        removeAt(index);
        try (PreparedStatement statement =
                connection.prepareStatement("UPDATE public.orders SET id = ?, status = 'rekeyed' WHERE id = ?")) {
            statement.setLong(1, newId);
            statement.setLong(2, id);
            statement.executeUpdate();
        }
        ids.add(newId);
        changes++;
    }

    private void writeLargeNote()
            throws SQLException
    {
        // random letters do not compress, so the value is stored out of line (TOAST) and later
        // updates that leave it alone do not send it
        StringBuilder note = new StringBuilder(6000);
        for (int i = 0; i < 6000; i++) {
            note.append((char) ('a' + random.nextInt(26)));
        }
        try (PreparedStatement statement =
                connection.prepareStatement("UPDATE public.orders SET note = ? WHERE id = ?")) {
            statement.setString(1, note.toString());
            statement.setLong(2, pick());
            statement.executeUpdate();
        }
        changes++;
    }

    private long pick()
    {
        return ids.get(random.nextInt(ids.size()));
    }

    private void removeAt(int index)
    {
        int last = ids.size() - 1;
        ids.set(index, ids.get(last));
        ids.remove(last);
    }

    /** {@link #CHECKSUM} of the database behind {@code connection}: row count and md5. */
    public static String checksum(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(CHECKSUM)) {
            rows.next();
            return rows.getLong(1) + " rows, md5 " + rows.getString(2);
        }
    }
}
