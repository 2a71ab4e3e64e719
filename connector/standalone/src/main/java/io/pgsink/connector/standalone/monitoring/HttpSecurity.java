package io.pgsink.connector.standalone.monitoring;

import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.config.definition.ConfigType;
import io.pgsink.core.config.definition.ConfigValues;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static java.util.Objects.requireNonNull;

/**
 * How the HTTP endpoint is secured, as Prometheus exporters' web configuration does it: TLS from a
 * PEM certificate (chain) and key, and basic auth or a bearer token on {@code /metrics}.
 * {@code /health} stays open to liveness probes: it says only the state and, while retrying or
 * failed, the error (no row values).
 *
 * @param tls the server's TLS context, when {@value #TLS_CERTIFICATE_FILE} is set
 * @param basicCredentials {@code user:password} that basic auth must present
 * @param bearerToken the token a {@code Bearer} authorization must present
 */
public record HttpSecurity(Optional<SSLContext> tls, Optional<String> basicCredentials, Optional<String> bearerToken)
{
    static final String TLS_CERTIFICATE_FILE = "http.tls.certificate.file";
    static final String TLS_KEY_FILE = "http.tls.key.file";
    static final String AUTH_USERNAME = "http.auth.username";
    static final String AUTH_PASSWORD = "http.auth.password";
    static final String AUTH_BEARER_TOKEN = "http.auth.bearer.token";

    public static final ConfigKey<String> TLS_CERTIFICATE_FILE_KEY = ConfigKey.optional(TLS_CERTIFICATE_FILE,
            ConfigType.STRING, "",
            "PEM file of the HTTP endpoint's certificate (then its chain, if any): with " + TLS_KEY_FILE
                    + ", the endpoint serves HTTPS only.");
    public static final ConfigKey<String> TLS_KEY_FILE_KEY = ConfigKey.optional(TLS_KEY_FILE, ConfigType.STRING, "",
            "PEM file of the private key of " + TLS_CERTIFICATE_FILE + ", unencrypted: PKCS#8 (BEGIN PRIVATE KEY; "
                    + "RSA, EC or Ed25519) or RSA PKCS#1 (BEGIN RSA PRIVATE KEY).");
    public static final ConfigKey<String> AUTH_USERNAME_KEY = ConfigKey.optional(AUTH_USERNAME, ConfigType.STRING, "",
            "With " + AUTH_PASSWORD + ": /metrics answers 401 unless the request presents these basic auth credentials "
                    + "(/health stays open to liveness probes).");
    public static final ConfigKey<String> AUTH_PASSWORD_KEY = ConfigKey.optional(AUTH_PASSWORD, ConfigType.STRING, "",
            "The basic auth password of " + AUTH_USERNAME + "; masked in logs. PGSINK_HTTP_AUTH_PASSWORD keeps it "
                    + "out of the file.")
            .asSecret();
    public static final ConfigKey<String> AUTH_BEARER_TOKEN_KEY = ConfigKey.optional(AUTH_BEARER_TOKEN,
            ConfigType.STRING, "",
            "/metrics answers 401 unless the request presents this token (Authorization: Bearer <token>), or the basic "
                    + "auth credentials when also given; masked in logs.")
            .asSecret();

    /** The keys, in the order of the configuration reference. */
    static final List<ConfigKey<?>> KEYS = List.of(TLS_CERTIFICATE_FILE_KEY, TLS_KEY_FILE_KEY, AUTH_USERNAME_KEY,
            AUTH_PASSWORD_KEY, AUTH_BEARER_TOKEN_KEY);

