package etcd

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	snowid "github.com/snowid/snowid/languages/go"
)

// runTool runs the C++ tool (SNOWID_CLI_BIN) on the test's etcd and namespace.
func runTool(t *testing.T, url, cluster string, args ...string) string {
	t.Helper()
	bin := os.Getenv("SNOWID_CLI_BIN")
	if bin == "" {
		t.Fatal("SNOWID_CLI_BIN is not set: the interop tests need the C++ snowid tool")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "SNOWID_ETCD_ENDPOINTS=" + url, "SNOWID_ETCD_CLUSTER=" + cluster,
		"SNOWID_STATE_DIR=" + t.TempDir()}
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("snowid %v: %v %s", args, err, msg)
	}
	return string(out)
}

func decode(t *testing.T, id snowid.ID) snowid.Decoded {
	d, err := snowid.Snowid.Decode(uint64(id))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A fence by the C++ tool is seen within a second and the id replaced; ids never go back.
func TestToolFenceIsSeen(t *testing.T) {
	url := startEtcd(t)
	runTool(t, url, "tf", "workers", "init")
	ctx := context.Background()
	o := short(url, "tf")
	o.Region = 0
	l, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	before := next(t, l)
	_, host := l.Worker()
	start := time.Now()
	runTool(t, url, "tf", "workers", "fence", "0", strconv.Itoa(host))
	for l.State() != "LOST" && l.Reacquisitions() == 0 {
		if time.Since(start) > time.Second {
			t.Fatal("the fence was not seen within a second")
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("[ measured ] fence seen %v after starting the tool", time.Since(start))
	after := next(t, l)
	if _, h := l.Worker(); h == host || after <= before {
		t.Fatalf("after the fence: host %d (was %d), id %d after %d", h, host, after, before)
	}
}

// A clean release lets the tool take the same id at once, past our last instant plus the
// skew, and the tool's release lets us back in past its ids.
func TestToolHonoursCleanReleaseAndBack(t *testing.T) {
	url := startEtcd(t)
	runTool(t, url, "tr", "workers", "init")
	ctx := context.Background()
	host := 9
	o := short(url, "tr")
	o.Region, o.Host = 0, &host
	l, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	var ours snowid.ID
	for range 3000 {
		ours = next(t, l)
	}
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
	out := strings.Fields(runTool(t, url, "tr", "next", "-n", "5", "--host", "9"))
	if len(out) != 5 {
		t.Fatalf("the tool printed %v", out)
	}
	var theirs []snowid.ID
	for _, s := range out {
		var id snowid.ID
		if err := id.UnmarshalText([]byte(s)); err != nil {
			t.Fatal(err)
		}
		if decode(t, id).Host != 9 {
			t.Fatalf("the tool's id %d is not of host 9", id)
		}
		theirs = append(theirs, id)
	}
	if decode(t, theirs[0]).UnixMs < decode(t, ours).UnixMs+100 {
		t.Fatalf("the tool issued %d at %d, within the skew of our last %d", theirs[0], decode(t, theirs[0]).UnixMs, decode(t, ours).UnixMs)
	}
	start := time.Now()
	l2, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close(ctx)
	again := next(t, l2)
	t.Logf("[ measured ] re-acquire after the tool's release: %v", time.Since(start))
	if decode(t, again).UnixMs < decode(t, theirs[4]).UnixMs+100 {
		t.Fatalf("our id %d is within the skew of the tool's last %d", again, theirs[4])
	}
}
