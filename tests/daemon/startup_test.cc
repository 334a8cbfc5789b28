// Starting snowidd: its defaults, its socket file (mode, stale files, a live
// daemon on the path), and configuration errors.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "test_support.h"

namespace snowid::daemon_test {
namespace {

using nlohmann::json;
using std::chrono::seconds;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Index of the first line whose msg is `msg`, or -1.
int index_of(const std::vector<json>& lines, const std::string& msg,
             const std::string& transport = "") {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].value("msg", "") == msg &&
        (transport.empty() || lines[i].value("transport", "") == transport)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// Every file under `root` (recursively) with its contents and modification
// time; empty if `root` does not exist.
std::map<std::string, std::string> snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  if (!std::filesystem::exists(root, ec)) return out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root, ec)) {
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) != 0) continue;
    std::string what = std::to_string(st.st_mode) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
                       std::to_string(st.st_mtim.tv_nsec);
    if (S_ISREG(st.st_mode)) what += " " + read_file(entry.path());
    out[entry.path().string()] = what;
  }
  return out;
}

// A TCP port on 127.0.0.1 held by a listening socket of this process.
class HeldPort {
 public:
  HeldPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0) << std::strerror(errno);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0)
        << std::strerror(errno);
    EXPECT_EQ(::listen(fd_, 4), 0) << std::strerror(errno);
    socklen_t len = sizeof addr;
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
  }
  ~HeldPort() {
    if (fd_ >= 0) ::close(fd_);
  }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(Startup, RunsOnItsDefaultsAndServesRedisCliOnTheSocket) {
  ASSERT_TRUE(redis_cli_available());
  DaemonDir dir;
  auto d = dir.start_ready();
  const std::vector<json> lines = d->lines();
  const int starting = index_of(lines, "starting");
  const int acquired = index_of(lines, "lease acquired");
  const int unix_listening = index_of(lines, "listening", "unix");
  const int http_listening = index_of(lines, "listening", "http");
  const int ready = index_of(lines, "ready");
  ASSERT_GE(starting, 0);
  ASSERT_GT(acquired, starting);
  ASSERT_GT(unix_listening, starting);
  ASSERT_GT(http_listening, starting);
  ASSERT_GT(ready, acquired);
  ASSERT_GT(ready, unix_listening);
  ASSERT_GT(ready, http_listening);
  EXPECT_TRUE(d->non_json_lines().empty()) << d->raw_text();
  for (const json& j : lines) {
    EXPECT_TRUE(j.contains("ts") && j.contains("level") && j.contains("msg")) << j.dump();
  }
  EXPECT_EQ(lines[static_cast<std::size_t>(unix_listening)].value("address", ""), dir.socket());
  EXPECT_GT(d->http_port(), 0);
  const json& ready_line = lines[static_cast<std::size_t>(ready)];
  ASSERT_TRUE(ready_line.contains("region") && ready_line.contains("host")) << ready_line.dump();
  const auto region = ready_line["region"].get<std::uint32_t>();
  const auto host = ready_line["host"].get<std::uint32_t>();
  EXPECT_EQ(region, 0u);  // the default
  EXPECT_EQ(lines[static_cast<std::size_t>(acquired)].value("region", 99u), region);
  EXPECT_EQ(lines[static_cast<std::size_t>(acquired)].value("host", 999u), host);

  struct stat st {};
  ASSERT_EQ(lstat(dir.socket().c_str(), &st), 0) << std::strerror(errno);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u) << std::oct << (st.st_mode & 07777);

  ProcessResult ping = redis_cli(dir.socket(), {"PING"});
  ASSERT_EQ(ping.exit_code, 0) << ping.err;
  EXPECT_EQ(ping.out, "PONG\n");

  ProcessResult echo = redis_cli(dir.socket(), {"ECHO", "hello there"});
  EXPECT_EQ(echo.out, "hello there\n");

  ProcessResult next = redis_cli(dir.socket(), {"NEXTID"});
  ASSERT_EQ(next.exit_code, 0) << next.err;
  ASSERT_TRUE(std::regex_match(next.out, std::regex("[1-9][0-9]*\n"))) << next.out;
  const std::uint64_t id = std::stoull(next.out);
  EXPECT_EQ(region_of(id), region);
  EXPECT_EQ(host_of(id), host);

  ProcessResult batch = redis_cli(dir.socket(), {"--no-raw", "NEXTIDS", "5"});
  ASSERT_EQ(batch.exit_code, 0) << batch.err;
  const std::vector<std::string> batch_lines = split_lines(batch.out);
  ASSERT_EQ(batch_lines.size(), 5u) << batch.out;
  std::vector<std::uint64_t> ids;
  // Bulk strings, which redis-cli quotes: ids are never RESP integers.
  const std::regex item(R"re(([1-5])\) "([0-9]+)")re");
  for (std::size_t i = 0; i < batch_lines.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(batch_lines[i], m, item)) << batch_lines[i];
    EXPECT_EQ(std::stoul(m[1].str()), i + 1);
    ids.push_back(std::stoull(m[2].str()));
  }
  EXPECT_TRUE(strictly_increasing(ids));
  EXPECT_GT(ids.front(), id);

  // DECODE in RESP2: a flat array, printed one element per line.
  ProcessResult decoded = redis_cli(dir.socket(), {"DECODE", std::to_string(id)});
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  const std::vector<std::string> fields = split_lines(decoded.out);
  ASSERT_GE(fields.size(), 8u) << decoded.out;
  ASSERT_EQ(fields.size() % 2, 0u) << decoded.out;
  std::map<std::string, std::string> by_name;
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) by_name[fields[i]] = fields[i + 1];
  EXPECT_EQ(fields[0], "id");
  EXPECT_EQ(by_name["id"], std::to_string(id));
  EXPECT_EQ(by_name["region"], std::to_string(region));
  EXPECT_EQ(by_name["host"], std::to_string(host));
  EXPECT_TRUE(
      std::regex_match(by_name["time"], std::regex(R"(20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z)")))
      << by_name["time"];
  EXPECT_EQ(by_name["unix_ms"], std::to_string((id >> 22) + 1767225600000ULL));
  EXPECT_EQ(by_name["ticks"], std::to_string(id >> 22));
  EXPECT_EQ(by_name["sequence"], std::to_string(id & 0xfff));

  // RESP3: the same fields as a map.
  ProcessResult map = redis_cli(dir.socket(), {"-3", "--no-raw", "DECODE", std::to_string(id)});
  ASSERT_EQ(map.exit_code, 0) << map.err;
  EXPECT_NE(map.out.find("\"region\" => (integer) " + std::to_string(region)), std::string::npos)
      << map.out;
  EXPECT_NE(map.out.find("\"host\" => (integer) " + std::to_string(host)), std::string::npos)
      << map.out;

  ProcessResult info = redis_cli(dir.socket(), {"INFO"});
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("# "), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("host:" + std::to_string(host)), std::string::npos) << info.out;

  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(30)), 0);
}

