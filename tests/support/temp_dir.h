// Test support: a fresh temporary directory, for the unit tests of the
// daemon, its black-box tests and the snowid tool's tests.
#pragma once

#include <string>

namespace snowid::test_support {

class TempDir {
 public:
  // Makes `prefix`-XXXXXX under the temporary directory ($TMPDIR, else
  // /tmp), or under /tmp when that path is long: a Unix socket path inside
  // the directory must fit sun_path (108 bytes). path() is empty if no
  // directory could be made.
  explicit TempDir(const std::string& prefix);
  // Removes the directory with everything in it.
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const noexcept { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace snowid::test_support
