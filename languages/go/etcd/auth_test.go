package etcd

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	snowid "github.com/snowid/snowid/languages/go"
)

// enableAuth adds root (role root), a user app whose role may read and write
// the keys under /snowid/, and a user nobody without a role, then turns etcd's
// authentication on, through the gateway's auth API.
func enableAuth(t *testing.T, url string) {
	t.Helper()
	gw := newGateway([]string{url}, 2*time.Second, &http.Client{}, "", "")
	steps := []struct {
		path string
		body any
	}{
		{"/v3/auth/user/add", map[string]string{"name": "root", "password": "root-secret"}},
		{"/v3/auth/user/grant", map[string]string{"user": "root", "role": "root"}},
		{"/v3/auth/role/add", map[string]string{"name": "snowid-app"}},
		{"/v3/auth/role/grant", map[string]any{"name": "snowid-app", "perm": map[string]string{
			"permType": "READWRITE", "key": b64("/snowid/"), "range_end": b64(prefixEnd("/snowid/"))}}},
		{"/v3/auth/user/add", map[string]string{"name": "app", "password": "app-secret"}},
		{"/v3/auth/user/grant", map[string]string{"user": "app", "role": "snowid-app"}},
		{"/v3/auth/user/add", map[string]string{"name": "nobody", "password": "nobody-secret"}},
		{"/v3/auth/enable", map[string]string{}},
	}
	for _, s := range steps {
		var r struct{}
		if err := gw.post(context.Background(), s.path, s.body, &r); err != nil {
			t.Fatalf("%s: %v", s.path, err)
		}
	}
}

// With etcd's authentication on, a user whose role covers the key prefix
// leases, issues and releases; a wrong password, no user and a user without
// the role are refused at once with an error that a retry cannot change.
func TestLeasedWithAuthentication(t *testing.T) {
	url := startEtcd(t)
	initNamespace(t, url, "auth")
	enableAuth(t, url)
	ctx := context.Background()
	o := short(url, "auth")
	o.User, o.Password = "app", "app-secret"
	l, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	a := next(t, l)
	// Past stop_after (1.5 s) only renewals, authenticated, keep ids coming.
	time.Sleep(1700 * time.Millisecond)
	b, err := l.Next()
	if err != nil || b <= a {
		t.Fatalf("after renewals: %d %v, before %d", b, err, a)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// A token etcd no longer accepts (expired, or the member restarted) is
	// replaced once, and the request goes through.
	gw := newGateway([]string{url}, 2*time.Second, &http.Client{}, "app", "app-secret")
	if _, err := gw.getOne(ctx, "/snowid/auth/store"); err != nil || gw.creds.current() == "" {
		t.Fatalf("first read: %v, token %q", err, gw.creds.current())
	}
	gw.creds.token = "stale.token"
	if k, err := gw.getOne(ctx, "/snowid/auth/store"); err != nil || k == nil || gw.creds.current() == "stale.token" {
		t.Fatalf("with a stale token: %v %v, token %q", k, err, gw.creds.current())
	}
	for _, c := range []struct {
		name, user, password string
		code                 snowid.Code
		says                 string
	}{
		{"a wrong password", "app", "wrong", snowid.CodeInvalidArgument, `etcd refused user "app"`},
		{"no user", "", "", snowid.CodeInvalidArgument, "set a user and password"},
		{"a user without a role", "nobody", "nobody-secret", snowid.CodeFailedPrecondition, `denied user "nobody"`},
	} {
		bad := o
		bad.User, bad.Password = c.user, c.password
		start := time.Now()
		l, err := New(ctx, bad)
		if err == nil {
			l.Close(ctx)
			t.Errorf("%s: acquired a worker id", c.name)
			continue
		}
		t.Logf("%s: %v", c.name, err)
		var se *snowid.Error
		if !errors.As(err, &se) || se.Code != c.code || snowid.IsRetryable(err) || !strings.Contains(se.Message, c.says) {
			t.Errorf("%s: %v, want %s saying %q", c.name, err, c.code, c.says)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: refused after %v, not at once", c.name, d)
		}
	}
}
