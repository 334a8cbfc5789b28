#include "temp_dir.h"

#include <stdlib.h>

#include <filesystem>
#include <system_error>

namespace snowid::test_support {

TempDir::TempDir(const std::string& prefix) {
  std::error_code ec;
  std::string base = std::filesystem::temp_directory_path(ec).string();
  // Room for the socket names the tests use after it.
  if (ec || base.empty() || base.size() > 60) base = "/tmp";
  std::string pattern = base + "/" + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace snowid::test_support
