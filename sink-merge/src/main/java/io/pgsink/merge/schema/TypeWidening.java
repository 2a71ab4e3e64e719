package io.pgsink.merge.schema;

import io.pgsink.merge.table.TargetColumn;

import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Whether a target column holds every value of a source column type, and if not, whether changing
 * the target column to the source type loses nothing ({@code schema.evolution=add-columns-and-widen}):
 * {@code int2} to {@code int4} to {@code int8}, {@code float4} to {@code float8}, {@code varchar(n)}
 * to a longer {@code varchar} or {@code text}, {@code numeric(p,s)} to one with at least as many
 * digits on both sides of the point. Everything else is not safe: {@code timestamp} to
 * {@code timestamptz} reinterprets the values in the session's time zone, a shorter type cuts
 * values, {@code character(n)} pads them.
 */
final class TypeWidening
{
    enum Verdict
    {
        /** The target column holds every value of the source type. */
        HOLDS,
        /** Changing the target column to the source type keeps every value it holds. */
        WIDENS,
        /** Neither: the target must be changed by hand, if at all. */
        INCOMPATIBLE,
    }

    /** A type as {@code pg_type.typname} and its modifiers: length or precision, scale; -1 where unbounded. */
    private record Type(String base, int length, int scale) {}

    private static final Map<String, Integer> INTEGER_WIDTH = Map.of("int2", 2, "int4", 4, "int8", 8);
    private static final Set<String> STRINGS = Set.of("varchar", "text");

    private TypeWidening() {}

    /**
     * How {@code target} relates to the source column type {@code sourceType} (a declaration such as
     * {@code varchar(20)}).
     */
    static Verdict compare(TargetColumn target, String sourceType)
    {
        return compare(new Type(target.encodingType(), modifier(target.declaredType(), 0),
                modifier(target.declaredType(), 1)), parse(sourceType));
    }

    private static Verdict compare(Type target, Type source)
    {
        if (INTEGER_WIDTH.containsKey(target.base()) && INTEGER_WIDTH.containsKey(source.base())) {
            return INTEGER_WIDTH.get(target.base()) >= INTEGER_WIDTH.get(source.base()) ? Verdict.HOLDS
                    : Verdict.WIDENS;
        }
        if (isFloat(target.base()) && isFloat(source.base())) {
            return target.base().equals("float8") || source.base().equals("float4") ? Verdict.HOLDS : Verdict.WIDENS;
        }
        if (STRINGS.contains(target.base()) && STRINGS.contains(source.base())) {
            return holdsLength(target, source) ? Verdict.HOLDS : holdsLength(source, target) ? Verdict.WIDENS
                    : Verdict.INCOMPATIBLE;
        }
        if (target.base().equals("numeric") && source.base().equals("numeric")) {
            return holdsDigits(target, source) ? Verdict.HOLDS : holdsDigits(source, target) ? Verdict.WIDENS
                    : Verdict.INCOMPATIBLE;
        }
        if (target.base().equals("numeric") && target.length() < 0 && INTEGER_WIDTH.containsKey(source.base())) {
            return Verdict.HOLDS;
        }
        if (target.base().equals(source.base())) {
            // other modifiers (timestamp(3), bit(n)) are not compared
            return Verdict.HOLDS;
        }
        return Verdict.INCOMPATIBLE;
    }

    private static boolean isFloat(String base)
    {
        return base.equals("float4") || base.equals("float8");
    }

    /** {@code text} and unbounded {@code varchar} hold any string; {@code varchar(m)} strings up to m. */
    private static boolean holdsLength(Type wide, Type narrow)
    {
        int wideLength = wide.base().equals("text") ? -1 : wide.length();
        int narrowLength = narrow.base().equals("text") ? -1 : narrow.length();
        return wideLength < 0 || (narrowLength >= 0 && wideLength >= narrowLength);
    }

    private static boolean holdsDigits(Type wide, Type narrow)
    {
        if (wide.length() < 0) {
            return true;
        }
        if (narrow.length() < 0) {
            return false;
        }
        int wideScale = Math.max(wide.scale(), 0);
        int narrowScale = Math.max(narrow.scale(), 0);
        return wideScale >= narrowScale && wide.length() - wideScale >= narrow.length() - narrowScale;
    }

    private static Type parse(String declaration)
    {
        return new Type(SchemaEvolution.baseType(declaration), modifier(declaration, 0), modifier(declaration, 1));
    }

    /** The {@code index}-th number between the parentheses of a declaration ({@code numeric(10,2)}), or -1. */
    private static int modifier(String declaration, int index)
    {
        String type = declaration.toLowerCase(Locale.ROOT);
        int open = type.indexOf('(');
        int close = type.indexOf(')', open + 1);
        if (open < 0 || close < 0 || type.endsWith("[]")) {
            return -1;
        }
        String[] numbers = type.substring(open + 1, close).split(",");
        if (index >= numbers.length) {
            return -1;
        }
        try {
            return Integer.parseInt(numbers[index].trim());
        }
        catch (NumberFormatException e) {
            return -1;
        }
    }
}
