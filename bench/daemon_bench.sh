#!/usr/bin/env bash
# Benchmarks snowidd with real clients, figures only (docs/benchmarks.md):
#   redis-benchmark over the Unix socket: NEXTID (one client, then 50, then 50
#     pipelining 16) and NEXTIDS 100 (50 clients pipelining 8); the same
#     loads as NEXTSEQ on a named sequence (created once with SEQCREATE, in
#     the daemon's default ticket table, an SQLite file in its state
#     directory), plus NEXTSEQ on a sequence of step 1,000, where every
#     thousandth number costs a committed take; and, when redis-server is
#     installed, the same loads as INCR / INCRBY on a Redis started here: the
#     usual central id counter, as the reference;
#   wrk against /v1/ids (8 and 64 connections) and /v1/ids?count=1000.
# Clients and daemon share the machine's cores, so the figures are a floor of
# what the daemon does with cores of its own. Environment: SNOWID_BENCH_N
# (requests per redis-benchmark run, default 1000000), SNOWID_BENCH_SECONDS
# (per wrk run, default 10), SNOWID_BENCH_PORT (HTTP, default 17390).
set -euo pipefail
cd "$(dirname "$0")/.."

n=${SNOWID_BENCH_N:-1000000}
seconds=${SNOWID_BENCH_SECONDS:-10}
port=${SNOWID_BENCH_PORT:-17390}
for tool in redis-benchmark redis-cli wrk; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: run scripts/install-deps" >&2; exit 1; }
done

# The same configuration as bench/run.sh, plus the daemon.
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSNOWID_BUILD_TESTS=OFF \
  -DSNOWID_BUILD_TOOLS=OFF -DSNOWID_BUILD_BENCHMARKS=ON -DSNOWID_BUILD_DAEMON=ON >/dev/null
cmake --build build/release --target snowidd -- -j2 >/dev/null

work=$(mktemp -d "${TMPDIR:-/tmp}/snowid-bench.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# wait_for_socket PATH: until something answers PING there (10 s at most).
wait_for_socket() {
  for _ in $(seq 100); do
    if redis-cli -s "$1" PING 2>/dev/null | grep -q PONG; then return 0; fi
    sleep 0.1
  done
  echo "nothing answers on $1" >&2
  exit 1
}

SNOWID_HOST_LOCK="snowid-bench-$$" build/release/daemon/snowidd --socket "$work/snowidd.sock" \
  --http "127.0.0.1:$port" --state-dir "$work/state" --log-level warn 2>"$work/snowidd.log" &
pids+=($!)
wait_for_socket "$work/snowidd.sock"

reference=""
if command -v redis-server >/dev/null; then
  redis-server --port 0 --unixsocket "$work/redis.sock" --unixsocketperm 700 --save '' \
    --appendonly no --daemonize no --loglevel warning >"$work/redis.log" 2>&1 &
  pids+=($!)
  wait_for_socket "$work/redis.sock"
  reference="$work/redis.sock"
fi

# rb LABEL SOCKET ARGS... -- COMMAND...: one redis-benchmark run, one CSV row
# (label, requests/s, avg, min, p50, p95, p99, max in ms).
rb() {
  local label=$1 sock=$2
  shift 2
  local row
  row=$(redis-benchmark -s "$sock" --csv --precision 3 "$@" | tail -n 1)
  echo "$label,${row#*,}"
}

echo "load before: $(uptime)"
echo "label,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms"
single=$((n / 5))
rb "NEXTID c=1" "$work/snowidd.sock" -c 1 -n "$single" NEXTID
rb "NEXTID c=50" "$work/snowidd.sock" -c 50 -n "$n" NEXTID
rb "NEXTID c=50 P=16" "$work/snowidd.sock" -c 50 -P 16 -n "$((n * 2))" NEXTID
rb "NEXTIDS 100 c=50 P=8" "$work/snowidd.sock" -c 50 -P 8 -n "$((n / 5))" NEXTIDS 100
# seqcreate NAME STEP: the sequence, starting at 1, or the script stops.
seqcreate() {
  local reply
  reply=$(redis-cli -s "$work/snowidd.sock" SEQCREATE "$1" 1 "$2")
  [ "$reply" = OK ] || { echo "SEQCREATE $1 $2: $reply" >&2; exit 1; }
}
# Ranges of 100,000: ten takes a million numbers, so the rows measure the
# RESP path and the buffer rather than the table.
seqcreate bench 100000
rb "NEXTSEQ c=1" "$work/snowidd.sock" -c 1 -n "$single" NEXTSEQ bench
rb "NEXTSEQ c=50" "$work/snowidd.sock" -c 50 -n "$n" NEXTSEQ bench
rb "NEXTSEQ c=50 P=16" "$work/snowidd.sock" -c 50 -P 16 -n "$((n * 2))" NEXTSEQ bench
rb "NEXTSEQ 100 c=50 P=8" "$work/snowidd.sock" -c 50 -P 8 -n "$((n / 5))" NEXTSEQ bench 100
# Ranges of 1,000: a take (an fsync on SQLite) every thousand numbers.
seqcreate bench_step1000 1000
rb "NEXTSEQ step=1000 c=50" "$work/snowidd.sock" -c 50 -n "$n" NEXTSEQ bench_step1000
if [ -n "$reference" ]; then
  rb "redis INCR c=1" "$reference" -c 1 -n "$single" INCR snowid:bench
  rb "redis INCR c=50" "$reference" -c 50 -n "$n" INCR snowid:bench
  rb "redis INCR c=50 P=16" "$reference" -c 50 -P 16 -n "$((n * 2))" INCR snowid:bench
  rb "redis INCRBY 100 c=50 P=8" "$reference" -c 50 -P 8 -n "$((n / 5))" INCRBY snowid:bench 100
else
  echo "(redis-server not installed: no reference rows; apt-get install redis-server)"
fi

# wrk LABEL CONNECTIONS TARGET: 8 connections for the latency a client sees
# when the machine is not saturated, 64 for throughput (where queueing on 2
# shared cores dominates the tail).
run_wrk() {
  echo "--- wrk -t2 -c$1 -d${seconds}s http://127.0.0.1:$port$2"
  wrk -t2 -c"$1" -d"${seconds}s" --latency "http://127.0.0.1:$port$2"
}
run_wrk 8 "/v1/ids"
run_wrk 64 "/v1/ids"
run_wrk 64 "/v1/ids?count=1000"
echo "load after: $(uptime)"
echo "--- daemon counters"
redis-cli -s "$work/snowidd.sock" INFO stats | tr -d '\r' | grep -E '^(ids_issued|batch|single|reserve)'
redis-cli -s "$work/snowidd.sock" INFO sequences | tr -d '\r' |
  grep -E '^sequences_(numbers_issued|ranges_fetched|store_calls|store_failures|buffer_wait)'
