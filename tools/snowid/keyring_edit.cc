#include "keyring_edit.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace snowid::cli {
namespace {

std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

Status io_error(const std::string& what, const std::string& path) {
  return Status(Code::kUnavailable, what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

Result<std::string> read_keyring_text(const std::string& path) {
  Result<PublicIdKeyring> ring = PublicIdKeyring::load(path);
  if (!ring.is_ok()) return ring.status();
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return Status(Code::kUnavailable, "cannot read " + path);
  return std::move(text).str();
}

Result<std::string> with_slot_state(const std::string& text, int slot, KeyState state) {
  std::string out;
  bool found = false;
  bool header_seen = false;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    const bool newline = end != std::string::npos;
    if (!newline) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    const std::vector<std::string> f = fields_of(line);
    if (!f.empty() && f[0][0] != '#') {
      if (!header_seen) {
        header_seen = true;
      } else if (f.size() == 5 && f[0] == std::to_string(slot)) {
        line =
            f[0] + " " + std::string(key_state_name(state)) + " " + f[2] + " " + f[3] + " " + f[4];
        found = true;
      }
    }
    out += line;
    if (newline) out += '\n';
  }
  if (!found) {
    return Status(Code::kFailedPrecondition,
                  "slot " + std::to_string(slot) + " holds no key in this keyring");
  }
  return out;
}

Status write_keyring_text(const std::string& path, const std::string& text, bool create) {
  if (Result<PublicIdKeyring> ring = PublicIdKeyring::parse(text); !ring.is_ok()) {
    return ring.status();
  }
  if (create && ::access(path.c_str(), F_OK) == 0) {
    return Status(Code::kAlreadyExists, "keyring " + path + " exists already");
  }
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return io_error("cannot create", temp);
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const Status s = io_error("cannot write", temp);
      ::close(fd);
      ::unlink(temp.c_str());
      return s;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const Status s = io_error("cannot sync", temp);
    ::unlink(temp.c_str());
    return s;
  }
  if (create ? ::link(temp.c_str(), path.c_str()) != 0
             : ::rename(temp.c_str(), path.c_str()) != 0) {
    const Status s = errno == EEXIST
                         ? Status(Code::kAlreadyExists, "keyring " + path + " exists already")
                         : io_error("cannot replace", path);
    ::unlink(temp.c_str());
    return s;
  }
  if (create) ::unlink(temp.c_str());
  return Status::ok();
}

}  // namespace snowid::cli
