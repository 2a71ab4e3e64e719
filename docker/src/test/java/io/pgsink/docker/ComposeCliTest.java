package io.pgsink.docker;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code docker compose config}, Compose's own validation (schema, interpolation, references),
 * which needs the Compose CLI but no Docker engine. Skipped, with the reason in the test report,
 * where neither {@code docker compose} nor {@code docker-compose} runs; {@link ComposeFileTest}
 * checks the file either way.
 */
class ComposeCliTest
{
    @Test
    void composeAcceptsTheFileWithoutAndWithEachProfile()
            throws Exception
    {
        Optional<List<String>> compose = composeCommand();
        assumeTrue(compose.isPresent(), "No Compose CLI here: neither `docker compose version` nor `docker-compose version` runs,"
                + " so Compose's own validation of docker/compose.yaml is skipped (ComposeFileTest still checks the file).");
        for (List<String> profile : List.of(List.<String>of(), List.of("--profile", "greenplum"), List.of("--profile", "monitoring"))) {
            List<String> command = new ArrayList<>(compose.get());
            command.addAll(List.of("--file", ComposeStack.COMPOSE_FILE.toString()));
            command.addAll(profile);
            command.addAll(List.of("config", "--quiet"));
            Result result = run(command);
            assertThat(result.exitCode()).as("%s exited with %s: %s", String.join(" ", command), result.exitCode(), result.output()).isZero();
        }
    }

    private static Optional<List<String>> composeCommand()
    {
        for (List<String> candidate : List.of(List.of("docker", "compose"), List.of("docker-compose"))) {
            List<String> version = new ArrayList<>(candidate);
            version.add("version");
            try {
                if (run(version).exitCode() == 0) {
                    return Optional.of(candidate);
                }
            }
            catch (IOException e) {
                // not installed
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** Runs {@code command} in the repository root; its output and exit code, or -1 after 60 s. */
    static Result run(List<String> command)
            throws IOException, InterruptedException
    {
        Process process = new ProcessBuilder(command).directory(ComposeStack.REPOSITORY.toFile()).redirectErrorStream(true).start();
        process.getOutputStream().close();
        byte[] output = process.getInputStream().readAllBytes();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return new Result(-1, "timed out after 60 s");
        }
        return new Result(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    }

    record Result(int exitCode, String output) {}
}
