#include "support.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace snowid::bench {
namespace {

Layout wide_layout() {
  LayoutSpec spec;
  spec.name = "wide";
  spec.fields = {{"time", FieldRole::kTime, 41},
                 {"host", FieldRole::kHost, 1},
                 {"sequence", FieldRole::kSequence, 21}};
  Result<Layout> layout = Layout::create(std::move(spec));
  if (!layout.is_ok()) {
    std::fprintf(stderr, "wide layout: %s\n", layout.status().to_string().c_str());
    std::abort();
  }
  return std::move(layout).value();
}

}  // namespace

const Layout& layout_of(Shape shape) {
  static const Layout wide = wide_layout();
  return shape == Shape::kWide ? wide : Layout::snowid_default();
}

std::unique_ptr<Generator> make_generator(Shape shape, std::shared_ptr<const LeaseGuard> lease) {
  GeneratorOptions options;
  options.layout = layout_of(shape);
  options.lease = std::move(lease);
  Result<std::unique_ptr<Generator>> g = Generator::create(system_clock(), std::move(options));
  if (!g.is_ok()) {
    std::fprintf(stderr, "cannot create a generator: %s\n", g.status().to_string().c_str());
    std::abort();
  }
  return std::move(g).value();
}

void report_ids(benchmark::State& state, std::uint64_t ids) {
  const auto n = static_cast<double>(ids);
  state.SetItemsProcessed(static_cast<std::int64_t>(ids));
  // A rate counter is divided by the benchmark's time in seconds; inverted it
  // is seconds per id. Scaling the value by 1e-9 makes that nanoseconds.
  state.counters["ns_per_id"] =
      benchmark::Counter(n * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void report_cap_share(benchmark::State& state, std::uint64_t ids, std::uint64_t capacity) {
  // Rate per second / 1,000 = per millisecond.
  state.counters["cap_share"] =
      benchmark::Counter(static_cast<double>(ids) / (1e3 * static_cast<double>(capacity)),
                         benchmark::Counter::kIsRate);
}

}  // namespace snowid::bench
