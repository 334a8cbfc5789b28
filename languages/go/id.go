package snowid

import (
	"strconv"
)

// ID is an id of a generating layout: 63 bits, so never negative. It is a
// JSON string (ids pass 2^53, which JSON numbers in many readers cannot hold)
// and text in the canonical decimal form.
type ID int64

// String is the canonical text: decimal digits without leading zeros.
func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// MarshalText writes the canonical text.
func (id ID) MarshalText() ([]byte, error) {
	if id < 0 {
		return nil, newError(CodeOutOfRange, "%d is not an id", int64(id))
	}
	return strconv.AppendInt(nil, int64(id), 10), nil
}

// UnmarshalText reads an id strictly (ParseID); a value above 2^63 - 1 is
// OUT_OF_RANGE. On error the id is unchanged.
func (id *ID) UnmarshalText(b []byte) error {
	v, err := ParseIDBytes(b, nil)
	if err != nil {
		return err
	}
	if v > 1<<63-1 {
		return newError(CodeOutOfRange, "%d is above 2^63 - 1", v)
	}
	*id = ID(v)
	return nil
}

// MarshalJSON writes a quoted string, "26320794961383466".
func (id ID) MarshalJSON() ([]byte, error) {
	if id < 0 {
		return nil, newError(CodeOutOfRange, "%d is not an id", int64(id))
	}
	b := make([]byte, 0, 22)
	b = append(b, '"')
	b = strconv.AppendInt(b, int64(id), 10)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts only a JSON string holding the strict decimal form:
// a number, null, escapes or spaces are INVALID_ARGUMENT and leave the id
// unchanged.
func (id *ID) UnmarshalJSON(b []byte) error {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return newError(CodeInvalidArgument, "an id in JSON is a string of digits, not %.32s", b)
	}
	return id.UnmarshalText(b[1 : len(b)-1])
}

// ParseID reads an id: 1 to 20 ASCII digits (leading zeros allowed), at most
// 2^64 - 1 and, with a layout, at most its MaxID. Anything else (a sign, a
// space, a non-ASCII digit) is INVALID_ARGUMENT; a value too large is
// OUT_OF_RANGE.
func ParseID(text string, layout *Layout) (uint64, error) {
	return parseID(text, layout)
}

// ParseIDBytes is ParseID of bytes.
func ParseIDBytes(b []byte, layout *Layout) (uint64, error) {
	return parseID(string(b), layout)
}

func parseID(s string, layout *Layout) (uint64, error) {
	if len(s) < 1 || len(s) > 20 {
		return 0, newError(CodeInvalidArgument, "an id is 1 to 20 ASCII digits, not %q", clip(s))
	}
	var v uint64
	over := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, newError(CodeInvalidArgument, "an id is 1 to 20 ASCII digits, not %q", clip(s))
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			over = true
		}
		v = v*10 + d
	}
	if over {
		return 0, newError(CodeOutOfRange, "%s is above 2^64 - 1", s)
	}
	if layout != nil && v > layout.MaxID() {
		return 0, newError(CodeOutOfRange, "%d is above the largest id of layout %s", v, layout.name)
	}
	return v, nil
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32]
	}
	return s
}

// FormatID is the canonical text of an id.
func FormatID(id uint64) string { return strconv.FormatUint(id, 10) }
