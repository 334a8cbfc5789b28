// Package etcd leases snowid worker ids from etcd (docs/protocol.md) through etcd's JSON
// gateway, on the standard library alone.
package etcd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	snowid "github.com/snowid/snowid/languages/go"
)

// gRPC codes about the request, not the member: never retried elsewhere.
const (
	grpcInvalidArgument    = 3
	grpcNotFound           = 5
	grpcPermissionDenied   = 7
	grpcFailedPrecondition = 9
)

// errUnknown: no member answered; the request may have been applied.
var errUnknown = errors.New("no etcd member answered: the outcome is unknown")

type grpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *grpcError) Error() string { return fmt.Sprintf("etcd: %s (gRPC code %d)", e.Message, e.Code) }

type gateway struct {
	endpoints []string
	timeout   time.Duration
	http      *http.Client
	creds     credentials
	last      atomic.Int32

	mu       sync.Mutex
	revision int64
	cluster  string
	lossSeen bool
}

func newGateway(endpoints []string, timeout time.Duration, client *http.Client, user, password string) *gateway {
	return &gateway{endpoints: endpoints, timeout: timeout, http: client,
		creds: credentials{user: user, password: password}}
}

type header struct {
	ClusterID string `json:"cluster_id"`
	Revision  string `json:"revision"`
}

// note records a range or txn header: a revision going back or another cluster is a loss.
func (g *gateway) note(h header) {
	rev, _ := strconv.ParseInt(h.Revision, 10, 64)
	g.mu.Lock()
	defer g.mu.Unlock()
	if (g.cluster != "" && h.ClusterID != g.cluster) || rev < g.revision {
		g.lossSeen = true
		g.revision = 0
	}
	g.cluster = h.ClusterID
	g.revision = max(g.revision, rev)
}

func (g *gateway) takeLoss() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.lossSeen
	g.lossSeen = false
	return l
}

// send posts data to member n once, with the auth token if there is one: the
// reply of a 200, or etcd's error; err is set when the member did not answer
// (or answered something else than etcd's JSON error).
func (g *gateway) send(ctx context.Context, n int, path string, data []byte, token string) ([]byte, *grpcError, error) {
	rctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, g.endpoints[n]+path, bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	reply, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var ge grpcError
		if json.Unmarshal(reply, &ge) == nil && ge.Code != 0 {
			return nil, &ge, nil
		}
		return nil, nil, fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	return reply, nil, nil
}

