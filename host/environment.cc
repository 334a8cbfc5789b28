#include "environment.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace snowid::host {
namespace {

class ProcessEnvironment final : public Environment {
 public:
  std::optional<std::string> get(std::string_view name) const override {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  }
  Result<std::string> read_file(const std::string& path) const override {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      const int err = errno;
      return Status(err == ENOENT ? Code::kNotFound : Code::kUnavailable,
                    path + ": cannot read the configuration: " + std::strerror(err));
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::uint32_t uid() const override { return static_cast<std::uint32_t>(::geteuid()); }
};

}  // namespace

const Environment& process_environment() {
  static const ProcessEnvironment env;
  return env;
}

std::optional<std::string> MapEnvironment::get(std::string_view name) const {
  const auto it = variables.find(name);
  if (it == variables.end()) return std::nullopt;
  return it->second;
}

Result<std::string> MapEnvironment::read_file(const std::string& path) const {
  const auto it = files.find(path);
  if (it == files.end()) {
    return Status(Code::kNotFound, path + ": cannot read the configuration: no such file");
  }
  return it->second;
}

std::optional<std::string> nonempty(const Environment& env, std::string_view name) {
  std::optional<std::string> v = env.get(name);
  if (v && v->empty()) return std::nullopt;
  return v;
}

}  // namespace snowid::host
