// go-redis against snowidd, over the Unix socket (RESP2) and TCP (RESP3).
//
// Ids arrive as strings of decimal digits; strconv.ParseInt makes them exact
// int64 values.
package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

const epochMs = 1767225600000

var idText = regexp.MustCompile(`^[1-9][0-9]{0,18}$`)

// fields decodes the layout: 41 bits of ms, 2 region, 8 host, 12 sequence.
type fields struct{ ticks, unixMs, region, host, sequence int64 }

func decode(id int64) fields {
	return fields{
		ticks:    id >> 22,
		unixMs:   id>>22 + epochMs,
		region:   id >> 20 & 3,
		host:     id >> 12 & 255,
		sequence: id & 4095,
	}
}

func parseID(reply any) (int64, error) {
	s, ok := reply.(string)
	if !ok {
		return 0, fmt.Errorf("an id is a string, not %T (%v)", reply, reply)
	}
	if !idText.MatchString(s) {
		return 0, fmt.Errorf("not an id: %q", s)
	}
	return strconv.ParseInt(s, 10, 64)
}

// ledger holds every id received, checked against the pinned worker, the
// run's time window and the ids seen before.
type ledger struct {
	region, host int64
	startMs      int64
	seen         map[int64]bool
	received     int
}

// stream holds the ids of one connection, which must increase.
type stream struct {
	l    *ledger
	last int64
}

func (s *stream) accept(replies ...any) ([]int64, error) {
	nowMs := time.Now().UnixMilli()
	ids := make([]int64, 0, len(replies))
	for _, r := range replies {
		id, err := parseID(r)
		if err != nil {
			return nil, err
		}
		d := decode(id)
		switch {
		case d.region != s.l.region || d.host != s.l.host:
			return nil, fmt.Errorf("id %d: worker %d/%d, not %d/%d", id, d.region, d.host,
				s.l.region, s.l.host)
		case d.unixMs < s.l.startMs || d.unixMs > nowMs:
			return nil, fmt.Errorf("id %d: time %d outside the run [%d, %d]", id, d.unixMs,
				s.l.startMs, nowMs)
		case id <= s.last:
			return nil, fmt.Errorf("id %d does not follow %d", id, s.last)
		case s.l.seen[id]:
			return nil, fmt.Errorf("id %d issued twice", id)
		}
		s.l.seen[id] = true
		s.last = id
		ids = append(ids, id)
	}
	s.l.received += len(ids)
	return ids, nil
}

// asMap reads DECODE's reply: a RESP3 map, or a RESP2 flat array.
func asMap(reply any) (map[string]any, error) {
	out := map[string]any{}
	switch v := reply.(type) {
	case map[any]any:
		for k, x := range v {
			out[fmt.Sprint(k)] = x
		}
	case []any:
		if len(v)%2 != 0 {
			return nil, fmt.Errorf("DECODE: odd flat array %v", v)
		}
		for i := 0; i < len(v); i += 2 {
			out[fmt.Sprint(v[i])] = v[i+1]
		}
	default:
		return nil, fmt.Errorf("DECODE gave %T", reply)
	}
	return out, nil
}

func checkDecode(ctx context.Context, c *redis.Conn, id int64) error {
	reply, err := c.Do(ctx, "DECODE", strconv.FormatInt(id, 10)).Result()
	if err != nil {
		return err
	}
	got, err := asMap(reply)
	if err != nil {
		return err
	}
	if got["id"] != strconv.FormatInt(id, 10) {
		return fmt.Errorf("DECODE: id %v, not %d", got["id"], id)
	}
	d := decode(id)
	for name, want := range map[string]int64{"ticks": d.ticks, "unix_ms": d.unixMs,
		"region": d.region, "host": d.host, "sequence": d.sequence} {
		if v, ok := got[name].(int64); !ok || v != want {
			return fmt.Errorf("DECODE: %s is %T %v, not %d", name, got[name], got[name], want)
		}
	}
	shown, err := time.Parse(time.RFC3339Nano, fmt.Sprint(got["time"]))
	if err != nil || shown.UnixMilli() != d.unixMs {
		return fmt.Errorf("DECODE: time %v, not at %d ms", got["time"], d.unixMs)
	}
	return nil
}

