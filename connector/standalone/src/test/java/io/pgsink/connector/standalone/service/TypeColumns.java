package io.pgsink.connector.standalone.service;

import java.util.List;
import java.util.Set;

/**
 * The type tests' columns: one per PostgreSQL type Debezium emits, with values that probe each
 * type's edges, and the table of all of them ({@link #createTable}) that {@link DataTypesIT}
 * streams and the verify tests compare. A row's values come from {@link #value}, which leaves out
 * what one of the two servers' versions cannot hold.
 *
 * @param numericInfinity whether both servers take numeric 'Infinity' (PostgreSQL 14+)
 * @param charOctalEscapes whether the target reads the source's text of a non-ASCII "char" (not 16+ to older)
 */
public record TypeColumns(boolean numericInfinity, boolean charOctalEscapes)
{
    /**
     * Column name, type, and values as SQL literals; row k takes value k modulo the count. Columns
     * are compared as {@code name::text}, or with {@code comparison} where Debezium keeps the value
     * but not its text.
     */
    public record Column(String name, String type, List<String> values, String comparison)
    {
        public Column(String name, String type, List<String> values)
        {
            this(name, type, values, name + "::text");
        }
    }

    public static final List<Column> COLUMNS = List.of(
            new Column("c_int2", "smallint", List.of("-32768", "32767", "0")),
            new Column("c_int4", "integer", List.of("-2147483648", "2147483647", "7")),
            new Column("c_int8", "bigint", List.of("-9223372036854775808", "9223372036854775807", "42")),
            new Column("c_float4", "real", List.of("'NaN'", "'-Infinity'", "1.5e-10", "3.4028235e38")),
            new Column("c_float8", "double precision", List.of("'Infinity'", "-1.7976931348623157e308", "0.1", "'NaN'")),
            new Column("c_numeric", "numeric", List.of("'NaN'", "123456789012345678901234567890.123456789", "1e-20", "'Infinity'", "-0.000",
                    // 1000 digits before the point and 500 after, beyond what numeric(p) may declare
                    "(repeat('9', 1000) || '.' || repeat('1', 499) || '7')::numeric", "'-Infinity'")),
            new Column("c_decimal", "numeric(12,2)", List.of("1.50", "-0.01", "9999999999.99")),
            new Column("c_money", "money", List.of("12.34", "-1000000.5", "0")),
            new Column("c_bool", "boolean", List.of("true", "false")),
            new Column("c_text", "text", List.of("''", "'quote\" comma, backslash\\ tab\t'", "E'new\\nline'", "'ünïcødé ✓ 日本'", "'\\.'",
                    "'emoji 😀👍🏽 zero\u200bwidth \"quoted\" ''apostrophe'' {braces} ,;|'",
                    // about 300 kB, stored out of line: the streamed update below leaves it unchanged
                    "(SELECT string_agg(md5(g::text) || ' ✓ ' || chr(10), '') FROM generate_series(1, 8000) g)")),
            new Column("c_varchar", "varchar(10)", List.of("'short'", "' padded '", "''", "'😀😀😀😀😀😀😀😀😀😀'")),
            new Column("c_char", "char(5)", List.of("'ab'", "'abcde'")),
            // the one-byte "char": a byte above 127 is sent as octal text, and must not become character(1) in a created table
            new Column("c_byte", "\"char\"", List.of("'a'", "E'\\\\351'", "E'\\\\001'")),
            new Column("c_bytea", "bytea", List.of("'\\x00ff10'", "''", "'\\x5c2c22'", "'\\x0a0d09225c'",
                    "(SELECT decode(string_agg(md5(g::text), ''), 'hex') FROM generate_series(1, 10000) g)")),
            // Debezium reads BC dates as AD (its date parsing drops the era): see documentedDebeziumLimitsArriveAsDocumented
            new Column("c_date", "date", List.of("'2024-02-29'", "'infinity'", "'-infinity'", "'0001-01-01'", "'1970-01-01'")),
            new Column("c_time", "time", List.of("'00:00'", "'23:59:59.999999'", "'24:00:00'", "'12:34:56.5'")),
            new Column("c_time3", "time(3)", List.of("'01:02:03.456'", "'23:59:59.999'")),
            // Debezium sends time with time zone shifted to UTC: same instant, the offset is not kept
            new Column("c_timetz", "timetz", List.of("'10:15:30+05:30'", "'23:59:59.123456-08'"), "(c_timetz AT TIME ZONE 'UTC')::text"),
            new Column("c_timestamp", "timestamp", List.of("'2024-01-01 12:34:56.123456'", "'infinity'", "'-infinity'", "'1900-01-01'", "'0001-01-01 00:00:00 BC'")),
            new Column("c_timestamp3", "timestamp(3)", List.of("'2024-01-01 12:34:56.789'", "'1969-12-31 23:59:59.999'")),
            new Column("c_timestamptz", "timestamptz", List.of("'2024-01-01 12:34:56.123456+02'", "'infinity'", "'-infinity'", "'1960-06-30 23:00:00-05'", "'0044-03-15 12:00:00+00 BC'")),
            new Column("c_interval", "interval", List.of("'1 year 2 mons 3 days 04:05:06.789'", "'-1 days +02:00'", "'0'", "'1 mon -1 days'", "'-00:00:00.000001'", "'178000000 years'")),
            new Column("c_uuid", "uuid", List.of("'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'00000000-0000-0000-0000-000000000000'")),
            new Column("c_json", "json", List.of("'{\"b\": 1,  \"a\": [1, 2]}'", "'[]'", "'\"text\"'")),
            new Column("c_jsonb", "jsonb", List.of("'{\"b\": 1, \"a\": [1, 2.50, null, \"x\\\"y\"]}'", "'{}'",
                    "'{\"e\": \"\\u00e9 😀 \\\\ \\n\", \"n\": 1e400, \"z\": \"\"}'",
                    "(SELECT jsonb_agg(md5(g::text)) FROM generate_series(1, 5000) g)")),
            new Column("c_xml", "xml", List.of("'<a b=\"1\">text &amp; more</a>'", "'<empty/>'")),
            new Column("c_inet", "inet", List.of("'192.168.0.1/24'", "'::1'")),
            new Column("c_cidr", "cidr", List.of("'10.0.0.0/8'", "'2001:db8::/32'")),
            new Column("c_macaddr", "macaddr", List.of("'08:00:2b:01:02:03'")),
            new Column("c_macaddr8", "macaddr8", List.of("'08:00:2b:01:02:03:04:05'")),
            new Column("c_int4range", "int4range", List.of("'[1,10)'", "'empty'", "'(,5]'")),
            new Column("c_numrange", "numrange", List.of("'[1.5,2.5]'")),
            new Column("c_int8range", "int8range", List.of("'[-9223372036854775808,9223372036854775807)'", "'(1,)'")),
            new Column("c_tsrange", "tsrange", List.of("'[\"2024-01-01 00:00:00\",infinity)'", "'empty'")),
            new Column("c_name", "name", List.of("'a name with spaces and \"quotes\"'", "''")),
            new Column("c_tstzrange", "tstzrange", List.of("'[2024-01-01 00:00:00+00,2024-02-01 00:00:00+00)'")),
            new Column("c_daterange", "daterange", List.of("'[2024-01-01,2024-12-31]'")),
            new Column("c_point", "point", List.of("'(1.5,-2)'", "'(0,1e-10)'")),
            new Column("c_line", "line", List.of("'{1,-1,0}'")),
            new Column("c_lseg", "lseg", List.of("'[(0,0),(1,1)]'")),
            new Column("c_box", "box", List.of("'(1,1),(0,0)'")),
            new Column("c_path", "path", List.of("'[(0,0),(1,1),(2,0)]'", "'((0,0),(1,1))'")),
            new Column("c_polygon", "polygon", List.of("'((0,0),(1,1),(1,0))'")),
            new Column("c_circle", "circle", List.of("'<(0,0),2.5>'")),
            new Column("c_bit", "bit(8)", List.of("B'00000101'", "B'10000000'")),
            new Column("c_bit1", "bit(1)", List.of("B'1'", "B'0'")),
            new Column("c_varbit", "varbit(10)", List.of("B'0010'", "B'1'", "B''")),
            new Column("c_tsvector", "tsvector", List.of("'a fat cat:3 sat'")),
            new Column("c_tsquery", "tsquery", List.of("'fat & (rat | cat)'")),
            new Column("c_pg_lsn", "pg_lsn", List.of("'16/B374D848'")),
            new Column("c_enum", "mood", List.of("'happy'", "'sad'")),
            new Column("c_domain", "positive", List.of("1", "2147483647")),
            new Column("c_hstore", "hstore", List.of("'a=>1, \"b c\"=>NULL, \"q\\\"uote\"=>\"x\\\\y\"'", "''")),
            new Column("c_citext", "citext", List.of("'MiXeD'")),
            new Column("c_ltree", "ltree", List.of("'top.middle.leaf'")),
            new Column("c_oid", "oid", List.of("4294967295", "0")),
            new Column("c_int_array", "integer[]", List.of("'{1,NULL,3}'", "'{}'")),
            new Column("c_int_matrix", "integer[][]", List.of("'{{1,2},{3,4}}'")),
            new Column("c_bigint_array", "bigint[]", List.of("'{9223372036854775807,-1}'")),
            new Column("c_text_array", "text[]", List.of("'{\"a,b\",\"c\\\"d\",NULL,\"\",\"NULL\"}'", "'{}'",
                    "ARRAY['back\\slash', E'new\\nline', '😀', '{brace}', ' space ', 'comma,', 'quote\"']")),
            new Column("c_numeric_array", "numeric[]", List.of("'{1.50,NaN,-3}'")),
            new Column("c_bool_array", "boolean[]", List.of("'{t,f,NULL}'")),
            new Column("c_date_array", "date[]", List.of("'{2024-01-01,infinity}'")),
            new Column("c_timestamptz_array", "timestamptz[]", List.of("'{\"2024-01-01 00:00:00+00\",\"2024-06-01 12:00:00.5+02\"}'")),
            new Column("c_uuid_array", "uuid[]", List.of("'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'")),
            new Column("c_jsonb_array", "jsonb[]", List.of("ARRAY['{\"a\": 1}'::jsonb, '[2]'::jsonb]")),
            new Column("c_interval_array", "interval[]", List.of("'{\"1 day\",\"-02:00:00\"}'")),
            new Column("c_money_array", "money[]", List.of("'{1.5,-2}'")),
            new Column("c_varbit_array", "varbit[]", List.of("'{0011,1}'")),
            new Column("c_point_array", "point[]", List.of("'{\"(1,2)\",\"(3,4)\"}'")),
            new Column("c_enum_array", "mood[]", List.of("'{happy,sad}'")),
            new Column("c_domain_array", "positive[]", List.of("'{1,2}'")),
            new Column("c_timetz_array", "timetz[]", List.of("'{10:15:30+05:30}'")),
            new Column("c_bytea_array", "bytea[]", List.of("'{\"\\\\x00ff\",NULL}'")),
            new Column("c_hstore_array", "hstore[]", List.of("ARRAY['a=>1'::hstore]")));

