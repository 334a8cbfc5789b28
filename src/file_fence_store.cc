#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "durable_file.h"
#include "snowid/fence.h"

namespace snowid {
namespace {

constexpr std::string_view kMagic = "snowid-fence 1 ";

std::string errno_text(int err) { return std::strerror(err); }

Status io_error(const std::string& what, const std::string& path, int err) {
  return Status(Code::kUnavailable, what + " " + path + ": " + errno_text(err));
}

class FileFenceStore final : public FenceStore {
 public:
  explicit FileFenceStore(std::string path) : path_(std::move(path)) {}

  Result<std::optional<WallTime>> load() override {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return std::optional<WallTime>();
      return io_error("cannot open fence file", path_, errno);
    }
    char buf[128];
    std::size_t len = 0;
    for (;;) {
      const ssize_t n = ::read(fd, buf + len, sizeof buf - len);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        ::close(fd);
        return io_error("cannot read fence file", path_, err);
      }
      if (n == 0 || len + static_cast<std::size_t>(n) == sizeof buf) {
        len += static_cast<std::size_t>(n);
        break;
      }
      len += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return parse(std::string_view(buf, len));
  }

  Status store(WallTime fence) override {
    if (unix_ms(fence) < 0) {
      return Status(Code::kInvalidArgument, "a fence before 1970 cannot be stored");
    }
    const std::string text = std::string(kMagic) + std::to_string(unix_ms(fence)) + "\n";
    return internal::write_file_durably(path_, text, 0644);
  }

 private:
  Result<std::optional<WallTime>> parse(std::string_view text) const {
    auto corrupt = [&](const char* why) {
      return Status(Code::kDataLoss, "fence file " + path_ + " is unreadable (" + why +
                                         "); refusing to start because time could be reused. "
                                         "Remove it only if no id was issued from this host "
                                         "after its clock's current time");
    };
    if (text.substr(0, kMagic.size()) != kMagic) return corrupt("bad header");
    text.remove_prefix(kMagic.size());
    if (text.empty() || text.back() != '\n') return corrupt("truncated");
    text.remove_suffix(1);
    if (text.empty() || text.size() > 18) return corrupt("bad value");
    std::int64_t ms = 0;
    for (char c : text) {
      if (c < '0' || c > '9') return corrupt("bad value");
      ms = ms * 10 + (c - '0');
    }
    // Past 2262-04-11 the instant no longer fits 64-bit nanoseconds: a fence
    // written in another unit, not a time this host could have reached.
    if (ms > INT64_MAX / 1'000'000) return corrupt("value out of range");
    return std::optional<WallTime>(wall_from_unix_ms(ms));
  }

  std::string path_;
};

}  // namespace

std::unique_ptr<FenceStore> make_file_fence_store(std::string path) {
  return std::make_unique<FileFenceStore>(std::move(path));
}

}  // namespace snowid
