package etcd

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
)

// httpClient is the client of every gateway request: the system's CAs, or
// those of caFile, to verify https members, and a client certificate for
// mutual TLS when certFile is set (keyFile defaults to certFile, a file
// holding both). Unreadable or malformed files are INVALID_ARGUMENT.
func httpClient(caFile, certFile, keyFile string) (*http.Client, error) {
	if caFile == "" && certFile == "" {
		return &http.Client{}, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, invalid("the etcd CA file: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, invalid("the etcd CA file %s holds no PEM certificate", caFile)
		}
		cfg.RootCAs = pool
	}
	if certFile != "" {
		if keyFile == "" {
			keyFile = certFile
		}
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, invalid("the etcd client certificate %s and key %s: %v", certFile, keyFile, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = cfg
	return &http.Client{Transport: t}, nil
}
