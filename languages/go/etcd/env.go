package etcd

import (
	"cmp"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	snowid "github.com/snowid/snowid/languages/go"
)

// FromEnv is New configured by the variables the snowid tools read
// (docs/protocol.md, "Environment variables"): SNOWID_ETCD_ENDPOINTS
// (required), SNOWID_ETCD_PREFIX, SNOWID_ETCD_CLUSTER, SNOWID_ETCD_CA,
// SNOWID_ETCD_CERT, SNOWID_ETCD_KEY, SNOWID_ETCD_USER, SNOWID_ETCD_PASSWORD,
// SNOWID_REGION (default 0), SNOWID_HOST (a pinned host or any, the default),
// SNOWID_STATE_DIR (the fence files; default $XDG_STATE_HOME/snowid, else
// $HOME/.local/state/snowid) and SNOWID_REGISTRY (etcd or auto, if set).
// base supplies everything else (timing, clock, generator options); a
// variable that is set wins over base. A missing or malformed variable is
// INVALID_ARGUMENT naming it.
func FromEnv(ctx context.Context, base Options) (*LeasedGenerator, error) {
	o, err := OptionsFromEnv(os.LookupEnv, base)
	if err != nil {
		return nil, err
	}
	return New(ctx, o)
}

// OptionsFromEnv is the Options FromEnv would use, with lookup reading the
// variables (os.LookupEnv for the process's own).
func OptionsFromEnv(lookup func(string) (string, bool), base Options) (Options, error) {
	o := base
	if v, ok := lookup("SNOWID_REGISTRY"); ok && v != "etcd" && v != "auto" {
		return o, invalid("SNOWID_REGISTRY is %q: a leased generator leases from etcd (etcd or auto)", v)
	}
	v, ok := lookup("SNOWID_ETCD_ENDPOINTS")
	if !ok {
		return o, invalid("SNOWID_ETCD_ENDPOINTS is not set: no etcd to lease a worker id from")
	}
	eps, err := parseEndpoints(v)
	if err != nil {
		return o, err
	}
	o.Endpoints = eps
	for _, s := range []struct {
		name string
		to   *string
	}{{"SNOWID_ETCD_PREFIX", &o.Prefix}, {"SNOWID_ETCD_CLUSTER", &o.Cluster},
		{"SNOWID_ETCD_CA", &o.CAFile}, {"SNOWID_ETCD_CERT", &o.CertFile}, {"SNOWID_ETCD_KEY", &o.KeyFile},
		{"SNOWID_ETCD_USER", &o.User}, {"SNOWID_ETCD_PASSWORD", &o.Password}} {
		if v, ok := lookup(s.name); ok {
			if v == "" {
				return o, invalid("%s is set but empty", s.name)
			}
			*s.to = v
		}
	}
	if err := checkNamespace(cmp.Or(o.Prefix, "/snowid"), "default"); err != nil {
		return o, invalid("SNOWID_ETCD_PREFIX: %s", message(err))
	}
	if err := checkNamespace("/snowid", cmp.Or(o.Cluster, "default")); err != nil {
		return o, invalid("SNOWID_ETCD_CLUSTER: %s", message(err))
	}
	if o.KeyFile != "" && o.CertFile == "" {
		return o, invalid("SNOWID_ETCD_KEY is set without SNOWID_ETCD_CERT: a client key needs a certificate")
	}
	if o.Password != "" && o.User == "" {
		return o, invalid("SNOWID_ETCD_PASSWORD is set without SNOWID_ETCD_USER: a password needs a user")
	}
	if v, ok := lookup("SNOWID_REGION"); ok {
		n, err := number("SNOWID_REGION", v)
		if err != nil {
			return o, err
		}
		if err := snowid.Snowid.CheckWorker(n, 0); err != nil {
			return o, invalid("SNOWID_REGION is %s: %s", v, message(err))
		}
		o.Region = n
	}
	if v, ok := lookup("SNOWID_HOST"); ok && v != "any" {
		n, err := number("SNOWID_HOST", v)
		if err != nil {
			return o, invalid("SNOWID_HOST must be a host id or any, not %q", v)
		}
		if err := snowid.Snowid.CheckWorker(0, n); err != nil {
			return o, invalid("SNOWID_HOST is %s: %s", v, message(err))
		}
		o.Host = &n
	}
	dir, err := stateDir(lookup)
	if err != nil {
		return o, err
	}
	o.StateDir = cmp.Or(dir, o.StateDir)
	return o, nil
}

// parseEndpoints reads URL[,URL...]: each http:// or https:// with a host
// and a port and no path, spaces around commas ignored.
func parseEndpoints(text string) ([]string, error) {
	if strings.TrimSpace(text) == "" {
		return nil, invalid("SNOWID_ETCD_ENDPOINTS is empty: no etcd to lease a worker id from")
	}
	var out []string
	for _, part := range strings.Split(text, ",") {
		raw := strings.Trim(part, " \t")
		u, err := url.Parse(raw)
		bad := err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != ""
		if !bad {
			host, port, err := net.SplitHostPort(u.Host)
			p, perr := strconv.Atoi(port)
			bad = err != nil || host == "" || perr != nil || p < 1 || p > 65535
		}
		if bad {
			return nil, invalid("SNOWID_ETCD_ENDPOINTS: %q is not http://HOST:PORT or https://HOST:PORT", raw)
		}
		out = append(out, u.Scheme+"://"+u.Host)
	}
	return out, nil
}

// number is a decimal without sign or leading zero that fits 32 bits.
func number(name, v string) (int, error) {
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil || (len(v) > 1 && v[0] == '0') {
		return 0, invalid("%s must be a decimal number, not %q", name, v)
	}
	return int(n), nil
}

// stateDir is SNOWID_STATE_DIR, else $XDG_STATE_HOME/snowid, else
// $HOME/.local/state/snowid; "" when none of them is set.
func stateDir(lookup func(string) (string, bool)) (string, error) {
	if v, ok := lookup("SNOWID_STATE_DIR"); ok {
		if v == "" {
			return "", invalid("SNOWID_STATE_DIR is set but empty")
		}
		return v, nil
	}
	if v, ok := lookup("XDG_STATE_HOME"); ok && v != "" {
		return filepath.Join(v, "snowid"), nil
	}
	if v, ok := lookup("HOME"); ok && v != "" {
		return filepath.Join(v, ".local", "state", "snowid"), nil
	}
	return "", nil
}

// message is an error's text without its code.
func message(err error) string {
	var se *snowid.Error
	if errors.As(err, &se) {
		return se.Message
	}
	return err.Error()
}
