package etcd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	snowid "github.com/snowid/snowid/languages/go"
)

// testPKI is a CA and, signed by it, a server certificate for 127.0.0.1 and
// a client certificate, as PEM files in a test's directory.
type testPKI struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	p := testPKI{ca: filepath.Join(dir, "ca.crt"), serverCert: filepath.Join(dir, "server.crt"),
		serverKey: filepath.Join(dir, "server.key"), clientCert: filepath.Join(dir, "client.crt"),
		clientKey: filepath.Join(dir, "client.key")}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "snowid test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, p.ca, "CERTIFICATE", caDER)
	caCert, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, name string, usage []x509.ExtKeyUsage, ips []net.IP, certPath, keyPath string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), ExtKeyUsage: usage, IPAddresses: ips,
			KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		writePEM(t, certPath, "CERTIFICATE", der)
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		writePEM(t, keyPath, "PRIVATE KEY", keyDER)
	}
	leaf(2, "127.0.0.1", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		[]net.IP{net.IPv4(127, 0, 0, 1)}, p.serverCert, p.serverKey)
	leaf(3, "snowid test client", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, nil, p.clientCert, p.clientKey)
	return p
}

// An etcd that serves clients over https and requires a client certificate
// signed by its CA: the generator leases, issues and releases with the CA,
// certificate and key given, and is refused without a client certificate or
// without the CA.
func TestLeasedOverMutualTLS(t *testing.T) {
	p := newTestPKI(t)
	probe, err := httpClient(p.ca, p.clientCert, p.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	url := startEtcdWith(t, "https", probe, "--cert-file", p.serverCert, "--key-file", p.serverKey,
		"--client-cert-auth", "--trusted-ca-file", p.ca)
	initNamespaceVia(t, newGateway([]string{url}, 2*time.Second, probe, "", ""), "tls")
	ctx := context.Background()
	o := short(url, "tls")
	o.CAFile, o.CertFile, o.KeyFile = p.ca, p.clientCert, p.clientKey
	o.RequestTimeout = time.Second
	l, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	first := next(t, l)
	if d, _ := snowid.Snowid.Decode(uint64(first)); d.Region != 1 {
		t.Fatalf("id %d is not of region 1", first)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	noCert := o
	noCert.CertFile, noCert.KeyFile = "", ""
	noCA := o
	noCA.CAFile = ""
	// Without the CA the client rejects the member's certificate and says so;
	// without a client certificate the member rejects the client, which the
	// client sees as whatever broke first (an alert, a reset connection).
	for _, c := range []struct {
		name string
		o    Options
		says string
	}{{"no client certificate", noCert, ""}, {"no CA", noCA, "certificate"}} {
		l, err := New(ctx, c.o)
		if err == nil {
			l.Close(ctx)
			t.Errorf("%s: acquired a worker id", c.name)
			continue
		}
		if snowid.CodeOf(err) != snowid.CodeUnavailable || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want UNAVAILABLE saying %q", c.name, err, c.says)
		}
	}
}

func TestLeasedRefusesBadTLSFiles(t *testing.T) {
	p := newTestPKI(t)
	junk := filepath.Join(t.TempDir(), "junk.pem")
	os.WriteFile(junk, []byte("not a certificate\n"), 0o600)
	for name, o := range map[string]Options{
		"a key without a certificate": {KeyFile: p.clientKey},
		"a missing CA file":           {CAFile: junk + ".missing"},
		"a CA file without PEM":       {CAFile: junk},
		"a certificate without a key": {CertFile: p.clientCert},
		"a key of another pair":       {CertFile: p.clientCert, KeyFile: p.serverKey},
		"a password without a user":   {Password: "secret"},
	} {
		o.Endpoints = []string{"https://127.0.0.1:1"}
		if _, err := New(context.Background(), o); snowid.CodeOf(err) != snowid.CodeInvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
}