TEST(Startup, SocketModeSettingIsAppliedToTheSocketFile) {
  DaemonDir dir;
  auto d = dir.start_ready({"--socket-mode", "0600"});
  struct stat st {};
  ASSERT_EQ(lstat(dir.socket().c_str(), &st), 0) << std::strerror(errno);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u) << std::oct << (st.st_mode & 07777);
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  auto pong = c->command({"PING"});
  ASSERT_TRUE(pong.has_value());
  EXPECT_EQ(pong->debug(), "+PONG");
}

// A socket file left behind by a daemon that died: bound, then closed
// without unlinking, so nothing accepts on it.
TEST(Startup, StaleSocketFileIsReplaced) {
  DaemonDir dir;
  {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, dir.socket().c_str());
    ASSERT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0);
    close(fd);
  }
  struct stat st {};
  ASSERT_EQ(lstat(dir.socket().c_str(), &st), 0);
  ASSERT_TRUE(S_ISSOCK(st.st_mode));

  auto d = dir.start_ready();
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  auto id = c->command({"NEXTID"});
  ASSERT_TRUE(id.has_value());
  EXPECT_TRUE(ids_of(*id).has_value()) << id->debug();
}

TEST(Startup, SecondDaemonOnALiveSocketFailsNamingThePath) {
  DaemonDir first_dir;
  DaemonDir second_dir;  // its own state directory: only the socket is shared
  auto first = first_dir.start_ready();
  auto second = DaemonProcess::start({"--socket", first_dir.socket(), "--http", "127.0.0.1:0",
                                      "--state-dir", second_dir.state_dir()},
                                     second_dir.env());
  EXPECT_EQ(second->wait_exit(seconds(30)), 1);
  auto failed = second->wait_for("start failed", seconds(1));
  ASSERT_TRUE(failed.has_value()) << second->raw_text();
  EXPECT_NE(failed->value("error", "").find(first_dir.socket()), std::string::npos)
      << failed->dump();
  EXPECT_TRUE(failed->contains("code")) << failed->dump();

  // The first one still owns its socket and serves.
  auto c = RespConn::connect_unix(first_dir.socket());
  ASSERT_TRUE(c.has_value());
  auto id = c->command({"NEXTID"});
  ASSERT_TRUE(id.has_value());
  EXPECT_TRUE(ids_of(*id).has_value()) << id->debug();
  EXPECT_TRUE(first->alive());
}

