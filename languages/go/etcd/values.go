package etcd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	snowid "github.com/snowid/snowid/languages/go"
)

const maxInstantMs = 9_223_372_036_853

func dataLoss(format string, a ...any) error {
	return &snowid.Error{Code: snowid.CodeDataLoss, Message: fmt.Sprintf(format, a...)}
}

// compact writes members sorted by name, no white space, non-ASCII as UTF-8.
func compact(members map[string]any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(members) // maps encode with sorted keys
	return strings.TrimSuffix(b.String(), "\n")
}

// object reads a JSON object strictly: DATA_LOSS unless it is one.
func object(text string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	d := json.NewDecoder(strings.NewReader(text))
	if err := d.Decode(&m); err != nil || m == nil || d.More() {
		return nil, dataLoss("not a JSON object: %.64q", text)
	}
	return m, nil
}

// instant reads an integer member of ms; absent or null gives ok false.
func instant(m map[string]json.RawMessage, name string) (int64, bool, error) {
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return 0, false, nil
	}
	s := string(raw)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strings.ContainsAny(s, ".eE+") || v < -maxInstantMs || v > maxInstantMs {
		return 0, false, dataLoss("%s is not an integer of ms: %.32s", name, s)
	}
	return v, true, nil
}

func text(m map[string]json.RawMessage, name string) (string, error) {
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", dataLoss("%s is not a string", name)
	}
	return s, nil
}

type mark struct {
	highWater, releasedAt, cleanRelease int64
	hasHigh, hasReleased, hasClean      bool
}

func decodeMark(s string) (mark, error) {
	m, err := object(s)
	if err != nil {
		return mark{}, err
	}
	var k mark
	if k.highWater, k.hasHigh, err = instant(m, "high_water_ms"); err != nil {
		return k, err
	}
	if k.releasedAt, k.hasReleased, err = instant(m, "released_at_ms"); err != nil {
		return k, err
	}
	k.cleanRelease, k.hasClean, err = instant(m, "clean_release_ms")
	return k, err
}

func (k mark) encode() string {
	m := map[string]any{}
	if k.hasHigh {
		m["high_water_ms"] = k.highWater
	}
	if k.hasReleased {
		m["released_at_ms"] = k.releasedAt
	}
	if k.hasClean {
		m["clean_release_ms"] = k.cleanRelease
	}
	return compact(m)
}

// freeFromMs is when an unheld id with this mark becomes free (section 8); ok false: always.
func (k mark) freeFromMs(quarantine time.Duration) (int64, bool) {
	if !k.hasHigh && !k.hasReleased {
		return 0, false
	}
	v := int64(-1 << 63)
	if k.hasHigh {
		v = k.highWater
	}
	if k.hasReleased {
		v = max(v, k.releasedAt)
	}
	clean := k.hasClean && k.hasHigh && k.hasReleased && k.cleanRelease == k.highWater
	if !clean {
		v += quarantine.Milliseconds()
	}
	return v, true
}

type store struct {
	incarnation string
	highWater   int64
	hasHigh     bool
	reason      string
	writtenMs   int64
}

func decodeStore(s string) (store, error) {
	m, err := object(s)
	if err != nil {
		return store{}, err
	}
	var r store
	if r.incarnation, err = text(m, "incarnation"); err != nil {
		return r, err
	}
	if len(r.incarnation) != 16 || strings.Trim(strings.ToLower(r.incarnation), "0123456789abcdef") != "" {
		return r, dataLoss("the store record's incarnation is not 16 hexadecimal digits")
	}
	if r.highWater, r.hasHigh, err = instant(m, "high_water_ms"); err != nil {
		return r, err
	}
	if r.reason, err = text(m, "reason"); err != nil {
		return r, err
	}
	r.writtenMs, _, err = instant(m, "written_ms")
	return r, err
}

func (r store) encode() string {
	m := map[string]any{"incarnation": r.incarnation, "reason": r.reason, "written_ms": r.writtenMs}
	if r.hasHigh {
		m["high_water_ms"] = r.highWater
	}
	return compact(m)
}

func encodeHolder(host string, pid int, startedMs int64, address string, lease int64) string {
	if startedMs < 0 {
		startedMs = 0
	}
	return compact(map[string]any{"address": address, "host": host, "pid": pid,
		"lease":   strconv.FormatUint(uint64(lease), 16),
		"started": time.UnixMilli(startedMs).UTC().Format("2006-01-02T15:04:05.000Z")})
}

// ceilMs rounds an instant in ns up to the next whole ms.
func ceilMs(ns int64) int64 {
	q := ns / 1e6
	if ns%1e6 > 0 {
		q++
	}
	return q
}

// holder is a holder value as read (docs/protocol.md section 3); lease is the etcd lease id as
// the signed 64-bit integer with the same bits.
type holder struct {
	host, address string
	pid           int64
	startedMs     int64
	lease         int64
}

// decodeHolder reads a holder value strictly: DATA_LOSS unless it is a JSON object whose
// `lease` is 1 to 16 hexadecimal digits; `host` and `address` are strings, `pid` an integer
// and `started` an RFC 3339 instant, each absent or null for its default. Members it does not
// know are ignored.
func decodeHolder(s string) (holder, error) {
	m, err := object(s)
	if err != nil {
		return holder{}, err
	}
	var h holder
	if h.host, err = text(m, "host"); err != nil {
		return holder{}, err
	}
	if h.address, err = text(m, "address"); err != nil {
		return holder{}, err
	}
	if raw, ok := m["pid"]; ok && string(raw) != "null" {
		if h.pid, err = strconv.ParseInt(string(raw), 10, 64); err != nil {
			return holder{}, dataLoss("holder pid is not a 64-bit integer: %.32s", raw)
		}
	}
	started, err := text(m, "started")
	if err != nil {
		return holder{}, err
	}
	if started != "" {
		t, err := time.Parse(time.RFC3339Nano, started)
		if err != nil {
			return holder{}, dataLoss("holder start time is not an RFC 3339 instant: %.40q", started)
		}
		h.startedMs = t.UnixMilli()
	}
	lease, err := text(m, "lease")
	if err != nil {
		return holder{}, err
	}
	v, err := strconv.ParseUint(lease, 16, 64)
	if err != nil || len(lease) == 0 || len(lease) > 16 || strings.ContainsAny(lease, "+-_xX ") {
		return holder{}, dataLoss("holder lease is not 1 to 16 hexadecimal digits: %.40q", lease)
	}
	h.lease = int64(v)
	return h, nil
}