    private static final Pattern PEM =
            Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*)-----END \\1-----");
    /** AlgorithmIdentifier of rsaEncryption (1.2.840.113549.1.1.1), NULL parameters: wraps a PKCS#1 key into PKCS#8. */
    private static final byte[] RSA_ALGORITHM = {
            0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05,
            0x00};

    public HttpSecurity
    {
        requireNonNull(tls, "tls is null");
        requireNonNull(basicCredentials, "basicCredentials is null");
        requireNonNull(bearerToken, "bearerToken is null");
    }

    /** Whether {@code /metrics} asks for credentials. */
    boolean authenticates()
    {
        return basicCredentials.isPresent() || bearerToken.isPresent();
    }

    /** Whether an {@code Authorization} header (null: none) presents the credentials; compared in constant time. */
    boolean accepts(String authorization)
    {
        if (authorization == null) {
            return false;
        }
        if (basicCredentials.isPresent() && authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
            byte[] presented;
            try {
                presented = Base64.getDecoder().decode(authorization.substring(6).trim());
            }
            catch (IllegalArgumentException e) {
                return false;
            }
            return MessageDigest.isEqual(presented, basicCredentials.get().getBytes(StandardCharsets.UTF_8));
        }
        if (bearerToken.isPresent() && authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            byte[] presented = authorization.substring(7).trim().getBytes(StandardCharsets.UTF_8);
            return MessageDigest.isEqual(presented, bearerToken.get().getBytes(StandardCharsets.UTF_8));
        }
        return false;
    }

    /** What a 401 answers in {@code WWW-Authenticate}. */
    String challenge()
    {
        return basicCredentials.isPresent() ? "Basic realm=\"pgsink\", charset=\"UTF-8\"" : "Bearer realm=\"pgsink\"";
    }

    /**
     * The security {@code own} configures, reading the TLS files; empty after adding to
     * {@code problems} what is wrong (one key of a pair without the other, a file unreadable or
     * not PEM). Reads nothing when a key is itself invalid.
     */
    public static Optional<HttpSecurity> of(ConfigValues own, List<ConfigProblem> problems)
    {
        for (ConfigKey<?> key : KEYS) {
            if (!own.isValid(key)) {
                return Optional.empty();
            }
        }
        int before = problems.size();
        String certificateFile = own.get(TLS_CERTIFICATE_FILE_KEY);
        String keyFile = own.get(TLS_KEY_FILE_KEY);
        String username = own.get(AUTH_USERNAME_KEY);
        String password = own.get(AUTH_PASSWORD_KEY);
        String token = own.get(AUTH_BEARER_TOKEN_KEY);
        requireBoth(TLS_CERTIFICATE_FILE_KEY, certificateFile, TLS_KEY_FILE_KEY, keyFile,
                "TLS needs the certificate and its private key", problems);
        requireBoth(AUTH_USERNAME_KEY, username, AUTH_PASSWORD_KEY, password,
                "basic auth needs a username and a password", problems);
        if (username.contains(":")) {
            problems.add(ConfigProblem.invalid(AUTH_USERNAME, username, false,
                    "basic auth usernames cannot contain ':'"));
        }
        Optional<SSLContext> tls = Optional.empty();
        if (problems.size() == before && !certificateFile.isEmpty()) {
            tls = tls(Path.of(certificateFile), Path.of(keyFile), problems);
        }
        if (problems.size() > before) {
            return Optional.empty();
        }
        Optional<String> basic = username.isEmpty() ? Optional.empty() : Optional.of(username + ":" + password);
        return Optional.of(new HttpSecurity(tls, basic, token.isEmpty() ? Optional.empty() : Optional.of(token)));
    }

    private static void requireBoth(ConfigKey<String> first, String firstValue, ConfigKey<String> second,
            String secondValue, String reason, List<ConfigProblem> problems)
    {
        if (firstValue.isEmpty() != secondValue.isEmpty()) {
            Map<String, String> shown = new LinkedHashMap<>();
            shown.put(first.name(), first.shown(firstValue));
            shown.put(second.name(), second.shown(secondValue));
            problems.add(ConfigProblem.combination("HTTP endpoint security", shown,
                    reason + ": set both " + first.name() + " and " + second.name() + ", or neither"));
        }
    }

    private static Optional<SSLContext> tls(Path certificateFile, Path keyFile, List<ConfigProblem> problems)
    {
        List<Certificate> chain = new ArrayList<>();
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            for (Pem block : pem(certificateFile)) {
                if (block.type().equals("CERTIFICATE")) {
                    chain.add(factory.generateCertificate(new ByteArrayInputStream(block.der())));
                }
            }
            if (chain.isEmpty()) {
                problems.add(ConfigProblem.invalid(TLS_CERTIFICATE_FILE, certificateFile.toString(), false,
                        "the file holds no PEM certificate (-----BEGIN CERTIFICATE-----)"));
            }
        }
        catch (IOException | GeneralSecurityException e) {
            problems.add(ConfigProblem.invalid(TLS_CERTIFICATE_FILE, certificateFile.toString(), false,
                    "cannot read a PEM certificate from it: " + e));
        }
        Optional<PrivateKey> key = privateKey(keyFile, problems);
        if (chain.isEmpty() || key.isEmpty()) {
            return Optional.empty();
        }
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            char[] password = new char[0];
            store.setKeyEntry("pgsink", key.get(), password, chain.toArray(Certificate[]::new));
            KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            keyManagers.init(store, password);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(keyManagers.getKeyManagers(), null, null);
            return Optional.of(context);
        }
        catch (IOException | GeneralSecurityException e) {
            problems.add(ConfigProblem.invalid(TLS_KEY_FILE, keyFile.toString(), false,
                    "the key does not go with the certificate of " + TLS_CERTIFICATE_FILE + ": " + e));
            return Optional.empty();
        }
    }

    private static Optional<PrivateKey> privateKey(Path keyFile, List<ConfigProblem> problems)
    {
        List<Pem> blocks;
        try {
            blocks = pem(keyFile);
        }
        catch (IOException e) {
            problems.add(ConfigProblem.invalid(TLS_KEY_FILE, keyFile.toString(), false, "cannot read it: " + e));
            return Optional.empty();
        }
        for (Pem block : blocks) {
            switch (block.type()) {
                case "PRIVATE KEY":
                    return pkcs8(block.der(), keyFile, problems);
                case "RSA PRIVATE KEY":
                    return pkcs8(pkcs8OfRsa(block.der()), keyFile, problems);
                case "ENCRYPTED PRIVATE KEY":
                case "EC PRIVATE KEY":
                    problems.add(ConfigProblem.invalid(TLS_KEY_FILE, keyFile.toString(), false, "a " + block.type()
                            + " is not read: convert it to an unencrypted PKCS#8 key (openssl pkcs8 -topk8 -nocrypt "
                            + "-in " + keyFile + " -out key.pem) and keep that file readable by pgsink only"));
                    return Optional.empty();
                default:
                    // e.g. EC PARAMETERS before the key
            }
        }
        problems.add(ConfigProblem.invalid(TLS_KEY_FILE, keyFile.toString(), false,
                "the file holds no PEM private key (-----BEGIN PRIVATE KEY-----)"));
        return Optional.empty();
    }

    private static Optional<PrivateKey> pkcs8(byte[] der, Path keyFile, List<ConfigProblem> problems)
    {
        for (String algorithm : List.of("RSA", "EC", "Ed25519", "Ed448")) {
            try {
                return Optional.of(KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der)));
            }
            catch (GeneralSecurityException e) {
                // the next algorithm
            }
        }
        problems.add(ConfigProblem.invalid(TLS_KEY_FILE, keyFile.toString(), false,
                "not an RSA, EC or Ed25519 private key"));
        return Optional.empty();
    }

    /** A PKCS#1 RSA key ({@code RSAPrivateKey}) as the PKCS#8 {@code PrivateKeyInfo} Java reads. */
    static byte[] pkcs8OfRsa(byte[] pkcs1)
    {
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        // version 0, the algorithm, the key as an OCTET STRING
        content.writeBytes(new byte[] {0x02, 0x01, 0x00});
        content.writeBytes(RSA_ALGORITHM);
        content.writeBytes(derHeader(0x04, pkcs1.length));
        content.writeBytes(pkcs1);
        ByteArrayOutputStream info = new ByteArrayOutputStream();
        info.writeBytes(derHeader(0x30, content.size()));
        info.writeBytes(content.toByteArray());
        return info.toByteArray();
    }

    private static byte[] derHeader(int tag, int length)
    {
        if (length < 0x80) {
            return new byte[] {(byte) tag, (byte) length};
        }
        int bytes = length < 0x100 ? 1 : length < 0x10000 ? 2 : 3;
        byte[] header = new byte[2 + bytes];
        header[0] = (byte) tag;
        header[1] = (byte) (0x80 | bytes);
        for (int i = 0; i < bytes; i++) {
            header[2 + i] = (byte) (length >>> (8 * (bytes - 1 - i)));
        }
        return header;
    }

    private record Pem(String type, byte[] der) {}

    private static List<Pem> pem(Path file)
            throws IOException
    {
        String text = Files.readString(file, StandardCharsets.US_ASCII);
        List<Pem> blocks = new ArrayList<>();
        Matcher matcher = PEM.matcher(text);
        while (matcher.find()) {
            blocks.add(new Pem(matcher.group(1), Base64.getMimeDecoder().decode(matcher.group(2))));
        }
        return blocks;
    }
}