    public static final int ROWS = 8;

    /** The types of {@link #COLUMNS} that are not the server's own: created per database, with OIDs of their own. */
    public static final Set<String> CREATED_TYPES = Set.of("mood", "positive", "hstore", "citext", "ltree", "mood[]", "positive[]", "hstore[]");

    /** What the types table needs in a database, source or target. */
    public static final List<String> TYPES = List.of(
            "CREATE EXTENSION hstore",
            "CREATE EXTENSION citext",
            "CREATE EXTENSION ltree",
            "CREATE TYPE mood AS ENUM ('happy', 'sad')",
            "CREATE DOMAIN positive AS integer CHECK (VALUE > 0)");

    /** The columns of a source of major version {@code sourceVersion} and a target of {@code targetVersion}. */
    public static TypeColumns of(int sourceVersion, int targetVersion)
    {
        return new TypeColumns(Math.min(sourceVersion, targetVersion) >= 14, sourceVersion < 16 || targetVersion >= 16);
    }

    /** {@code CREATE TABLE table (id int PRIMARY KEY, ...)} with every column of {@link #COLUMNS}. */
    public static String createTable(String table)
    {
        StringBuilder sql = new StringBuilder("CREATE TABLE " + table + " (id int PRIMARY KEY");
        for (Column column : COLUMNS) {
            sql.append(", ").append(column.name()).append(' ').append(column.type());
        }
        return sql.append(')').toString();
    }

