package io.pgsink.connector.standalone;

import java.io.PrintWriter;
import java.io.StringWriter;

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
}
