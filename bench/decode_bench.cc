// Reading ids back: Layout::decode, LayoutHistory::decode, and parse_id
// followed by decode from the decimal text ids travel as.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "snowid/id_text.h"
#include "snowid/layout.h"
#include "snowid/layout_history.h"
#include "snowid/time.h"

namespace snowid::bench {
namespace {

// A power of two, so that the loops index with a mask; large enough that the
// branch predictor cannot learn the inputs, small enough to stay in L1.
constexpr std::size_t kIds = 1024;

template <typename T>
T checked(Result<T> r, const char* what) {
  if (!r.is_ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.status().to_string().c_str());
    std::abort();
  }
  return std::move(r).value();
}

// Ids as the default layout issues them: ticks over a few days before now,
// every worker, small sequence values.
std::vector<std::uint64_t> default_ids() {
  const Layout& l = Layout::snowid_default();
  const std::int64_t now = l.ticks_at(system_clock().wall_now());
  std::vector<std::uint64_t> ids;
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (std::size_t i = 0; i < kIds; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const auto back = static_cast<std::int64_t>(x % (3 * 86'400'000ULL));
    const WorkerId w{static_cast<std::uint32_t>(x >> 40) & 3,
                     static_cast<std::uint32_t>(x >> 48) & 255};
    ids.push_back(checked(l.encode(now - back, w, (x >> 20) & 63), "encode"));
  }
  return ids;
}

void BM_DecodeLayout(benchmark::State& state) {
  const Layout& l = Layout::snowid_default();
  const std::vector<std::uint64_t> ids = default_ids();
  std::size_t i = 0;
  for (auto _ : state) {
    Result<DecodedId> d = l.decode(ids[i++ & (kIds - 1)]);
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(BM_DecodeLayout);

// Two eras: the default layout from its epoch, then from 2026-06-01 a layout
// of the same shape whose epoch is 2020-01-01 (an earlier epoch keeps its
// ids above the first era's). Half the ids come from each era.
LayoutHistory two_era_history() {
  LayoutSpec spec;
  spec.name = "later";
  spec.epoch_unix_ms = 1577836800000;  // 2020-01-01
  spec.fields = {{"time", FieldRole::kTime, kDefaultTimeBits},
                 {"region", FieldRole::kRegion, kDefaultRegionBits},
                 {"host", FieldRole::kHost, kDefaultHostBits},
                 {"sequence", FieldRole::kSequence, kDefaultSequenceBits}};
  Layout later = checked(Layout::create(std::move(spec)), "layout");
  std::vector<LayoutEra> eras;
  eras.push_back({Layout::snowid_default(), Layout::snowid_default().epoch()});
  eras.push_back({std::move(later), wall_from_unix_ms(1780272000000)});  // 2026-06-01
  return checked(LayoutHistory::create(std::move(eras)), "history");
}

void BM_DecodeHistory(benchmark::State& state) {
  const LayoutHistory h = two_era_history();
  std::vector<std::uint64_t> ids;
  for (std::size_t i = 0; i < kIds; ++i) {
    const LayoutEra& era = h.eras()[i % 2];
    const std::int64_t t = era.layout.ticks_at(era.cutover) + static_cast<std::int64_t>(i) * 997;
    ids.push_back(checked(era.layout.encode(t, WorkerId{1, 7}, i & 63), "encode"));
  }
  std::size_t i = 0;
  for (auto _ : state) {
    Result<DecodedId> d = h.decode(ids[i++ & (kIds - 1)]);
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(BM_DecodeHistory);

void BM_ParseAndDecode(benchmark::State& state) {
  const Layout& l = Layout::snowid_default();
  std::vector<std::string> texts;
  for (std::uint64_t id : default_ids()) texts.push_back(std::to_string(id));
  std::size_t i = 0;
  for (auto _ : state) {
    Result<std::uint64_t> id = parse_id(texts[i++ & (kIds - 1)], l);
    if (!id.is_ok()) {
      state.SkipWithError("parse_id refused an id it should accept");
      break;
    }
    Result<DecodedId> d = l.decode(id.value());
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(BM_ParseAndDecode);

}  // namespace
}  // namespace snowid::bench
