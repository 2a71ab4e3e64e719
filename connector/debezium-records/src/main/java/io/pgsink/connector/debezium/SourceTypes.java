package io.pgsink.connector.debezium;

import org.apache.kafka.connect.data.Schema;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Reads the source column type of a field: exactly, from the parameters Debezium adds with
 * {@code column.propagate.source.type} (or {@code datatype.propagate.source.type}); otherwise a
 * best guess from the Connect schema, good enough to create a target table.
 */
final class SourceTypes
{
    static final String TYPE_PARAMETER = "__debezium.source.column.type";
    static final String LENGTH_PARAMETER = "__debezium.source.column.length";
    static final String SCALE_PARAMETER = "__debezium.source.column.scale";

    private SourceTypes() {}

    /**
     * The propagated type name, lower case as in {@code pg_type} (e.g. {@code varbit}, {@code _int4}), when Debezium
     * sent it.
     */
    static Optional<String> propagatedName(Schema schema)
    {
        Map<String, String> parameters = schema.parameters();
        if (parameters == null) {
            return Optional.empty();
        }
        String type = parameters.get(TYPE_PARAMETER);
        if (type == null || type.isBlank()) {
            return Optional.empty();
        }
        return Optional.of(type.toLowerCase(Locale.ROOT));
    }

    /**
     * A column type for {@code CREATE TABLE}: {@code varchar(20)}, {@code numeric(10,2)}, {@code int4[]}..., or empty
     * when unknown.
     */
    static String declaration(Schema schema)
    {
        Optional<String> propagated = propagatedName(schema);
        if (propagated.isPresent()) {
            String name = propagated.get();
            if (name.startsWith("_")) {
                return typeName(name.substring(1)) + "[]";
            }
            Map<String, String> parameters = schema.parameters();
            int length = parse(parameters.get(LENGTH_PARAMETER));
            int scale = parse(parameters.get(SCALE_PARAMETER));
            switch (name) {
                case "varchar", "bpchar", "bit", "varbit" -> {
                    return length > 0 && length < 10_485_760 ? name + "(" + length + ")" : name;
                }
                case "numeric" -> {
                    if (length > 0 && length <= 1000) {
                        return "numeric(" + length + "," + Math.max(scale, 0) + ")";
                    }
                    return name;
                }
                default -> {
                    return typeName(name);
                }
            }
        }
        return guess(schema);
    }

    /**
     * A {@code pg_type} name as it must be written in DDL: {@code char} is PostgreSQL's one-byte
     * {@code "char"} only when quoted (unquoted, {@code char} means {@code character(1)}, which
     * refuses the non-ASCII bytes {@code "char"} holds).
     */
    private static String typeName(String name)
    {
        return name.equals("char") ? "\"char\"" : name;
    }

    private static String guess(Schema schema)
    {
        String name = schema.name();
        if (name != null) {
            switch (name) {
                case ValueConverters.DATE, ValueConverters.CONNECT_DATE -> {
                    return "date";
                }
                case ValueConverters.TIME, ValueConverters.MICRO_TIME, ValueConverters.NANO_TIME,
                        ValueConverters.CONNECT_TIME -> {
                    return "time";
                }
                case ValueConverters.TIMESTAMP, ValueConverters.MICRO_TIMESTAMP, ValueConverters.NANO_TIMESTAMP,
                        ValueConverters.CONNECT_TIMESTAMP -> {
                    return "timestamp";
                }
                case ValueConverters.ZONED_TIMESTAMP -> {
                    return "timestamptz";
                }
                case ValueConverters.ZONED_TIME -> {
                    return "timetz";
                }
                case ValueConverters.CONNECT_DECIMAL, ValueConverters.VARIABLE_SCALE_DECIMAL -> {
                    return "numeric";
                }
                case ValueConverters.MICRO_DURATION, ValueConverters.INTERVAL -> {
                    return "interval";
                }
                case ValueConverters.BITS -> {
                    return "varbit";
                }
                case ValueConverters.POINT -> {
                    return "point";
                }
                case "io.debezium.data.Json" -> {
                    return "jsonb";
                }
                case "io.debezium.data.Uuid" -> {
                    return "uuid";
                }
                case "io.debezium.data.Xml" -> {
                    return "xml";
                }
                default -> {
                    // text-like logical types fall through to their Connect type
                }
            }
        }
        switch (schema.type()) {
            case INT8, INT16 -> {
                return "int2";
            }
            case INT32 -> {
                return "int4";
            }
            case INT64 -> {
                return "int8";
            }
            case FLOAT32 -> {
                return "float4";
            }
            case FLOAT64 -> {
                return "float8";
            }
            case BOOLEAN -> {
                return "bool";
            }
            case STRING -> {
                return "text";
            }
            case BYTES -> {
                return "bytea";
            }
            case ARRAY -> {
                String element = guess(schema.valueSchema());
                return element.isEmpty() ? "" : element + "[]";
            }
            case MAP -> {
                return "hstore";
            }
            case STRUCT -> {
                return "";
            }
        }
        return "";
    }

    private static int parse(String value)
    {
        if (value == null) {
            return -1;
        }
        try {
            return Integer.parseInt(value);
        }
        catch (NumberFormatException e) {
            return -1;
        }
    }
}
