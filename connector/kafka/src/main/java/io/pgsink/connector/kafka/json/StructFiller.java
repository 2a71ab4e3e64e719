package io.pgsink.connector.kafka.json;

import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.jetbrains.annotations.Nullable;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Builds Connect structs from values {@link JsonValues} read and checked against their schema,
 * without Connect's check of each value again: {@code Struct.put} validates every field (its
 * class, and a nested struct's schema and fields a second time) and builds a location text for
 * the error it might throw, which took half of the task thread's time of
 * {@code record.format=debezium-json} in a profile (issue #29). The values go straight into the
 * struct's own array; where the running Connect has no such array (its {@code Struct} changed),
 * they go through {@code put} as before.
 *
 * <p>Stateless.
 */
final class StructFiller
{
    @Nullable
    private static final VarHandle VALUES = valuesHandle();

    private StructFiller() {}

    /**
     * The array {@code struct} keeps its values in, to be filled in field index order; null when it
     * cannot be reached, and {@link #put} is to be used.
     */
    @Nullable
    static Object[] values(Struct struct)
    {
        return VALUES == null ? null : (Object[]) VALUES.get(struct);
    }

    @Nullable
    private static VarHandle valuesHandle()
    {
        try {
            VarHandle handle = MethodHandles.privateLookupIn(Struct.class, MethodHandles.lookup())
                    .findVarHandle(Struct.class, "values", Object[].class);
            // a struct of one optional field: the handle must see the array put fills
            Schema probe = SchemaBuilder.struct()
                    .field("f", Schema.OPTIONAL_INT32_SCHEMA).build();
            Struct struct = new Struct(probe).put("f", 7);
            Object[] values = (Object[]) handle.get(struct);
            return values.length == 1 && Integer.valueOf(7).equals(values[0]) ? handle : null;
        }
        catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }
}
