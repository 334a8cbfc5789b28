#!/usr/bin/env bash
# Builds the Release configuration, runs snowid_bench and prints the ratios.
# Any arguments go to snowid_bench (e.g. --benchmark_filter=Reserve). The
# figures only mean something on a quiet machine: the load is printed before
# and after the run.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSNOWID_BUILD_TESTS=OFF -DSNOWID_BUILD_TOOLS=OFF -DSNOWID_BUILD_BENCHMARKS=ON >/dev/null
cmake --build build/release --target snowid_bench -- -j2

out=build/release/snowid_bench.json
echo "load before: $(uptime)"
build/release/bench/snowid_bench \
  --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true \
  --benchmark_out="$out" \
  --benchmark_out_format=json \
  "$@"
echo "load after: $(uptime)"
python3 bench/summarize.py "$out"
