package io.pgsink.connector.standalone;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One run of the {@code pgsink} command line in this JVM, with what it printed.
 *
 * @param exitCode what {@code pgsink} would exit with
 * @param out what it printed to standard output
 * @param err what it printed to standard error
 */
record TestingCommand(int exitCode, String out, String err)
{
    static TestingCommand run(String... args)
    {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exitCode = PgsinkCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new TestingCommand(exitCode, out.toString(), err.toString());
    }

    /** Writes {@code properties} to {@code file}, in key order, for {@code --config}; returns the file. */
    static Path configFile(Path file, Map<String, String> properties)
            throws IOException
    {
        List<String> lines = new ArrayList<>();
        new TreeMap<>(properties).forEach((key, value) -> lines.add(key + "=" + value));
        Files.write(file, lines);
        return file;
    }
}
