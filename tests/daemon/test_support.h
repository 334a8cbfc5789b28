// What the black-box tests of snowidd share: a daemon in a directory of its
// own, the external programs (redis-cli, libfaketime, the snowid tool), and
// id helpers for the default layout.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon_process.h"
#include "resp_client.h"
#include "temp_dir.h"

namespace snowid::daemon_test {

// Paths set by CMake; empty when the program was not found at configure time.
inline constexpr const char* kRedisCli = SNOWID_REDIS_CLI_PATH;
inline constexpr const char* kLibfaketime = SNOWID_LIBFAKETIME_PATH;
inline constexpr const char* kSnowidCli = SNOWID_CLI_PATH;

// Success if `path` names an executable (or, for a library, a readable file);
// otherwise a failure that says how to install it. Tests ASSERT on it: a
// missing dependency fails the test, it never skips it.
::testing::AssertionResult redis_cli_available();
::testing::AssertionResult libfaketime_available();

// The environment that gives a daemon a wall clock of its own: libfaketime
// preloaded, reading its offset from `clock_file` on every clock read, the
// monotonic clock left real (and an ASan build told not to mind the preload).
Env faketime_env(const std::string& clock_file);

// Fields of an id of the default layout (41 time, 2 region, 8 host, 12 sequence).
inline std::uint32_t region_of(std::uint64_t id) {
  return static_cast<std::uint32_t>((id >> 20) & 0x3);
}
inline std::uint32_t host_of(std::uint64_t id) {
  return static_cast<std::uint32_t>((id >> 12) & 0xff);
}

// One daemon's directory: socket, state directory and host-lock name of its
// own. Several daemons may share one (a restart, a second daemon on the same
// socket); each start() is a new process.
class DaemonDir {
 public:
  DaemonDir() { EXPECT_FALSE(dir_.path().empty()) << "no temporary directory could be made"; }

  std::string socket() const { return dir_.file("snowidd.sock"); }
  std::string state_dir() const { return dir_.file("state"); }
  std::string file(const std::string& name) const { return dir_.file(name); }
  const std::string& host_lock() const { return host_lock_; }
  // The host directory of the file registry, inside this directory.
  std::string host_dir() const { return dir_.file("host"); }

  // --socket, --http 127.0.0.1:0 and --state-dir of this directory, then `extra`.
  std::vector<std::string> args(const std::vector<std::string>& extra = {}) const;
  // SNOWID_HOST_LOCK and SNOWID_HOST_DIR of this directory, then `extra`.
  Env env(const Env& extra = {}) const;

  // Starts snowidd with args(extra_args) and env(extra_env); does not wait.
  std::unique_ptr<DaemonProcess> start(const std::vector<std::string>& extra_args = {},
                                       const Env& extra_env = {}) const;
  // Starts it and waits for "ready" (a test failure otherwise).
  std::unique_ptr<DaemonProcess> start_ready(const std::vector<std::string>& extra_args = {},
                                             const Env& extra_env = {}) const;

 private:
  test_support::TempDir dir_{"snowidd-test"};
  std::string host_lock_ = unique_host_lock();
};

// An id or sequence number as the daemon sends it by default: a bulk string
// of decimal digits within int64. nullopt for anything else, a RESP integer
// included.
std::optional<std::int64_t> wide_value(const RespValue& reply);

// The ids of a NEXTID (bulk string) or NEXTIDS (array of bulk strings)
// reply; nullopt for anything else.
std::optional<std::vector<std::uint64_t>> ids_of(const RespValue& reply);

// The ids of a /v1/ids JSON body ({"ids":["..."]}, decimal strings); nullopt
// if the body is not exactly that.
std::optional<std::vector<std::uint64_t>> ids_of_json(const std::string& body);

// True if `ids` is strictly increasing.
bool strictly_increasing(const std::vector<std::uint64_t>& ids);

// Runs redis-cli on `socket` with `args` (e.g. {"--no-raw", "NEXTIDS", "5"}).
ProcessResult redis_cli(const std::string& socket, const std::vector<std::string>& args);

// The value of the unlabelled sample `name` in Prometheus text, or nullopt.
std::optional<double> metric_value(const std::string& text, const std::string& name);

// Writes `contents` to `path` atomically (temporary file and rename), so a
// reader sees either the old or the new contents, never an empty file.
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace snowid::daemon_test
