package snowid_test

import (
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	snowid "github.com/snowid/snowid/languages/go"
)

// The sidecar tests run under tests/clients/run_with_daemon.py, which starts a real snowidd
// and names its socket and port (ctest languages.go.sidecar). Without it they are skipped
// by `go test` run by hand; the ctest test sets SNOWID_REQUIRE_SIDECAR, so there a missing
// daemon fails.
func daemon(t *testing.T) (string, string) {
	sock, port := os.Getenv("SNOWIDD_SOCKET"), os.Getenv("SNOWIDD_TCP_PORT")
	if sock == "" || port == "" {
		if os.Getenv("SNOWID_REQUIRE_SIDECAR") != "" {
			t.Fatal("SNOWIDD_SOCKET and SNOWIDD_TCP_PORT are not set: no snowidd to test against")
		}
		t.Skip("no snowidd (run through ctest languages.go.sidecar)")
	}
	return sock, net.JoinHostPort(os.Getenv("SNOWIDD_TCP_HOST"), port)
}

func TestSidecar(t *testing.T) {
	sock, tcp := daemon(t)
	region, _ := strconv.Atoi(os.Getenv("SNOWIDD_REGION"))
	host, _ := strconv.Atoi(os.Getenv("SNOWIDD_HOST"))
	for _, c := range []struct{ network, address string }{{"unix", sock}, {"tcp", tcp}} {
		s, err := snowid.DialSidecar(c.network, c.address, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		seen := map[snowid.ID]bool{}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var prev snowid.ID
				for range 50 {
					ids, err := s.NextIDs(100)
					if err != nil {
						t.Error(err)
						return
					}
					one, err := s.NextID()
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, id := range append(ids, one) {
						if seen[id] || id <= prev {
							t.Errorf("id %d repeated or not increasing (after %d)", id, prev)
						}
						seen[id] = true
						prev = id
						d, _ := snowid.Snowid.Decode(uint64(id))
						if int(d.Region) != region || int(d.Host) != host {
							t.Errorf("id %d from worker %d/%d", id, d.Region, d.Host)
						}
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(seen) != 4*50*101 {
			t.Fatalf("%s: %d ids", c.network, len(seen))
		}
		if _, err := s.NextIDs(1 << 30); !errors.Is(err, snowid.ErrInvalidArgument) && !errors.Is(err, snowid.ErrOutOfRange) {
			t.Fatalf("an oversized batch: %v", err)
		}
		if _, err := s.Do("NOSUCHCOMMAND"); err == nil || snowid.IsRetryable(err) {
			t.Fatalf("an unknown command: %v", err)
		}
		if id, err := s.NextID(); err != nil || seen[id] {
			t.Fatalf("after errors: %d %v", id, err)
		}
		s.Close()
	}
}