// A port in use is a configuration mistake (exit 2, so that systemd does
// not restart into it), found before the registry is opened: no lease, no
// lock, no mark, and no socket file left behind.
TEST(Startup, PortInUseExitsTwoLeavingTheFileRegistryUntouched) {
  const HeldPort held;
  DaemonDir dir;
  for (const char* listener : {"--http", "--tcp"}) {
    SCOPED_TRACE(listener);
    auto d = dir.start({listener, held.address()});
    EXPECT_EQ(d->wait_exit(seconds(30)), 2);
    auto failed = d->wait_for("start failed", seconds(1));
    ASSERT_TRUE(failed.has_value()) << d->raw_text();
    EXPECT_NE(failed->value("error", "").find(held.address()), std::string::npos) << failed->dump();
    EXPECT_EQ(failed->value("code", ""), "FAILED_PRECONDITION") << failed->dump();
    EXPECT_FALSE(d->wait_for("lease acquired", seconds(0)).has_value()) << d->raw_text();
    EXPECT_FALSE(std::filesystem::exists(dir.state_dir())) << "the state directory was made";
    EXPECT_FALSE(std::filesystem::exists(dir.socket())) << "the socket file was left";
  }

  // With a registry already there (a daemon ran and stopped): not a byte of
  // it changes.
  {
    auto d = dir.start_ready();
    d->signal(SIGTERM);
    ASSERT_EQ(d->wait_exit(seconds(30)), 0);
  }
  const std::map<std::string, std::string> before = snapshot(dir.state_dir());
  ASSERT_FALSE(before.empty());
  auto d = dir.start({"--http", held.address()});
  EXPECT_EQ(d->wait_exit(seconds(30)), 2);
  EXPECT_EQ(snapshot(dir.state_dir()), before);
}

TEST(Startup, RegularFileAtTheSocketPathIsLeftUntouched) {
  DaemonDir dir;
  {
    std::ofstream out(dir.socket());
    out << "not a socket\n";
  }
  auto d = dir.start();
  // A configuration mistake a restart cannot fix: exit 2, so systemd does not
  // restart it (RestartPreventExitStatus=2).
  EXPECT_EQ(d->wait_exit(seconds(30)), 2);
  auto failed = d->wait_for("start failed", seconds(1));
  ASSERT_TRUE(failed.has_value()) << d->raw_text();
  EXPECT_NE(failed->value("error", "").find(dir.socket()), std::string::npos) << failed->dump();
  struct stat st {};
  ASSERT_EQ(lstat(dir.socket().c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(read_file(dir.socket()), "not a socket\n");
}

// The README's main job: no flags, no configuration file, no SNOWID_*
// setting but the HTTP port (port 0, so that parallel tests never collide)
// and the host-lock name. The socket and the state land where the settings
// table says: under $XDG_RUNTIME_DIR and $XDG_STATE_HOME.
TEST(Startup, WithoutConfigurationTheSocketAndStateGoWhereTheDefaultsSay) {
  DaemonDir dir;
  const std::string runtime = dir.file("xdg-run");
  const std::string state = dir.file("xdg-state");
  ASSERT_EQ(::mkdir(runtime.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(state.c_str(), 0700), 0);
  auto d = DaemonProcess::start({}, {{"XDG_RUNTIME_DIR", runtime},
                                     {"XDG_STATE_HOME", state},
                                     {"SNOWID_HTTP", "127.0.0.1:0"},
                                     {"SNOWID_HOST_LOCK", dir.host_lock()},
                                     {"SNOWID_HOST_DIR", dir.host_dir()}});
  ASSERT_TRUE(d->wait_ready()) << d->raw_text();
  EXPECT_EQ(d->socket_path(), runtime + "/snowid/snowidd.sock");
  const ProcessResult r = redis_cli(d->socket_path(), {"NEXTID"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
  EXPECT_TRUE(std::filesystem::is_directory(state + "/snowid/workers")) << d->raw_text();
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(30)), 0);
  struct stat st {};
  EXPECT_NE(lstat((runtime + "/snowid/snowidd.sock").c_str(), &st), 0) << "socket removed";
}

TEST(Startup, RegionOutsideTheLayoutIsAConfigurationError) {
  DaemonDir dir;
  auto d = dir.start({"--region", "9"});
  EXPECT_EQ(d->wait_exit(seconds(30)), 2);
  const std::string err = d->raw_text();
  EXPECT_TRUE(err.starts_with("snowidd: ")) << err;
  EXPECT_NE(err.find("region"), std::string::npos) << err;
  EXPECT_NE(err.find('9'), std::string::npos) << err;
  struct stat st {};
  EXPECT_NE(lstat(dir.socket().c_str(), &st), 0) << "no socket may be created";
  EXPECT_EQ(errno, ENOENT);
}

TEST(Startup, UnknownFlagIsAConfigurationError) {
  DaemonDir dir;
  auto d = dir.start({"--no-such-flag", "1"});
  EXPECT_EQ(d->wait_exit(seconds(30)), 2);
  const std::string err = d->raw_text();
  EXPECT_TRUE(err.starts_with("snowidd: ")) << err;
  EXPECT_NE(err.find("--no-such-flag"), std::string::npos) << err;
}

TEST(Startup, BadSettingInTheEnvironmentIsAConfigurationErrorNamingTheVariable) {
  DaemonDir dir;
  auto d = dir.start({}, {{"SNOWID_MAX_BATCH", "zero"}});
  EXPECT_EQ(d->wait_exit(seconds(30)), 2);
  const std::string err = d->raw_text();
  EXPECT_TRUE(err.starts_with("snowidd: ")) << err;
  EXPECT_NE(err.find("SNOWID_MAX_BATCH"), std::string::npos) << err;
}

}  // namespace
}  // namespace snowid::daemon_test
