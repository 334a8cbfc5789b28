package etcd

import "strings"

// workerKey is a parsed worker key, <prefix>/<cluster>/workers/<region>/<host>/<kind>, whose
// kind is the holder key or the mark key (docs/protocol.md section 2).
type workerKey struct {
	region, host uint32
	holder       bool // false: the mark
}

// parseWorkerKey reads a key of the namespace prefix/cluster: ok is false for any key that is
// not a worker key of it. Region and host are decimal, without a sign or a leading zero (0
// itself is one digit), at most 32 bits; the kind is exactly "holder" or "mark". Whether a
// region and host fit a layout is the caller's check.
func parseWorkerKey(prefix, cluster, key string) (workerKey, bool) {
	rest, ok := strings.CutPrefix(key, prefix+"/"+cluster+"/workers/")
	if !ok {
		return workerKey{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return workerKey{}, false
	}
	region, okRegion := keyNumber(parts[0])
	host, okHost := keyNumber(parts[1])
	if !okRegion || !okHost {
		return workerKey{}, false
	}
	switch parts[2] {
	case "holder":
		return workerKey{region, host, true}, true
	case "mark":
		return workerKey{region, host, false}, true
	}
	return workerKey{}, false
}

// keyNumber reads the canonical decimal form of a 32-bit unsigned number.
func keyNumber(s string) (uint32, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if v > 1<<32-1 {
		return 0, false
	}
	return uint32(v), true
}
