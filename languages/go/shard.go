package snowid

// Mix64 is the 64-bit finalizer the shard function is built on
// (docs/id-format.md section 10). Part of the format: never changes.
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	x ^= x >> 31
	return x
}

// Shard is ((Mix64(id) >> 32) * shards) >> 32, for 1 <= shards <= 2^32 - 1;
// INVALID_ARGUMENT otherwise.
func Shard(id uint64, shards uint64) (uint32, error) {
	if shards < 1 || shards > 0xFFFFFFFF {
		return 0, newError(CodeInvalidArgument, "the number of shards must be 1 to 2^32 - 1, not %d", shards)
	}
	return uint32(((Mix64(id) >> 32) * shards) >> 32), nil
}
