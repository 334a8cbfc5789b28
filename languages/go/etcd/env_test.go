package etcd

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	snowid "github.com/snowid/snowid/languages/go"
)

func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestOptionsFromEnvReadsEveryVariable(t *testing.T) {
	o, err := OptionsFromEnv(lookupIn(map[string]string{
		"SNOWID_ETCD_ENDPOINTS": " http://10.0.0.1:2379 ,https://etcd-2.internal:2379/",
		"SNOWID_ETCD_PREFIX":    "/ids", "SNOWID_ETCD_CLUSTER": "eu-1",
		"SNOWID_ETCD_CA": "/etc/ca.pem", "SNOWID_ETCD_CERT": "/etc/c.pem", "SNOWID_ETCD_KEY": "/etc/k.pem",
		"SNOWID_ETCD_USER": "app", "SNOWID_ETCD_PASSWORD": "pw",
		"SNOWID_REGION": "3", "SNOWID_HOST": "17", "SNOWID_STATE_DIR": "/var/lib/snowid", "SNOWID_REGISTRY": "etcd",
	}), Options{TTL: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%q %s %s %s %s %s %s %s %d %d %s %v", o.Endpoints, o.Prefix, o.Cluster, o.CAFile, o.CertFile,
		o.KeyFile, o.User, o.Password, o.Region, *o.Host, o.StateDir, o.TTL)
	want := `["http://10.0.0.1:2379" "https://etcd-2.internal:2379"] /ids eu-1 /etc/ca.pem /etc/c.pem /etc/k.pem app pw 3 17 /var/lib/snowid 20s`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestOptionsFromEnvDefaults(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		dir  string
		host bool
	}{
		{map[string]string{"XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/snowid", false},
		{map[string]string{"HOME": "/h", "SNOWID_HOST": "any"}, "/h/.local/state/snowid", false},
		{map[string]string{}, "", false},
	} {
		c.env["SNOWID_ETCD_ENDPOINTS"] = "http://127.0.0.1:2379"
		o, err := OptionsFromEnv(lookupIn(c.env), Options{})
		if err != nil || o.StateDir != c.dir || o.Host != nil || o.Region != 0 || o.Prefix != "" || o.User != "" {
			t.Errorf("%v: %+v %v", c.env, o, err)
		}
	}
}

// Each missing or malformed setting is INVALID_ARGUMENT naming its variable.
func TestOptionsFromEnvRefusesBadSettings(t *testing.T) {
	ok := "http://127.0.0.1:2379"
	for _, c := range []struct {
		env  map[string]string
		name string
	}{
		{map[string]string{}, "SNOWID_ETCD_ENDPOINTS"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": " , "}, "SNOWID_ETCD_ENDPOINTS"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ""}, "SNOWID_ETCD_ENDPOINTS"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": "127.0.0.1:2379"}, "SNOWID_ETCD_ENDPOINTS"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok + ",http://a:2379/v3"}, "SNOWID_ETCD_ENDPOINTS"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": "http://a"}, "SNOWID_ETCD_ENDPOINTS"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": "http://u@a:1"}, "SNOWID_ETCD_ENDPOINTS"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_ETCD_PREFIX": "ids/"}, "SNOWID_ETCD_PREFIX"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_ETCD_CLUSTER": "a b"}, "SNOWID_ETCD_CLUSTER"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_ETCD_CA": ""}, "SNOWID_ETCD_CA"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_ETCD_KEY": "/k"}, "SNOWID_ETCD_KEY"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_ETCD_PASSWORD": "pw"}, "SNOWID_ETCD_PASSWORD"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_REGION": "x"}, "SNOWID_REGION"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_REGION": "-1"}, "SNOWID_REGION"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_REGION": "01"}, "SNOWID_REGION"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_REGION": "4"}, "SNOWID_REGION"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_HOST": "some"}, "SNOWID_HOST"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_HOST": "1024"}, "SNOWID_HOST"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_STATE_DIR": ""}, "SNOWID_STATE_DIR"},
		{map[string]string{"SNOWID_ETCD_ENDPOINTS": ok, "SNOWID_REGISTRY": "file"}, "SNOWID_REGISTRY"},
	} {
		_, err := OptionsFromEnv(lookupIn(c.env), Options{})
		if snowid.CodeOf(err) != snowid.CodeInvalidArgument || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%v: %v, want INVALID_ARGUMENT naming %s", c.env, err, c.name)
		}
	}
}

// FromEnv on the process's variables leases from a real etcd, and keeps the
// worker id's fence file in SNOWID_STATE_DIR.
func TestFromEnvLeasesAndKeepsTheFence(t *testing.T) {
	url := startEtcd(t)
	initNamespace(t, url, "env")
	dir := filepath.Join(t.TempDir(), "state")
	t.Setenv("SNOWID_ETCD_ENDPOINTS", url)
	t.Setenv("SNOWID_ETCD_CLUSTER", "env")
	t.Setenv("SNOWID_REGION", "2")
	t.Setenv("SNOWID_STATE_DIR", dir)
	ctx := context.Background()
	base := short(url, "")
	base.Endpoints, base.Region = nil, 0
	l, err := FromEnv(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	id := next(t, l)
	region, host := l.Worker()
	if d, _ := snowid.Snowid.Decode(uint64(id)); region != 2 || int(d.Region) != 2 || int(d.Host) != host {
		t.Fatalf("id %d, worker %d/%d", id, region, host)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ms, ok, err := snowid.FenceFile{Path: filepath.Join(dir, fmt.Sprintf("fence-r2-h%d", host))}.Load()
	if d, _ := snowid.Snowid.Decode(uint64(id)); err != nil || !ok || ms < d.UnixMs {
		t.Fatalf("the fence file: %d %v %v, id time %d", ms, ok, err, d.UnixMs)
	}
}
