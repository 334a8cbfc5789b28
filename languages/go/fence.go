package snowid

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// FenceStore keeps a generator's time fence (docs/protocol.md section 12).
type FenceStore interface {
	// Load is the stored fence in Unix ms; ok false if none was ever stored.
	Load() (unixMs int64, ok bool, err error)
	// Store makes the fence durable before returning nil.
	Store(unixMs int64) error
}

const fenceHead = "snowid-fence 1 "

// ParseFence reads a fence file's whole content; DATA_LOSS for anything but
// the exact form.
func ParseFence(data []byte) (int64, error) {
	bad := func() error { return newError(CodeDataLoss, "not a fence file: %q", clip(string(data))) }
	n := len(data)
	if n < len(fenceHead)+2 || string(data[:len(fenceHead)]) != fenceHead || data[n-1] != '\n' {
		return 0, bad()
	}
	digits := data[len(fenceHead) : n-1]
	if len(digits) < 1 || len(digits) > 18 {
		return 0, bad()
	}
	var v int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, bad()
		}
		v = v*10 + int64(c-'0')
	}
	if v > MaxUnixMs {
		return 0, newError(CodeDataLoss, "fence %d ms is past the last representable millisecond", v)
	}
	return v, nil
}

// FormatFence is the text stored for a fence; INVALID_ARGUMENT before 1970
// or past MaxUnixMs.
func FormatFence(unixMs int64) ([]byte, error) {
	if unixMs < 0 || unixMs > MaxUnixMs {
		return nil, newError(CodeInvalidArgument, "a fence is 0 to %d ms, not %d", MaxUnixMs, unixMs)
	}
	b := append([]byte(fenceHead), strconv.FormatInt(unixMs, 10)...)
	return append(b, '\n'), nil
}

// FenceFile is a fence in one file, replaced atomically: write <path>.tmp,
// fsync, rename over <path>, fsync the directory. A crash leaves the old or
// the new fence, never a torn one. Two generators must not share one.
type FenceFile struct{ Path string }

// Load reads the file; a file that does not exist is no fence.
func (f FenceFile) Load() (int64, bool, error) {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, newError(CodeDataLoss, "cannot read the fence file %s: %v", f.Path, err)
	}
	v, err := ParseFence(data)
	if err != nil {
		return 0, false, newError(CodeDataLoss, "%s: %s", f.Path, err.(*Error).Message)
	}
	return v, true, nil
}

// Store writes the fence durably; any failed step is UNAVAILABLE and the old
// file stays.
func (f FenceFile) Store(unixMs int64) error {
	data, err := FormatFence(unixMs)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		return &Error{Code: CodeUnavailable, Message: "cannot store the fence in " + f.Path + ": " + err.Error(),
			RetryAfter: 1e6}
	}
	tmp := f.Path + ".tmp"
	w, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fail(err)
	}
	if _, err = w.Write(data); err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, f.Path); err != nil {
		return fail(err)
	}
	d, err := os.Open(filepath.Dir(f.Path))
	if err != nil {
		return fail(err)
	}
	err = d.Sync()
	d.Close()
	if err != nil {
		return fail(err)
	}
	return nil
}
