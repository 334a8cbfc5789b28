package dev.snowid;

import java.nio.file.Path;
import java.util.List;

/**
 * How a holder proves itself to etcd (docs/protocol.md section 1): TLS files for https endpoints,
 * and an etcd user. Every member may be null (none).
 *
 * @param caFile PEM CA bundle that https endpoints are checked against; null: the JVM's trust
 * @param certFile PEM client certificate (chain) for members that require one
 * @param keyFile its unencrypted PKCS#8 PEM key; null: in {@code certFile}
 * @param user etcd user, authenticated through {@code /v3/auth/authenticate}
 * @param password that user's password
 */
record EtcdAccess(Path caFile, Path certFile, Path keyFile, String user, String password) {
  static final EtcdAccess NONE = new EtcdAccess(null, null, null, null, null);

  /** INVALID_ARGUMENT for a combination that cannot work with {@code endpoints}. */
  void check(List<String> endpoints) {
    if (keyFile != null && certFile == null) {
      throw SnowidException.invalid("etcd: a client key needs a client certificate");
    }
    if (password != null && user == null) {
      throw SnowidException.invalid("etcd: a password needs a user");
    }
    if (user != null && user.isEmpty()) {
      throw SnowidException.invalid("etcd: the user name is empty");
    }
    boolean tlsFiles = caFile != null || certFile != null;
    if (tlsFiles && endpoints.stream().noneMatch(EtcdAccess::isHttps)) {
      // Never sent in the clear when the caller asked for TLS.
      throw SnowidException.invalid("etcd: TLS files are set but no endpoint is https://");
    }
  }

  boolean usesTls(List<String> endpoints) {
    return caFile != null || certFile != null || endpoints.stream().anyMatch(EtcdAccess::isHttps);
  }

  static boolean isHttps(String endpoint) {
    return endpoint.startsWith("https://");
  }
}
