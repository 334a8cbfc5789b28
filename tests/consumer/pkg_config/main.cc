// Built with nothing but the flags from `pkg-config --cflags --libs snowid`.
#include <snowid/snowid.h>

#include <cstdio>

int main() {
  snowid::GeneratorOptions options;
  options.worker = {0, 1};
  auto created = snowid::Generator::create(snowid::system_clock(), options);
  if (!created.is_ok()) {
    std::fprintf(stderr, "create: %s\n", created.status().to_string().c_str());
    return 1;
  }
  const snowid::IdResult r = created.value()->next();
  if (!r.ok()) return 1;
  std::printf("%llu\npkg-config consumer: ok\n", static_cast<unsigned long long>(r.id));
  return 0;
}
