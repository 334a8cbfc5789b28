package snowid_test

import (
	"strconv"
	"testing"

	snowid "github.com/snowid/snowid/languages/go"
)

// ParseID accepts exactly the canonical digit strings and what the standard
// library's unsigned parser accepts of them, and formats back to the value.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"0", "007", "9223372036854775807", "18446744073709551615",
		"18446744073709551616", "-1", "+1", " 1", "1 ", "", "١", "00000000000000000001", "123456789012345678901"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := snowid.ParseID(s, nil)
		ok := len(s) >= 1 && len(s) <= 20
		for i := 0; ok && i < len(s); i++ {
			ok = s[i] >= '0' && s[i] <= '9'
		}
		want, perr := strconv.ParseUint(s, 10, 64)
		switch {
		case !ok:
			if snowid.CodeOf(err) != snowid.CodeInvalidArgument {
				t.Fatalf("%q: %d %v", s, v, err)
			}
		case perr != nil:
			if snowid.CodeOf(err) != snowid.CodeOutOfRange {
				t.Fatalf("%q: %d %v", s, v, err)
			}
		default:
			if err != nil || v != want {
				t.Fatalf("%q: %d %v", s, v, err)
			}
			back, err := snowid.ParseID(snowid.FormatID(v), snowid.Sonyflake)
			if (err == nil) != (v <= snowid.Sonyflake.MaxID()) || (err == nil && back != v) {
				t.Fatalf("%q with a layout: %d %v", s, back, err)
			}
		}
	})
}

// ParseFence accepts exactly what FormatFence writes, up to leading zeros.
func FuzzParseFence(f *testing.F) {
	for _, s := range []string{"snowid-fence 1 0\n", "snowid-fence 1 1767225601000\n", "snowid-fence 1 1767225601000",
		"snowid-fence 1 9223372036855\n", "snowid-fence 2 1\n", "snowid-fence 1 -1\n", "snowid-fence 1 1\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := snowid.ParseFence(data)
		if err != nil {
			if snowid.CodeOf(err) != snowid.CodeDataLoss {
				t.Fatalf("%q: %v", data, err)
			}
			return
		}
		text, err := snowid.FormatFence(v)
		if err != nil {
			t.Fatalf("%q read as %d, which does not format: %v", data, v, err)
		}
		if again, err := snowid.ParseFence(text); err != nil || again != v {
			t.Fatalf("%q: %d, then %q: %d %v", data, v, text, again, err)
		}
		const head = len("snowid-fence 1 ")
		digits := string(data[head : len(data)-1])
		if n, err := strconv.ParseInt(digits, 10, 64); err != nil || n != v || digits[0] == '+' {
			t.Fatalf("%q read as %d", data, v)
		}
	})
}

// Decode and Encode are inverse on every id of every preset.
func FuzzDecode(f *testing.F) {
	f.Add(uint64(0))
	f.Add(uint64(26320794961383466))
	f.Add(^uint64(0))
	f.Fuzz(func(t *testing.T, id uint64) {
		for _, name := range []string{"snowid", "twitter", "discord", "instagram", "sonyflake"} {
			l, _ := snowid.Preset(name)
			d, err := l.Decode(id)
			if id > l.MaxID() {
				if snowid.CodeOf(err) != snowid.CodeOutOfRange {
					t.Fatalf("%s %d: %v", name, id, err)
				}
				continue
			}
			values := map[string]uint64{}
			for i, fl := range l.Fields() {
				values[fl.Name] = d.Values[i]
			}
			if back, err := l.Encode(values); err != nil || back != id {
				t.Fatalf("%s %d: %d %v", name, id, back, err)
			}
		}
	})
}
