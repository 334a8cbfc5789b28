// The process environment as settings readers see it: variables, files and
// the effective user. Programs pass process_environment(); tests pass a
// MapEnvironment, so that no test depends on the variables of the machine it
// runs on.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "snowid/status.h"

namespace snowid::host {

class Environment {
 public:
  virtual ~Environment() = default;
  // The variable's value; nullopt if unset.
  virtual std::optional<std::string> get(std::string_view name) const = 0;
  // The whole file; kNotFound or kUnavailable if it cannot be read.
  virtual Result<std::string> read_file(const std::string& path) const = 0;
  // The effective user id (the defaults of root differ).
  virtual std::uint32_t uid() const = 0;
};

// The real process environment, files and user. Thread-compatible.
const Environment& process_environment();

// Variables and files from maps, for tests.
class MapEnvironment : public Environment {
 public:
  std::map<std::string, std::string, std::less<>> variables;
  std::map<std::string, std::string, std::less<>> files;  // path -> contents
  std::uint32_t user = 1000;

  std::optional<std::string> get(std::string_view name) const override;
  Result<std::string> read_file(const std::string& path) const override;
  std::uint32_t uid() const override { return user; }
};

// The variable's value; nullopt if unset or empty (an empty variable counts
// as unset everywhere in snowid).
std::optional<std::string> nonempty(const Environment& env, std::string_view name);

}  // namespace snowid::host