    /**
     * Value {@code row} of {@code column} as an SQL literal, as NULL where one of the two versions
     * cannot carry it: {@code numeric} infinities (PostgreSQL 14+) where the source or the target is
     * older; a non-ASCII {@code "char"} from a PostgreSQL 16+ source to an older target, which reads
     * the {@code \351} text 16 writes as a backslash (docs/concepts/limitations.md).
     */
    public String value(Column column, int row)
    {
        String value = column.values().get(row % column.values().size());
        boolean infinity = column.type().equals("numeric") && value.contains("Infinity");
        boolean nonAsciiChar = column.type().equals("\"char\"") && value.contains("351");
        return infinity && !numericInfinity || nonAsciiChar && !charOctalEscapes ? "NULL" : value;
    }

    /** {@link #ROWS} rows into {@code table} ({@link #createTable}), ids from {@code firstId}, the last all NULLs. */
    public String insertRows(String table, int firstId)
    {
        StringBuilder sql = new StringBuilder("INSERT INTO " + table + " VALUES ");
        for (int row = 0; row < ROWS; row++) {
            sql.append(row == 0 ? "(" : ", (").append(firstId + row);
            for (Column column : COLUMNS) {
                sql.append(", ").append(row == ROWS - 1 ? "NULL" : value(column, row));
            }
            sql.append(')');
        }
        return sql.toString();
    }
}