func idsOnOneConnection(ctx context.Context, c *redis.Conn, l *ledger) error {
	s := &stream{l: l}
	for i := 0; i < 10; i++ {
		reply, err := c.Do(ctx, "NEXTID").Result()
		if err != nil {
			return err
		}
		if _, err := s.accept(reply); err != nil {
			return err
		}
	}

	pipe := c.Pipeline()
	cmds := make([]*redis.Cmd, 2000)
	for i := range cmds {
		cmds[i] = pipe.Do(ctx, "NEXTID")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	for _, cmd := range cmds {
		if _, err := s.accept(cmd.Val()); err != nil {
			return err
		}
	}

	batch, err := c.Do(ctx, "NEXTIDS", 5).Slice()
	if err != nil {
		return err
	}
	if len(batch) != 5 {
		return fmt.Errorf("NEXTIDS 5 gave %v", batch)
	}
	ids, err := s.accept(batch...)
	if err != nil {
		return err
	}
	return checkDecode(ctx, c, ids[4])
}

func expectOK(cmd *redis.Cmd) error {
	reply, err := cmd.Text()
	if err == nil && reply != "OK" {
		err = fmt.Errorf("%v: %q, not OK", cmd.Args(), reply)
	}
	return err
}

// integerOptIn: after IDFORMAT INTEGER the ids are native integers, exact in
// an int64; IDFORMAT STRING restores strings.
func integerOptIn(ctx context.Context, c *redis.Conn, l *ledger) error {
	if err := expectOK(c.Do(ctx, "IDFORMAT", "INTEGER")); err != nil {
		return err
	}
	s := &stream{l: l}
	reply, err := c.Do(ctx, "NEXTID").Result()
	if err != nil {
		return err
	}
	n, ok := reply.(int64)
	if !ok {
		return fmt.Errorf("after IDFORMAT INTEGER: %T %v", reply, reply)
	}
	if _, err := s.accept(strconv.FormatInt(n, 10)); err != nil {
		return err
	}
	if err := expectOK(c.Do(ctx, "IDFORMAT", "STRING")); err != nil {
		return err
	}
	reply, err = c.Do(ctx, "NEXTID").Result()
	if err != nil {
		return err
	}
	_, err = s.accept(reply)
	return err
}

func idsIssued(ctx context.Context, c *redis.Conn) (int, error) {
	info, err := c.Info(ctx, "stats").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "ids_issued:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, fmt.Errorf("INFO stats has no ids_issued:\n%s", info)
}

func run() error {
	ctx := context.Background()
	l := &ledger{seen: map[int64]bool{}, startMs: time.Now().UnixMilli()}
	var err error
	if l.region, err = strconv.ParseInt(os.Getenv("SNOWIDD_REGION"), 10, 64); err != nil {
		return err
	}
	if l.host, err = strconv.ParseInt(os.Getenv("SNOWIDD_HOST"), 10, 64); err != nil {
		return err
	}
	overUnix := redis.NewClient(&redis.Options{Network: "unix",
		Addr: os.Getenv("SNOWIDD_SOCKET"), Protocol: 2})
	defer overUnix.Close()
	overTCP := redis.NewClient(&redis.Options{
		Addr:     os.Getenv("SNOWIDD_TCP_HOST") + ":" + os.Getenv("SNOWIDD_TCP_PORT"),
		Protocol: 3})
	defer overTCP.Close()

	// A Conn is one connection taken from the pool, so its ids must increase.
	unixConn := overUnix.Conn()
	defer unixConn.Close()
	tcpConn := overTCP.Conn()
	defer tcpConn.Close()
	if err := idsOnOneConnection(ctx, unixConn, l); err != nil {
		return fmt.Errorf("unix: %w", err)
	}
	if err := idsOnOneConnection(ctx, tcpConn, l); err != nil {
		return fmt.Errorf("tcp: %w", err)
	}
	if err := integerOptIn(ctx, tcpConn, l); err != nil {
		return fmt.Errorf("tcp: %w", err)
	}
	issued, err := idsIssued(ctx, unixConn)
	if err != nil {
		return err
	}
	if issued != l.received {
		return fmt.Errorf("INFO ids_issued %d, but %d ids received", issued, l.received)
	}
	fmt.Printf("%d ids checked, all exact and distinct\n", len(l.seen))
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}
