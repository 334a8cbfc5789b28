package etcd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	snowid "github.com/snowid/snowid/languages/go"
)

const grpcUnauthenticated = 16

// credentials holds etcd's auth token for a user and password: fetched when
// a member first asks for one, and again when a member no longer accepts it.
type credentials struct {
	user, password string

	refresh sync.Mutex // one authentication at a time
	mu      sync.Mutex
	token   string
}

func (c *credentials) current() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// isAuthError: the member wants a token it was not given or no longer accepts.
func isAuthError(e *grpcError) bool {
	return e.Code == grpcUnauthenticated ||
		(e.Code == grpcInvalidArgument && strings.Contains(e.Message, "user name is empty"))
}

// authRefused is the answer to credentials etcd will not take: a retry with
// the same settings cannot succeed.
func authRefused(format string, a ...any) error {
	return &snowid.Error{Code: snowid.CodeInvalidArgument, Message: fmt.Sprintf(format, a...)}
}

// renew authenticates on member n unless another call already replaced the
// stale token. A refusal is a *snowid.Error; a member that did not answer is
// any other error.
func (g *gateway) renew(ctx context.Context, n int, stale string) error {
	c := &g.creds
	if c.user == "" {
		return authRefused("etcd requires authentication; set a user and password")
	}
	c.refresh.Lock()
	defer c.refresh.Unlock()
	if c.current() != stale {
		return nil
	}
	data, _ := json.Marshal(map[string]string{"name": c.user, "password": c.password})
	reply, ge, err := g.send(ctx, n, "/v3/auth/authenticate", data, "")
	var r struct {
		Token string `json:"token"`
	}
	switch {
	case err != nil:
		return err
	case ge != nil && ge.Code == grpcFailedPrecondition && strings.Contains(ge.Message, "authentication is not enabled"):
		// The cluster checks no one: requests go without a token.
	case ge != nil && (ge.Code == grpcInvalidArgument || ge.Code == grpcPermissionDenied || isAuthError(ge)):
		return authRefused("etcd refused user %q: %s", c.user, strings.TrimPrefix(ge.Message, "etcdserver: "))
	case ge != nil:
		return ge
	default:
		if err := json.Unmarshal(reply, &r); err != nil || r.Token == "" {
			return fmt.Errorf("authentication: no token in the reply")
		}
	}
	c.mu.Lock()
	c.token = r.Token
	c.mu.Unlock()
	return nil
}
