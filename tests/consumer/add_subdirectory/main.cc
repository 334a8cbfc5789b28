// Built inside a parent project that has its own global flags: they must
// reach this file unchanged, and snowid must work alongside them.
#include <snowid/snowid.h>

#include <cstdint>
#include <cstdio>
#include <set>

#if !defined(PARENT_GLOBAL_FLAG) || !defined(PARENT_DIRECTORY_DEFINITION)
#error "the parent project's own flags did not reach its sources"
#endif

int main() {
  snowid::GeneratorOptions options;
  options.worker = {3, 255};
  auto created = snowid::Generator::create(snowid::system_clock(), options);
  if (!created.is_ok()) {
    std::fprintf(stderr, "create: %s\n", created.status().to_string().c_str());
    return 1;
  }
  snowid::Generator& gen = *created.value();
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    const snowid::IdBatch b = gen.reserve(100);
    if (!b.ok()) {
      std::fprintf(stderr, "reserve: %s\n", std::string(snowid::code_name(b.code)).c_str());
      return 1;
    }
    for (std::uint32_t k = 0; k < b.count; ++k) {
      if (!seen.insert(b.first + k).second) {
        std::fprintf(stderr, "duplicate id %llu\n", static_cast<unsigned long long>(b.first + k));
        return 1;
      }
    }
  }
  const std::uint64_t last = *seen.rbegin();
  auto d = gen.layout().decode(last);
  if (!d.is_ok() || d->values[1] != 3 || d->values[2] != 255) {
    std::fprintf(stderr, "id %llu does not decode to worker 3/255\n",
                 static_cast<unsigned long long>(last));
    return 1;
  }
  std::printf("%zu ids, last %llu at %s\nadd_subdirectory consumer: ok\n", seen.size(),
              static_cast<unsigned long long>(last), snowid::format_iso8601(d->time).c_str());
  return 0;
}
