// A real chronyd for the tests, as root: `chronyd -x -d` (it never touches
// the system clock) with a configuration of the test's own in a temporary
// directory, on a free loopback port, stopped (by its pid) with the object.
// Either a reference that serves NTP (`local stratum 8`), or a client of one
// whose command socket answers `chronyc -c tracking`.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace snowid::skew::testing {

// chronyd's and chronyc's paths (from the build), or empty.
std::string chronyd_path();
std::string chronyc_path();

// A UDP port on 127.0.0.1 that was free a moment ago.
std::uint16_t free_udp_port();

class Chronyd {
 public:
  // Serves NTP on 127.0.0.1:port, stratum 8, its own clock as the source.
  // `extra_env` ("NAME=value") is added to its environment: libfaketime's
  // variables make a wrong reference (fake it by a second or more, or
  // chronyd's own sanity checks mistake the offset for its clock's jitter).
  static std::unique_ptr<Chronyd> reference(std::uint16_t port,
                                            std::vector<std::string> extra_env = {});
  // Tracks the reference on 127.0.0.1:reference_port, polling every 250 ms;
  // answers chronyc on command_socket().
  static std::unique_ptr<Chronyd> follower(std::uint16_t reference_port);
  ~Chronyd();
  Chronyd(const Chronyd&) = delete;
  Chronyd& operator=(const Chronyd&) = delete;

  // Empty when it runs; else why not.
  const std::string& error() const noexcept { return error_; }
  std::string command_socket() const { return dir_.file("run/chronyd.sock"); }
  std::string log() const;

 private:
  explicit Chronyd(const std::string& config_lines, std::vector<std::string> extra_env = {});

  test_support::TempDir dir_{"snowid-chronyd"};
  pid_t pid_ = -1;
  std::string error_;
};

}  // namespace snowid::skew::testing
