package snowid

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Sidecar is a client of the snowidd daemon over RESP (docs/daemon.md), on its Unix socket
// or TCP. Ids arrive as bulk strings of decimal digits and are read strictly. Errors keep the
// daemon's first word as the code. Safe for concurrent use (one request at a time).
type Sidecar struct {
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
}

// DefaultSocketPath is where snowidd listens by default (SNOWID_SOCKET overrides it).
func DefaultSocketPath() string {
	if p := os.Getenv("SNOWID_SOCKET"); p != "" {
		return p
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "snowid", "snowidd.sock")
	}
	if os.Geteuid() == 0 {
		return "/run/snowid/snowidd.sock"
	}
	return fmt.Sprintf("/tmp/snowid-%d/snowidd.sock", os.Geteuid())
}

// DialSidecar connects: network "unix" (address a socket path) or "tcp" (HOST:PORT).
func DialSidecar(network, address string, timeout time.Duration) (*Sidecar, error) {
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, &Error{Code: CodeUnavailable, Message: "snowidd: " + err.Error(), RetryAfter: 100 * time.Millisecond}
	}
	return &Sidecar{conn: c, r: bufio.NewReader(c)}, nil
}

// Close closes the connection.
func (s *Sidecar) Close() error { return s.conn.Close() }

var retryHint = regexp.MustCompile(`; retry after (\d+)ms$`)

func errorOfReply(line string) *Error {
	word, msg, _ := strings.Cut(line, " ")
	var after time.Duration
	if m := retryHint.FindStringSubmatchIndex(msg); m != nil {
		n, _ := strconv.Atoi(msg[m[2]:m[3]])
		after = time.Duration(n) * time.Millisecond
		msg = msg[:m[0]]
	}
	code, ok := CodeByName(word)
	switch {
	case word == "ERR":
		code = CodeInvalidArgument
	case !ok || code == CodeOK:
		code, msg = CodeFailedPrecondition, word+": "+msg
	}
	return &Error{Code: code, Message: "snowidd: " + msg, RetryAfter: after}
}

// Do sends one command and reads its reply: a string, an int64, a []any, or nil.
func (s *Sidecar) Do(args ...string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := s.conn.Write([]byte(b.String())); err != nil {
		return nil, &Error{Code: CodeUnavailable, Message: "snowidd: " + err.Error()}
	}
	v, err := s.read(0)
	if err != nil {
		return nil, err
	}
	if e, ok := v.(*Error); ok {
		return nil, e
	}
	return v, nil
}

func (s *Sidecar) line() (string, error) {
	l, err := s.r.ReadString('\n')
	if err != nil || len(l) < 3 || l[len(l)-2] != '\r' {
		s.conn.Close()
		return "", &Error{Code: CodeUnavailable, Message: "snowidd: the connection broke"}
	}
	return l[:len(l)-2], nil
}

func (s *Sidecar) read(depth int) (any, error) {
	l, err := s.line()
	if err != nil {
		return nil, err
	}
	bad := &Error{Code: CodeDataLoss, Message: "snowidd: not a RESP reply: " + clip(l)}
	switch l[0] {
	case '+':
		return l[1:], nil
	case '-':
		return errorOfReply(l[1:]), nil
	case ':':
		n, err := strconv.ParseInt(l[1:], 10, 64)
		if err != nil {
			return nil, bad
		}
		return n, nil
	case '$':
		n, err := strconv.Atoi(l[1:])
		if err != nil || n < -1 || n > 64<<20 {
			return nil, bad
		}
		if n == -1 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(s.r, buf); err != nil || buf[n] != '\r' || buf[n+1] != '\n' {
			s.conn.Close()
			return nil, &Error{Code: CodeUnavailable, Message: "snowidd: the connection broke"}
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(l[1:])
		if err != nil || n < -1 || n > 1<<20 || depth > 8 {
			return nil, bad
		}
		out := make([]any, 0, max(n, 0))
		for range n {
			v, err := s.read(depth + 1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, bad
}

func ioReadFull(r *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func asID(v any) (ID, error) {
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case int64:
		text = strconv.FormatInt(x, 10)
	default:
		return 0, &Error{Code: CodeDataLoss, Message: fmt.Sprintf("snowidd: an id reply was %T", v)}
	}
	var id ID
	if err := id.UnmarshalText([]byte(text)); err != nil {
		return 0, &Error{Code: CodeDataLoss, Message: "snowidd: not an id: " + clip(text)}
	}
	return id, nil
}

// NextID asks for one id (NEXTID).
func (s *Sidecar) NextID() (ID, error) {
	v, err := s.Do("NEXTID")
	if err != nil {
		return 0, err
	}
	return asID(v)
}

// NextIDs asks for n increasing ids (NEXTIDS n, 1 <= n <= the daemon's max_batch).
func (s *Sidecar) NextIDs(n int) ([]ID, error) {
	if n < 1 {
		return nil, newError(CodeInvalidArgument, "a batch is at least 1 id, not %d", n)
	}
	v, err := s.Do("NEXTIDS", strconv.Itoa(n))
	if err != nil {
		return nil, err
	}
	arr, ok := v.([]any)
	if !ok || len(arr) != n {
		return nil, &Error{Code: CodeDataLoss, Message: "snowidd: NEXTIDS did not answer an array of the ids asked for"}
	}
	out := make([]ID, n)
	for i, x := range arr {
		if out[i], err = asID(x); err != nil {
			return nil, err
		}
	}
	return out, nil
}
