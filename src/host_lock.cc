#include "host_lock.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

namespace snowid::internal {

static_assert(sizeof(sockaddr_un{}.sun_path) - 1 == kMaxHostNameBytes);

bool host_names_supported() noexcept {
#ifdef __linux__
  return true;
#else
  return false;
#endif
}

Result<std::optional<Fd>> claim_host_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxHostNameBytes ||
      name.find('\0') != std::string_view::npos) {
    return Status(Code::kInvalidArgument, "a host lock name must be 1 to " +
                                              std::to_string(kMaxHostNameBytes) +
                                              " bytes with no NUL");
  }
#ifdef __linux__
  const std::string shown = "@" + std::string(name);  // as ss(8) and /proc/net/unix show it
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return io_error(Code::kUnavailable, "cannot make a socket for", shown, errno);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // sun_path[0] stays '\0': the abstract namespace. The name is not
  // NUL-terminated; its length is in the address length.
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    if (errno == EADDRINUSE) return std::optional<Fd>();
    return io_error(Code::kUnavailable, "cannot bind", shown, errno);
  }
  return std::optional<Fd>(std::move(fd));
#else
  return std::optional<Fd>(Fd());
#endif
}

}  // namespace snowid::internal
