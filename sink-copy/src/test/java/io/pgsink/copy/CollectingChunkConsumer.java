package io.pgsink.copy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Keeps copies of the chunks a {@link CsvWriter} hands over. */
final class CollectingChunkConsumer
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

    byte[] bytes()
    {
        return bytes.toByteArray();
    }

    String text()
    {
        return bytes.toString(StandardCharsets.UTF_8);
    }

    List<byte[]> chunks()
    {
        return chunks;
    }
}
