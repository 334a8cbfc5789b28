// The persisted fence file ("snowid-fence 1 <unix_ms>\n") with arbitrary
// contents: load() returns the stored instant or kDataLoss, never anything
// else, and what it accepts is exactly the documented form. An accepted fence
// stored again reads back the same.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "snowid/fence.h"

namespace {

// A private directory for the fence file, removed when the fuzzer exits. Kept
// in plain storage so that it is still there when the exit handler runs.
char g_dir[512];

void remove_scratch_dir() {
  const std::string dir = g_dir;
  ::unlink((dir + "/fence").c_str());
  ::unlink((dir + "/fence.tmp").c_str());
  ::rmdir(dir.c_str());
}

const char* scratch_dir() {
  if (g_dir[0] == '\0') {
    // store() fsyncs: on a disk that costs milliseconds per input, in memory nothing.
    const char* base = std::getenv("TMPDIR");
    if (base == nullptr || *base == '\0')
      base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    const std::string templ = std::string(base) + "/snowid-fence-fuzz-XXXXXX";
    FUZZ_CHECK(templ.size() < sizeof g_dir);
    templ.copy(g_dir, templ.size());
    FUZZ_CHECK(::mkdtemp(g_dir) != nullptr);
    std::atexit(remove_scratch_dir);
  }
  return g_dir;
}

void write_file(const std::string& path, std::string_view data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  FUZZ_CHECK(fd >= 0);
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    FUZZ_CHECK(n > 0);
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  FUZZ_CHECK(::close(fd) == 0);
}

// The documented form: the header, 1 to 18 decimal digits, one newline, and
// nothing else; a value that is a representable instant.
bool well_formed(std::string_view text, std::int64_t& ms) {
  constexpr std::string_view kHeader = "snowid-fence 1 ";
  if (text.substr(0, kHeader.size()) != kHeader) return false;
  text.remove_prefix(kHeader.size());
  if (text.empty() || text.back() != '\n') return false;
  text.remove_suffix(1);
  if (text.empty() || text.size() > 18) return false;
  ms = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    ms = ms * 10 + (c - '0');
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256) return 0;  // load() reads at most 128 bytes
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string path = std::string(scratch_dir()) + "/fence";
  write_file(path, text);

  auto store = snowid::make_file_fence_store(path);
  snowid::Result<std::optional<snowid::WallTime>> loaded = store->load();
  std::int64_t ms = 0;
  const bool accept = well_formed(text, ms) && ms <= INT64_MAX / 1'000'000;
  FUZZ_CHECK(loaded.is_ok() == accept);
  if (!loaded.is_ok()) {
    FUZZ_CHECK(loaded.status().code() == snowid::Code::kDataLoss);
    return 0;
  }
  FUZZ_CHECK(loaded.value().has_value());
  const snowid::WallTime fence = *loaded.value();
  FUZZ_CHECK(snowid::unix_ms(fence) == ms);

  FUZZ_CHECK(store->store(fence).is_ok());
  snowid::Result<std::optional<snowid::WallTime>> again = store->load();
  FUZZ_CHECK(again.is_ok() && again.value() == fence);
  return 0;
}
