#include "test_support.h"

#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

namespace snowid::daemon_test {

::testing::AssertionResult redis_cli_available() {
  if (kRedisCli[0] != '\0' && access(kRedisCli, X_OK) == 0) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "redis-cli is missing (looked for \"" << kRedisCli
         << "\"): run scripts/install-deps (Debian package redis-tools), then re-run cmake";
}

Env faketime_env(const std::string& clock_file) {
  // An ASan-built daemon refuses a preloaded library it did not link first.
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::string asan_options = asan != nullptr && *asan != '\0' ? std::string(asan) + ":" : "";
  asan_options += "verify_asan_link_order=0";
  return {{"LD_PRELOAD", kLibfaketime},
          {"FAKETIME_TIMESTAMP_FILE", clock_file},
          {"FAKETIME_NO_CACHE", "1"},
          {"FAKETIME_DONT_FAKE_MONOTONIC", "1"},
          {"ASAN_OPTIONS", asan_options}};
}

::testing::AssertionResult libfaketime_available() {
  if (kLibfaketime[0] != '\0' && access(kLibfaketime, R_OK) == 0) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "libfaketime.so.1 is missing (looked for \"" << kLibfaketime
         << "\"): run scripts/install-deps (Debian packages faketime, libfaketime), then re-run "
            "cmake";
}

std::vector<std::string> DaemonDir::args(const std::vector<std::string>& extra) const {
  std::vector<std::string> out = {"--socket",    socket(),      "--http",
                                  "127.0.0.1:0", "--state-dir", state_dir()};
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

Env DaemonDir::env(const Env& extra) const {
  Env out = {{"SNOWID_HOST_LOCK", host_lock_}, {"SNOWID_HOST_DIR", host_dir()}};
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

std::unique_ptr<DaemonProcess> DaemonDir::start(const std::vector<std::string>& extra_args,
                                                const Env& extra_env) const {
  return DaemonProcess::start(args(extra_args), env(extra_env));
}

std::unique_ptr<DaemonProcess> DaemonDir::start_ready(const std::vector<std::string>& extra_args,
                                                      const Env& extra_env) const {
  std::unique_ptr<DaemonProcess> d = start(extra_args, extra_env);
  EXPECT_TRUE(d->wait_ready()) << "snowidd did not log \"ready\"";
  return d;
}

std::optional<std::int64_t> wide_value(const RespValue& reply) {
  if (reply.type != RespValue::Type::kBulk) return std::nullopt;
  const std::string& t = reply.str;
  const std::size_t digits_from = !t.empty() && t[0] == '-' ? 1 : 0;
  if (t.size() <= digits_from || t.size() > 20) return std::nullopt;
  if (t.find_first_not_of("0123456789", digits_from) != std::string::npos) return std::nullopt;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<std::vector<std::uint64_t>> ids_of(const RespValue& reply) {
  std::vector<std::uint64_t> out;
  if (reply.type == RespValue::Type::kBulk) {
    const std::optional<std::int64_t> id = wide_value(reply);
    if (!id || *id <= 0) return std::nullopt;
    out.push_back(static_cast<std::uint64_t>(*id));
    return out;
  }
  if (reply.type != RespValue::Type::kArray) return std::nullopt;
  out.reserve(reply.elems.size());
  for (const RespValue& e : reply.elems) {
    const std::optional<std::int64_t> id = wide_value(e);
    if (!id || *id <= 0) return std::nullopt;
    out.push_back(static_cast<std::uint64_t>(*id));
  }
  return out;
}

std::optional<std::vector<std::uint64_t>> ids_of_json(const std::string& body) {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.size() != 1 || !j.contains("ids") ||
      !j["ids"].is_array()) {
    return std::nullopt;
  }
  std::vector<std::uint64_t> out;
  for (const nlohmann::json& e : j["ids"]) {
    if (!e.is_string()) return std::nullopt;
    const std::string s = e.get<std::string>();
    if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    out.push_back(std::stoull(s));
  }
  return out;
}

bool strictly_increasing(const std::vector<std::uint64_t>& ids) {
  for (std::size_t i = 1; i < ids.size(); ++i) {
    if (ids[i] <= ids[i - 1]) return false;
  }
  return true;
}

ProcessResult redis_cli(const std::string& socket, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kRedisCli, "-s", socket};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv);
}

std::optional<double> metric_value(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(name + " ")) return std::strtod(line.c_str() + name.size() + 1, nullptr);
  }
  return std::nullopt;
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << contents;
    ASSERT_TRUE(out.good()) << "cannot write " << tmp;
  }
  ASSERT_EQ(std::rename(tmp.c_str(), path.c_str()), 0) << "cannot rename " << tmp;
}

}  // namespace snowid::daemon_test