// post sends one request to each member at most once, starting with the last that
// answered. A gRPC error about the request comes back as *grpcError at once; a
// refusal of the credentials or of the user's permissions as a *snowid.Error.
func (g *gateway) post(ctx context.Context, path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	start := int(g.last.Load())
	var lastErr error = errUnknown
	renewed := false
	for i := range g.endpoints {
		n := (start + i) % len(g.endpoints)
		token := g.creds.current()
		reply, ge, err := g.send(ctx, n, path, data, token)
		if ge != nil && isAuthError(ge) {
			if renewed {
				return authRefused("etcd refused the token of user %q: %s", g.creds.user, ge.Message)
			}
			renewed = true
			if err := g.renew(ctx, n, token); err != nil {
				var se *snowid.Error
				if errors.As(err, &se) {
					return se
				}
				if ctx.Err() != nil {
					return errUnknown
				}
				continue
			}
			reply, ge, err = g.send(ctx, n, path, data, g.creds.current())
			if ge != nil && isAuthError(ge) {
				return authRefused("etcd refused the token of user %q: %s", g.creds.user, ge.Message)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return errUnknown
			}
			lastErr = err
			continue
		}
		if ge != nil {
			switch ge.Code {
			case grpcPermissionDenied:
				g.last.Store(int32(n))
				return &snowid.Error{Code: snowid.CodeFailedPrecondition, Message: fmt.Sprintf(
					"etcd denied user %q %s: %s (it needs read and write on the key prefix)",
					g.creds.user, path, ge.Message)}
			case grpcInvalidArgument, grpcNotFound, grpcFailedPrecondition:
				g.last.Store(int32(n))
				return ge
			}
			lastErr = ge
			continue
		}
		g.last.Store(int32(n))
		return json.Unmarshal(reply, out)
	}
	if lastErr == errUnknown {
		return errUnknown
	}
	return fmt.Errorf("%w: %v", errUnknown, lastErr)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func unb64(s string) string {
	b, _ := base64.StdEncoding.DecodeString(s)
	return string(b)
}

// prefixEnd is the range end of every key starting with p.
func prefixEnd(p string) string {
	b := []byte(p)
	b[len(b)-1]++
	return string(b)
}

type kv struct {
	Key            string `json:"key"`
	Value          string `json:"value"`
	CreateRevision string `json:"create_revision"`
	ModRevision    string `json:"mod_revision"`
	Lease          string `json:"lease"`
}

func (k kv) key() string   { return unb64(k.Key) }
func (k kv) value() string { return unb64(k.Value) }
func (k kv) create() int64 { v, _ := strconv.ParseInt(k.CreateRevision, 10, 64); return v }
func (k kv) mod() int64    { v, _ := strconv.ParseInt(k.ModRevision, 10, 64); return v }
func (k kv) lease() int64  { v, _ := strconv.ParseInt(k.Lease, 10, 64); return v }

type rangeReply struct {
	Header header `json:"header"`
	Kvs    []kv   `json:"kvs"`
}

func (g *gateway) get(ctx context.Context, key, end string) (rangeReply, error) {
	body := map[string]any{"key": b64(key)}
	if end != "" {
		body["range_end"] = b64(end)
	}
	var r rangeReply
	if err := g.post(ctx, "/v3/kv/range", body, &r); err != nil {
		return r, err
	}
	g.note(r.Header)
	return r, nil
}

func (g *gateway) getOne(ctx context.Context, key string) (*kv, error) {
	r, err := g.get(ctx, key, "")
	if err != nil || len(r.Kvs) == 0 {
		return nil, err
	}
	return &r.Kvs[0], nil
}

type compare map[string]any

func cmpCreate(key string, rev int64) compare {
	return compare{"key": b64(key), "target": "CREATE", "result": "EQUAL", "create_revision": strconv.FormatInt(rev, 10)}
}

func cmpMod(key string, rev int64) compare {
	return compare{"key": b64(key), "target": "MOD", "result": "EQUAL", "mod_revision": strconv.FormatInt(rev, 10)}
}

type op map[string]any

func opPut(key, value string, lease int64) op {
	p := map[string]any{"key": b64(key), "value": b64(value)}
	if lease != 0 {
		p["lease"] = strconv.FormatInt(lease, 10)
	}
	return op{"request_put": p}
}

func opDelete(key string) op { return op{"request_delete_range": map[string]any{"key": b64(key)}} }

func opRange(key string) op { return op{"request_range": map[string]any{"key": b64(key)}} }

type txnReply struct {
	Header    header `json:"header"`
	Succeeded bool   `json:"succeeded"`
	Responses []struct {
		ResponseRange *rangeReply `json:"response_range"`
	} `json:"responses"`
}

func (r txnReply) ranged(i int) *kv {
	if i < len(r.Responses) && r.Responses[i].ResponseRange != nil && len(r.Responses[i].ResponseRange.Kvs) > 0 {
		return &r.Responses[i].ResponseRange.Kvs[0]
	}
	return nil
}

func (g *gateway) txn(ctx context.Context, cmp []compare, success, failure []op) (txnReply, error) {
	var r txnReply
	err := g.post(ctx, "/v3/kv/txn", map[string]any{"compare": cmp, "success": success, "failure": failure}, &r)
	if err == nil {
		g.note(r.Header)
	}
	return r, err
}

func (g *gateway) grant(ctx context.Context, ttl time.Duration) (int64, error) {
	var r struct {
		ID  string `json:"ID"`
		TTL string `json:"TTL"`
	}
	secs := int64(ttl / time.Second)
	if err := g.post(ctx, "/v3/lease/grant", map[string]any{"TTL": strconv.FormatInt(secs, 10)}, &r); err != nil {
		return 0, err
	}
	id, _ := strconv.ParseInt(r.ID, 10, 64)
	got, _ := strconv.ParseInt(r.TTL, 10, 64)
	if got < secs {
		g.revoke(ctx, id)
		return 0, &snowid.Error{Code: snowid.CodeFailedPrecondition,
			Message: fmt.Sprintf("etcd granted a %d s lease, not %d s", got, secs)}
	}
	return id, nil
}

func (g *gateway) revoke(ctx context.Context, id int64) error {
	var r struct{}
	return g.post(ctx, "/v3/lease/revoke", map[string]any{"ID": strconv.FormatInt(id, 10)}, &r)
}

// keepalive is one unary renewal: false when the lease is gone.
func (g *gateway) keepalive(ctx context.Context, id int64) (bool, error) {
	var r struct {
		Result struct {
			TTL string `json:"TTL"`
		} `json:"result"`
	}
	err := g.post(ctx, "/v3/lease/keepalive", map[string]any{"ID": strconv.FormatInt(id, 10)}, &r)
	var ge *grpcError
	if errors.As(err, &ge) && ge.Code == grpcNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ttl, _ := strconv.ParseInt(r.Result.TTL, 10, 64)
	return ttl > 0, nil
}

// watchOnce watches key from rev on one member until an event, ctx's end, or the
// stream's end: true if an event showed the holder gone or replaced.
func (g *gateway) watchOnce(ctx context.Context, member int, key string, rev, create, lease int64) (bool, int64, error) {
	body, _ := json.Marshal(map[string]any{"create_request": map[string]any{
		"key": b64(key), "start_revision": strconv.FormatInt(rev, 10)}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.endpoints[member]+"/v3/watch", bytes.NewReader(body))
	req.Header.Set("Grpc-Metadata-hasleader", "true")
	if token := g.creds.current(); token != "" {
		req.Header.Set("Authorization", token)
	}
	resp, err := g.http.Do(req)
	if err != nil {
		return false, rev, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		var msg struct {
			Result struct {
				Canceled        bool   `json:"canceled"`
				CompactRevision string `json:"compact_revision"`
				Events          []struct {
					Type string `json:"type"`
					Kv   kv     `json:"kv"`
				} `json:"events"`
			} `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil {
			continue
		}
		for _, e := range msg.Result.Events {
			if e.Type == "DELETE" || e.Kv.create() != create || e.Kv.lease() != lease {
				return true, rev, nil
			}
			rev = e.Kv.mod() + 1
		}
		if msg.Result.Canceled {
			return false, rev, errors.New("watch canceled")
		}
	}
	return false, rev, errors.New("watch ended")
}

func isUnknown(err error) bool { return errors.Is(err, errUnknown) }

// unavailable is a failed request as the library's error: a refusal that
// already is one stays as it is.
func unavailable(err error) *snowid.Error {
	var se *snowid.Error
	if errors.As(err, &se) {
		return se
	}
	return &snowid.Error{Code: snowid.CodeUnavailable, Message: strings.TrimPrefix(err.Error(), "etcd: "),
		RetryAfter: 100 * time.Millisecond}
}
