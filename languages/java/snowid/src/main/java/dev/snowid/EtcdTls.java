package dev.snowid;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * An {@link SSLContext} for etcd built from PEM files, as etcd and its tools take them: a CA bundle
 * to trust (else the JVM's default trust store), and optionally a client certificate (chain) with
 * its unencrypted PKCS#8 key ({@code BEGIN PRIVATE KEY}; without a key file, the certificate file
 * holds it too) for mutual TLS. A file that is missing or not such PEM is {@code INVALID_ARGUMENT}.
 */
final class EtcdTls {
  private static final Pattern KEY =
      Pattern.compile("-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");
  private static final List<String> KEY_ALGORITHMS = List.of("EC", "RSA", "Ed25519", "Ed448");
  private static final char[] NO_PASSWORD = new char[0];

  private EtcdTls() {}

  /** The context for {@code caFile} (null: the default trust) and an optional client pair. */
  static SSLContext context(Path caFile, Path certFile, Path keyFile) {
    if (certFile == null && keyFile != null) {
      throw SnowidException.invalid("etcd TLS: a client key needs a client certificate");
    }
    try {
      TrustManagerFactory trust =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      if (caFile == null) {
        trust.init((KeyStore) null);
      } else {
        KeyStore roots = emptyStore();
        int i = 0;
        for (Certificate c : certificates(caFile)) {
          roots.setCertificateEntry("ca-" + i++, c);
        }
        trust.init(roots);
      }
      KeyManagerFactory keys = null;
      if (certFile != null) {
        Collection<? extends Certificate> chain = certificates(certFile);
        KeyStore store = emptyStore();
        store.setKeyEntry(
            "client",
            privateKey(keyFile == null ? certFile : keyFile),
            NO_PASSWORD,
            chain.toArray(new Certificate[0]));
        keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        keys.init(store, NO_PASSWORD);
      }
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(keys == null ? null : keys.getKeyManagers(), trust.getTrustManagers(), null);
      return ctx;
    } catch (GeneralSecurityException | IOException e) {
      throw new SnowidException(
          Code.INVALID_ARGUMENT, "etcd TLS: cannot use the given files: " + e.getMessage(), 0, e);
    }
  }

  private static KeyStore emptyStore() throws GeneralSecurityException, IOException {
    KeyStore s = KeyStore.getInstance("PKCS12");
    s.load(null, null);
    return s;
  }

  private static byte[] read(Path file, String what) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new SnowidException(
          Code.INVALID_ARGUMENT, "etcd TLS: cannot read the " + what + " " + file + ": " + e, 0, e);
    }
  }

  /** Every certificate of a PEM (or DER) file; none is an error. */
  static Collection<? extends Certificate> certificates(Path file) {
    byte[] bytes = read(file, "certificate file");
    Collection<? extends Certificate> all;
    try {
      all =
          CertificateFactory.getInstance("X.509")
              .generateCertificates(new ByteArrayInputStream(bytes));
    } catch (GeneralSecurityException e) {
      throw new SnowidException(
          Code.INVALID_ARGUMENT, "etcd TLS: " + file + " holds no readable certificate", 0, e);
    }
    if (all.isEmpty()) {
      throw SnowidException.invalid("etcd TLS: " + file + " holds no certificate");
    }
    return all;
  }

  /** The PKCS#8 key of a PEM file, of whichever algorithm its encoding names. */
  static PrivateKey privateKey(Path file) {
    String text = new String(read(file, "key file"), StandardCharsets.US_ASCII);
    Matcher m = KEY.matcher(text);
    if (!m.find()) {
      throw SnowidException.invalid(
          "etcd TLS: "
              + file
              + " holds no unencrypted PKCS#8 key (BEGIN PRIVATE KEY); convert it with"
              + " `openssl pkcs8 -topk8 -nocrypt`");
    }
    byte[] der;
    try {
      der = Base64.getMimeDecoder().decode(m.group(1));
    } catch (IllegalArgumentException e) {
      throw SnowidException.invalid("etcd TLS: " + file + ": the key is not valid base64");
    }
    PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
    for (String algorithm : KEY_ALGORITHMS) {
      try {
        return KeyFactory.getInstance(algorithm).generatePrivate(spec);
      } catch (GeneralSecurityException e) {
        // not this algorithm
      }
    }
    throw SnowidException.invalid(
        "etcd TLS: " + file + ": the key is none of " + String.join(", ", KEY_ALGORITHMS));
  }
}
