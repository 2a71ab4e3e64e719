package io.pgsink.merge.dialect;

/**
 * What a dialect lets a flush use, given the server's major version
 * ({@code DatabaseMetaData.getDatabaseMajorVersion()}: 9 for Greenplum 6, 12 for Greenplum 7, 14
 * for Apache Cloudberry, the PostgreSQL release otherwise).
 */
public interface ServerFeatures
{
    /** Whether {@code MERGE} can apply a flush's changes (PostgreSQL 15+; neither Greenplum nor Cloudberry has it). */
    boolean supportsMerge(int serverMajorVersion);

    /**
     * Whether, without {@code MERGE}, staged changes to keys the target may hold are applied
     * faster by {@code INSERT ... ON CONFLICT DO UPDATE} (and a delete of deleted keys only) than
     * by deleting every touched key and inserting the final rows.
     */
    boolean prefersUpsert(int serverMajorVersion);

    /**
     * Whether the catalog tells generated and identity columns apart ({@code pg_attribute.attgenerated},
     * {@code attidentity}, PostgreSQL 12+), which the sink reads only where {@code MERGE} needs them.
     */
    boolean readsGeneratedColumns(int serverMajorVersion);

    /**
     * Whether {@code copy.format=binary} may send {@code COPY ... (FORMAT binary)}: the binary
     * formats pgsink writes are PostgreSQL's since 8.x (numeric infinities need 14, as in text);
     * Greenplum 7 and Cloudberry read them, Greenplum 6 is kept on CSV.
     */
    boolean readsBinaryCopy(int serverMajorVersion);

    /**
     * Whether a small table batch may skip COPY and the staging table ({@code SmallBatchWriter}):
     * PostgreSQL; not Greenplum, where statements are dispatched to every segment and the upsert and
     * staging-table choices were measured for COPY.
     */
    boolean bindsSmallBatches();
}
