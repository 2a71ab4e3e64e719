package io.pgsink.connector.standalone.monitoring;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.config.StandaloneConfigTest;
import io.pgsink.core.config.definition.ConfigProblem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The HTTP endpoint as operators secure it: the loopback interface by default, basic auth or a
 * bearer token on {@code /metrics} ({@code /health} open to liveness probes), and TLS from PEM
 * files (a certificate made by the JDK's keytool at test time).
 */
class HttpEndpointTest
{
    private static final String METRICS = "pgsink_events_in_total{sink=\"t\"} 0.0\n";
    private static final char[] STORE_PASSWORD = "changeit".toCharArray();
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Optional<String> NONE = Optional.empty();

    @Test
    void listensOnTheLoopbackInterfaceByDefault()
            throws Exception
    {
        StandaloneConfig config = StandaloneConfig.parse(StandaloneConfigTest.minimal());
        assertThat(config.httpHost()).isEqualTo("127.0.0.1");
        try (HttpEndpoint endpoint = start(config)) {
            assertThat(InetAddress.getByName(config.httpHost()).isLoopbackAddress()).isTrue();
            Client client = new Client(HttpClient.newHttpClient(), "http", endpoint);
            assertThat(client.status("/metrics", NONE)).isEqualTo(200);
        }
    }

    @Test
    void metricsNeedTheBasicAuthCredentialsHealthDoesNot()
            throws Exception
    {
        Map<String, String> properties = StandaloneConfigTest.minimal();
        properties.put("http.auth.username", "prometheus");
        properties.put("http.auth.password", "s3cret:with colon");
        StandaloneConfig config = StandaloneConfig.parse(properties);
        assertThat(config.describe()).containsEntry("http.auth.password", "<masked>");
        try (HttpEndpoint endpoint = start(config)) {
            Client client = new Client(HttpClient.newHttpClient(), "http", endpoint);
            HttpResponse<String> anonymous = client.get("/metrics", NONE);
            assertThat(anonymous.statusCode()).isEqualTo(401);
            assertThat(anonymous.headers().firstValue("WWW-Authenticate"))
                    .hasValueSatisfying(value -> assertThat(value).startsWith("Basic realm=\"pgsink\""));
            assertThat(anonymous.body()).doesNotContain("pgsink_events_in_total");
            assertThat(client.status("/metrics", Optional.of(basic("prometheus", "wrong")))).isEqualTo(401);
            assertThat(client.status("/metrics", Optional.of("Bearer s3cret:with colon"))).isEqualTo(401);
            HttpResponse<String> authorized = client.get("/metrics",
                    Optional.of(basic("prometheus", "s3cret:with colon")));
            assertThat(authorized.statusCode()).isEqualTo(200);
            assertThat(authorized.body()).isEqualTo(METRICS);
            assertThat(client.status("/health", NONE)).isEqualTo(200);
        }
    }

    @Test
    void metricsNeedTheBearerToken()
            throws Exception
    {
        Map<String, String> properties = StandaloneConfigTest.minimal();
        properties.put("http.auth.bearer.token", "token-123");
        StandaloneConfig config = StandaloneConfig.parse(properties);
        assertThat(config.describe()).containsEntry("http.auth.bearer.token", "<masked>");
        try (HttpEndpoint endpoint = start(config)) {
            Client client = new Client(HttpClient.newHttpClient(), "http", endpoint);
            assertThat(client.status("/metrics", NONE)).isEqualTo(401);
            assertThat(client.status("/metrics", Optional.of("Bearer token-12"))).isEqualTo(401);
            assertThat(client.status("/metrics", Optional.of(basic("token-123", "")))).isEqualTo(401);
            assertThat(client.status("/metrics", Optional.of("Bearer token-123"))).isEqualTo(200);
            assertThat(client.status("/health", NONE)).isEqualTo(200);
        }
    }

    @Test
    void servesHttpsFromPemFiles(@TempDir Path directory)
            throws Exception
    {
        KeyStore store = selfSignedCertificate(directory);
        Certificate certificate = store.getCertificate("pgsink");
        Path certificateFile = writePem(directory.resolve("tls.crt"), "CERTIFICATE", certificate.getEncoded());
        byte[] pkcs8 = ((PrivateKey) store.getKey("pgsink", STORE_PASSWORD)).getEncoded();
        Path key = writePem(directory.resolve("tls.key"), "PRIVATE KEY", pkcs8);
        // what cert-manager and openssl's -traditional write: PKCS#1, the key inside PKCS#8's OCTET STRING
        Path rsaKey = writePem(directory.resolve("tls-rsa.key"), "RSA PRIVATE KEY", pkcs1(pkcs8));
        HttpClient trusting = HttpClient.newBuilder().sslContext(trusting(certificate)).connectTimeout(TIMEOUT).build();
        for (Path keyFile : List.of(key, rsaKey)) {
            Map<String, String> properties = StandaloneConfigTest.minimal();
            properties.put("http.tls.certificate.file", certificateFile.toString());
            properties.put("http.tls.key.file", keyFile.toString());
            properties.put("http.auth.bearer.token", "token-123");
            try (HttpEndpoint endpoint = start(StandaloneConfig.parse(properties))) {
                Client client = new Client(trusting, "https", endpoint);
                assertThat(client.status("/metrics", NONE)).as(keyFile.toString()).isEqualTo(401);
                HttpResponse<String> metrics = client.get("/metrics", Optional.of("Bearer token-123"));
                assertThat(metrics.statusCode()).as(keyFile.toString()).isEqualTo(200);
                assertThat(metrics.body()).isEqualTo(METRICS);
                assertThat(client.status("/health", NONE)).isEqualTo(200);
                // plain HTTP is not served on the TLS port
                Client plain = new Client(HttpClient.newHttpClient(), "http", endpoint);
                assertThatThrownBy(() -> plain.get("/health", NONE)).isInstanceOf(IOException.class);
            }
        }
    }

    @Test
    void incompleteOrUnreadableSecurityIsAConfigurationProblem(@TempDir Path directory)
            throws Exception
    {
        Map<String, String> properties = StandaloneConfigTest.minimal();
        Path missing = directory.resolve("missing.crt");
        properties.put("http.tls.certificate.file", missing.toString());
        properties.put("http.auth.password", "s3cret");
        assertThat(StandaloneConfig.problems(properties)).extracting(ConfigProblem::message).containsExactly(
                "Invalid HTTP endpoint security from http.tls.certificate.file='" + missing + "', "
                        + "http.tls.key.file='': TLS needs the certificate and its private key: "
                        + "set both http.tls.certificate.file and http.tls.key.file, or neither",
                "Invalid HTTP endpoint security from http.auth.username='', http.auth.password=<masked>: "
                        + "basic auth needs a username and a password: "
                        + "set both http.auth.username and http.auth.password, or neither");

        Path notPem = Files.writeString(directory.resolve("not.pem"), "hello\n");
        Path encrypted = writePem(directory.resolve("encrypted.key"), "ENCRYPTED PRIVATE KEY", new byte[] {1, 2, 3});
        properties = StandaloneConfigTest.minimal();
        properties.put("http.tls.certificate.file", notPem.toString());
        properties.put("http.tls.key.file", encrypted.toString());
        assertThat(StandaloneConfig.problems(properties)).extracting(ConfigProblem::message).containsExactly(
                "Invalid value '" + notPem + "' for configuration http.tls.certificate.file: "
                        + "the file holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
                "Invalid value '" + encrypted + "' for configuration http.tls.key.file: "
                        + "a ENCRYPTED PRIVATE KEY is not read: convert it to an unencrypted PKCS#8 key "
                        + "(openssl pkcs8 -topk8 -nocrypt -in " + encrypted + " -out key.pem) "
                        + "and keep that file readable by pgsink only");
    }

    private static HttpEndpoint start(StandaloneConfig config)
            throws IOException
    {
        HttpEndpoint.Health up = new HttpEndpoint.Health(true, "{\"status\":\"UP\"}");
        return HttpEndpoint.start(config.httpHost(), 0, config.httpSecurity(), () -> METRICS, () -> up);
    }

    /** Requests to one endpoint, over {@code scheme}. */
    private record Client(HttpClient http, String scheme, HttpEndpoint endpoint)
    {
        HttpResponse<String> get(String path, Optional<String> authorization)
                throws IOException, InterruptedException
        {
            URI uri = URI.create(scheme + "://127.0.0.1:" + endpoint.port() + path);
            HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(TIMEOUT);
            authorization.ifPresent(value -> request.header("Authorization", value));
            return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }

        int status(String path, Optional<String> authorization)
                throws IOException, InterruptedException
        {
            return get(path, authorization).statusCode();
        }
    }

    private static String basic(String username, String password)
    {
        byte[] credentials = (username + ":" + password).getBytes(StandardCharsets.UTF_8);
        return "Basic " + Base64.getEncoder().encodeToString(credentials);
    }

    /** A key pair and self-signed certificate for 127.0.0.1, made by the JDK's keytool. */
    private static KeyStore selfSignedCertificate(Path directory)
            throws Exception
    {
        Path file = directory.resolve("tls.p12");
        Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
        String password = new String(STORE_PASSWORD);
        Process process = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", "pgsink", "-keyalg", "RSA",
                "-keysize", "2048", "-validity", "2", "-dname", "CN=127.0.0.1",
                "-ext", "SAN=ip:127.0.0.1,dns:localhost",
                "-storetype", "PKCS12", "-keystore", file.toString(), "-storepass", password, "-keypass", password)
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("keytool ends").isTrue();
        assertThat(process.exitValue()).as("keytool: %s", output).isZero();
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(file)) {
            store.load(in, STORE_PASSWORD);
        }
        return store;
    }

    private static SSLContext trusting(Certificate certificate)
            throws Exception
    {
        KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, null);
        trusted.setCertificateEntry("pgsink", certificate);
        TrustManagerFactory trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trustManagers.init(trusted);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, trustManagers.getTrustManagers(), null);
        return context;
    }

    private static Path writePem(Path file, String type, byte[] der)
            throws IOException
    {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        String pem = "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
        return Files.writeString(file, pem, StandardCharsets.US_ASCII);
    }

    /** The PKCS#1 key inside a 2048-bit RSA key's PKCS#8: after 26 bytes of header, the OCTET STRING's last. */
    private static byte[] pkcs1(byte[] pkcs8)
    {
        assertThat(pkcs8[22]).as("the OCTET STRING of a 2048-bit key's PKCS#8").isEqualTo((byte) 0x04);
        byte[] pkcs1 = Arrays.copyOfRange(pkcs8, 26, pkcs8.length);
        assertThat(HttpSecurity.pkcs8OfRsa(pkcs1)).as("wrapped again").isEqualTo(pkcs8);
        return pkcs1;
    }
}
