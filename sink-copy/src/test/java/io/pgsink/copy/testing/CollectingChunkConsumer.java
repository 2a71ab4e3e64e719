package io.pgsink.copy.testing;

import io.pgsink.copy.write.ChunkConsumer;
import io.pgsink.copy.write.CsvWriter;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Keeps copies of the chunks a {@link CsvWriter} hands over. */
public final class CollectingChunkConsumer
        implements ChunkConsumer
{
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final List<byte[]> chunks = new ArrayList<>();

    @Override
    public void accept(byte[] buffer, int offset, int length)
    {
        byte[] chunk = new byte[length];
        System.arraycopy(buffer, offset, chunk, 0, length);
        chunks.add(chunk);
        bytes.write(chunk, 0, length);
    }

    public byte[] bytes()
    {
        return bytes.toByteArray();
    }

    public String text()
    {
        return bytes.toString(StandardCharsets.UTF_8);
    }

    public List<byte[]> chunks()
    {
        return chunks;
    }
}
