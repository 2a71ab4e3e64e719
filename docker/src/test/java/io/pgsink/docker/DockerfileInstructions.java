package io.pgsink.docker;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import static java.util.Objects.requireNonNull;

/**
 * The instructions of a Dockerfile, read as Docker's parser reads them: parser directives and
 * comment lines skipped, lines continued with the escape character joined. Heredocs are refused
 * rather than misread: the Dockerfiles here do not use them.
 */
final class DockerfileInstructions
{
    static final Set<String> KEYWORDS = Set.of("FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME",
            "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL");

    /** One instruction: its keyword upper-cased, the rest of it, and the line it starts on. */
    record Instruction(String keyword, String arguments, int line)
    {
        Instruction
        {
            requireNonNull(keyword, "keyword is null");
            requireNonNull(arguments, "arguments is null");
        }

        @Override
        public String toString()
        {
            return "line " + line + ": " + keyword + " " + arguments;
        }
    }

    private DockerfileInstructions() {}

    static List<Instruction> read(Path dockerfile)
            throws IOException
    {
        List<String> lines = Files.readAllLines(dockerfile);
        char escape = '\\';
        int first = 0;
        // parser directives: "# key=value" lines at the very top
        while (first < lines.size() && lines.get(first).matches("#\\s*[a-zA-Z]+\\s*=.*")) {
            String directive = lines.get(first).substring(1).trim();
            if (directive.toLowerCase(Locale.ROOT).startsWith("escape")) {
                escape = directive.substring(directive.indexOf('=') + 1).trim().charAt(0);
            }
            first++;
        }
        List<Instruction> instructions = new ArrayList<>();
        StringBuilder current = null;
        int start = 0;
        for (int i = first; i < lines.size(); i++) {
            String line = lines.get(i);
            String trimmed = line.strip();
            if (trimmed.startsWith("#") || (current == null && trimmed.isEmpty())) {
                continue;
            }
            if (current == null) {
                current = new StringBuilder();
                start = i + 1;
            }
            boolean continued = trimmed.endsWith(String.valueOf(escape));
            current.append(continued ? trimmed.substring(0, trimmed.length() - 1) : trimmed).append(continued ? " " : "");
            if (!continued) {
                instructions.add(instruction(current.toString().strip(), start, dockerfile));
                current = null;
            }
        }
        if (current != null) {
            throw new IllegalArgumentException(dockerfile + " ends inside a continued instruction that starts on line " + start);
        }
        return instructions;
    }

    private static Instruction instruction(String text, int line, Path dockerfile)
    {
        int space = text.indexOf(' ');
        String keyword = (space < 0 ? text : text.substring(0, space)).toUpperCase(Locale.ROOT);
        String arguments = space < 0 ? "" : text.substring(space + 1).strip();
        if (arguments.matches("(?s).*<<-?[\"']?[A-Za-z_]+.*") && (keyword.equals("RUN") || keyword.equals("COPY"))) {
            throw new IllegalArgumentException(dockerfile + " line " + line + ": heredocs are not checked here; write the instruction without one");
        }
        return new Instruction(keyword, arguments, line);
    }
}
