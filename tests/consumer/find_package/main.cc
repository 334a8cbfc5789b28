// Uses an installed snowid: the real clock for a few ids, and the simulated
// clock of snowid::testing for ids whose value is known in advance.
#include <snowid/snowid.h>
#include <snowid/testing/simulated_clock.h>

#include <cstdint>
#include <cstdio>

namespace {

int fail(const char* what, const snowid::Status& s) {
  std::fprintf(stderr, "%s: %s\n", what, s.to_string().c_str());
  return 1;
}

}  // namespace

int main() {
  snowid::GeneratorOptions options;
  options.worker = {1, 42};
  auto created = snowid::Generator::create(snowid::system_clock(), options);
  if (!created.is_ok()) return fail("create with the system clock", created.status());
  snowid::Generator& gen = *created.value();

  std::uint64_t last = 0;
  for (int i = 0; i < 1000; ++i) {
    const snowid::IdResult r = gen.next();
    if (!r.ok()) {
      std::fprintf(stderr, "next: %s\n", std::string(snowid::code_name(r.code)).c_str());
      return 1;
    }
    if (r.id <= last) {
      std::fprintf(stderr, "ids out of order: %llu after %llu\n",
                   static_cast<unsigned long long>(r.id), static_cast<unsigned long long>(last));
      return 1;
    }
    last = r.id;
    auto d = gen.layout().decode(r.id);
    if (!d.is_ok()) return fail("decode", d.status());
    if (d->values[1] != 1 || d->values[2] != 42) {
      std::fprintf(stderr, "id %llu does not carry worker 1/42\n",
                   static_cast<unsigned long long>(r.id));
      return 1;
    }
    if (i < 3) {
      std::printf("%llu %s\n", static_cast<unsigned long long>(r.id),
                  snowid::format_iso8601(d->time).c_str());
    }
  }

  // With a simulated clock and no random start the first id is known exactly:
  // 2026-03-01T00:00:00Z is 59 days, 5,097,600,000 ms, after the epoch.
  snowid::testing::SimulatedClock clock(snowid::wall_from_unix_ms(1772323200000));
  snowid::GeneratorOptions sim_options;
  sim_options.worker = {2, 7};
  sim_options.random_start_bound = 0;
  auto sim = snowid::Generator::create(clock, sim_options);
  if (!sim.is_ok()) return fail("create with the simulated clock", sim.status());
  const snowid::IdResult first = sim.value()->next();
  const std::uint64_t want = (std::uint64_t{5097600000} << 22) | (2u << 20) | (7u << 12);
  if (!first.ok() || first.id != want) {
    std::fprintf(stderr, "simulated first id %llu, want %llu\n",
                 static_cast<unsigned long long>(first.id), static_cast<unsigned long long>(want));
    return 1;
  }
  std::printf("find_package consumer: ok\n");
  return 0;
}
