// Tests of the file registry: distinct ids across registries, threads,
// processes and state directories; crashed holders; letting go; marks;
// quarantine; fencing; corrupt state.
#include "snowid/file_registry.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lease_test_support.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::SimulatedClock;

// 2026-03-01T00:00:00Z; marks are whole milliseconds, so tests use those.
const WallTime kStart = wall_from_unix_ms(1772323200000);

// 4 regions of 8 hosts: small enough to fill.
Layout small_layout() { return test_support::worker_block_layout("small", 2, 3); }

// A host lock prefix no other test, here or in another process, uses: host
// locks are host-wide, and tests run side by side.
std::string unique_host_lock_prefix() {
  std::uint64_t random = 0;
  EXPECT_EQ(::getentropy(&random, sizeof random), 0);
  return "snowid-test-" + std::to_string(::getpid()) + "-" + std::to_string(random);
}

// Whether someone has the abstract socket name "PREFIX/rR-hH" bound.
bool host_lock_taken(const std::string& prefix, WorkerId w) {
  const std::string name = prefix + "/r" + std::to_string(w.region) + "-h" + std::to_string(w.host);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const int rc = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr),
                        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size()));
  const int err = errno;
  ::close(fd);
  EXPECT_TRUE(rc == 0 || err == EADDRINUSE) << std::strerror(err);
  return rc != 0;
}

// Whether anyone holds the flock on `path` (which must exist).
bool lock_file_taken(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  const bool taken = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);
  return taken;
}

class FileRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "snowid-registry-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    dir_ = pattern;
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::unique_ptr<WorkerRegistry> registry(Duration quarantine = Duration::zero(),
                                           const Clock* clock = nullptr) {
    return registry_on(dir_, quarantine, clock);
  }

  // A registry on `dir`, which may be another state directory than dir_.
  std::unique_ptr<WorkerRegistry> registry_on(const std::string& dir,
                                              Duration quarantine = Duration::zero(),
                                              const Clock* clock = nullptr) {
    FileRegistryOptions o;
    o.dir = dir;
    o.layout = small_layout();
    o.quarantine = quarantine;
    o.host_lock_prefix = host_prefix_;
    o.host_dir = host_dir();
    Result<std::unique_ptr<WorkerRegistry>> r =
        make_file_registry(clock != nullptr ? *clock : clock_, o);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r.is_ok() ? std::move(r.value()) : nullptr;
  }

  static LeaseRequest request(std::uint32_t region, std::optional<std::uint32_t> host,
                              WallTime high_water) {
    LeaseRequest r;
    r.region = region;
    r.host = host;
    r.holder = {"test-host", 4242, kStart - seconds(60), "unix:/run/snowid.sock"};
    r.high_water = high_water;
    return r;
  }

  // Starts one acquire per registry at once in `region` (8 hosts): exactly 8
  // succeed, each with a host of its own, and the rest find the block full.
  static void expect_all_race_and_never_share(std::vector<std::unique_ptr<WorkerRegistry>>& regs,
                                              std::uint32_t region) {
    const int n = static_cast<int>(regs.size());
    std::vector<Result<LeaseGrant>> results(n, Status(Code::kUnavailable, "not run"));
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        while (!go.load()) std::this_thread::yield();
        results[i] = regs[i]->acquire(request(region, std::nullopt, kStart + seconds(8)));
      });
    }
    go.store(true);
    for (std::thread& t : threads) t.join();
    std::set<std::uint32_t> hosts;
    int exhausted = 0;
    for (const Result<LeaseGrant>& r : results) {
      if (r.is_ok()) {
        EXPECT_TRUE(hosts.insert(r->worker.host).second) << "host " << r->worker.host << " twice";
      } else {
        EXPECT_EQ(r.status().code(), Code::kResourceExhausted) << r.status().to_string();
        ++exhausted;
      }
    }
    EXPECT_EQ(hosts.size(), 8u);
    EXPECT_EQ(exhausted, n - 8);
  }

  std::string worker_file(const std::string& name) const { return dir_ + "/workers/" + name; }
  // The host directory of this test's registries: inside dir_, so that it
  // goes with it.
  std::string host_dir() const { return dir_ + "/host"; }
  std::string host_file(const std::string& name) const { return host_dir() + "/" + name; }

  void write(const std::string& path, const std::string& text) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    ASSERT_TRUE(out.good()) << path;
  }

  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // The record of `w` in a list of region `w.region`; fails the test if absent.
  static std::optional<WorkerRecord> record_of(WorkerRegistry& reg, WorkerId w) {
    Result<std::vector<WorkerRecord>> list = reg.list(w.region);
    EXPECT_TRUE(list.is_ok()) << list.status().to_string();
    if (!list.is_ok()) return std::nullopt;
    for (const WorkerRecord& r : list.value()) {
      if (r.worker == w) return r;
    }
    ADD_FAILURE() << "no record of " << w.region << "/" << w.host;
    return std::nullopt;
  }

  std::string dir_;
  const std::string host_prefix_ = unique_host_lock_prefix();
  SimulatedClock clock_{kStart};
};

// ---- Options ----

TEST_F(FileRegistryTest, CreatesItsMissingDirectoryPrivateToTheUser) {
  FileRegistryOptions o;
  o.dir = dir_ + "/a/b/state";
  ASSERT_TRUE(make_file_registry(clock_, o).is_ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir_ + "/a/b/state/workers").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  ASSERT_EQ(::stat((dir_ + "/a/b/state").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(FileRegistryTest, RefusesBadOptions) {
  auto code_of = [&](FileRegistryOptions o) {
    Result<std::unique_ptr<WorkerRegistry>> r = make_file_registry(clock_, std::move(o));
    return r.is_ok() ? Code::kOk : r.status().code();
  };
  FileRegistryOptions o;
  o.dir = dir_;
  EXPECT_EQ(code_of(o), Code::kOk);
  FileRegistryOptions empty = o;
  empty.dir = "";
  EXPECT_EQ(code_of(empty), Code::kInvalidArgument);
  FileRegistryOptions negative = o;
  negative.quarantine = -milliseconds(1);
  EXPECT_EQ(code_of(negative), Code::kInvalidArgument);
  FileRegistryOptions long_rest = o;
  long_rest.quarantine = std::chrono::hours(1) + milliseconds(1);
  EXPECT_EQ(code_of(long_rest), Code::kInvalidArgument);
  FileRegistryOptions no_poll = o;
  no_poll.poll_every = Duration::zero();
  EXPECT_EQ(code_of(no_poll), Code::kInvalidArgument);
  FileRegistryOptions long_prefix = o;
  long_prefix.host_lock_prefix = std::string(64, 'p');
  EXPECT_EQ(code_of(long_prefix), Code::kOk);
  long_prefix.host_lock_prefix += "p";
  EXPECT_EQ(code_of(long_prefix), Code::kInvalidArgument);
  FileRegistryOptions nul_prefix = o;
  nul_prefix.host_lock_prefix = std::string("a\0b", 3);
  EXPECT_EQ(code_of(nul_prefix), Code::kInvalidArgument);
  FileRegistryOptions no_guard = o;
  no_guard.host_lock_prefix = "";
  EXPECT_EQ(code_of(no_guard), Code::kOk);
  // A prefix with a slash names no directory under /var/tmp by itself.
  FileRegistryOptions slash_prefix = o;
  slash_prefix.host_lock_prefix = "deployment/a";
  EXPECT_EQ(code_of(slash_prefix), Code::kInvalidArgument);
  slash_prefix.host_dir = dir_ + "/host";
  EXPECT_EQ(code_of(slash_prefix), Code::kOk);
  FileRegistryOptions decode_only = o;
  decode_only.layout = preset("twitter").value();
  EXPECT_EQ(code_of(decode_only), Code::kInvalidArgument);

  const std::string file = dir_ + "/plain-file";
  write(file, "x");
  FileRegistryOptions not_dir = o;
  not_dir.dir = file;
  EXPECT_EQ(code_of(not_dir), Code::kUnavailable);
}

TEST_F(FileRegistryTest, RejectsRegionsAndHostsOutsideTheLayout) {
  auto reg = registry();
  EXPECT_EQ(reg->acquire(request(4, std::nullopt, kStart)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(reg->acquire(request(0, 8, kStart)).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(reg->fence({0, 8}).code(), Code::kInvalidArgument);
  EXPECT_EQ(reg->fence({4, 0}).code(), Code::kInvalidArgument);
}

// ---- Distinct ids ----

TEST_F(FileRegistryTest, GivesEveryAcquirerADistinctIdUntilTheBlockIsFull) {
  auto reg = registry();
  std::vector<LeaseGrant> grants;
  for (std::uint32_t i = 0; i < 8; ++i) {
    Result<LeaseGrant> g = reg->acquire(request(2, std::nullopt, kStart + seconds(8)));
    ASSERT_TRUE(g.is_ok()) << g.status().to_string();
    // Never-used ids are handed out lowest first.
    EXPECT_EQ(g->worker, (WorkerId{2, i}));
    EXPECT_FALSE(g->previous_high_water.has_value());
    grants.push_back(g.value());
  }
  Result<LeaseGrant> full = reg->acquire(request(2, std::nullopt, kStart));
  ASSERT_FALSE(full.is_ok());
  EXPECT_EQ(full.status().code(), Code::kResourceExhausted);
  EXPECT_NE(full.status().message().find("region 2"), std::string::npos) << full.status().message();
  // Other regions are separate blocks.
  Result<LeaseGrant> other = reg->acquire(request(3, std::nullopt, kStart));
  ASSERT_TRUE(other.is_ok());
  EXPECT_EQ(other->worker, (WorkerId{3, 0}));
  // Tokens are unique too.
  std::set<std::string> tokens;
  for (const LeaseGrant& g : grants) tokens.insert(g.token);
  EXPECT_EQ(tokens.size(), grants.size());
}

TEST_F(FileRegistryTest, ConcurrentRegistriesOnManyThreadsNeverShareAnId) {
  constexpr int kThreads = 16;
  std::vector<std::unique_ptr<WorkerRegistry>> regs;
  for (int i = 0; i < kThreads; ++i) regs.push_back(registry());
  expect_all_race_and_never_share(regs, 1);
}

TEST_F(FileRegistryTest, TwoRegistriesInOneProcessExcludeEachOther) {
  auto a = registry();
  auto b = registry();
  ASSERT_TRUE(a->acquire(request(0, 5, kStart)).is_ok());
  Result<LeaseGrant> pinned = b->acquire(request(0, 5, kStart));
  ASSERT_FALSE(pinned.is_ok());
  EXPECT_EQ(pinned.status().code(), Code::kResourceExhausted);
  // The message says who holds it.
  EXPECT_NE(pinned.status().message().find("test-host pid 4242"), std::string::npos)
      << pinned.status().message();
  Result<LeaseGrant> any = b->acquire(request(0, std::nullopt, kStart));
  ASSERT_TRUE(any.is_ok());
  EXPECT_NE(any->worker.host, 5u);
}

// A child process that acquires an id in `region` from a registry on `dir`
// with host locks named after `host_prefix`, and reports its host over a pipe
// (or 255 on failure), then holds it until every write end of `hold` is
// closed. `parent_ends` (the pipes' other ends) are closed in the child.
pid_t spawn_holder(const std::string& dir, const std::string& host_prefix,
                   const std::string& host_dir, std::uint32_t region,
                   std::optional<std::uint32_t> host, WallTime renew_to, int report_fd, int hold_fd,
                   std::vector<int> parent_ends) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  // The child: no gtest assertions here, only _exit.
  for (int fd : parent_ends) ::close(fd);
  SimulatedClock clock(kStart);
  FileRegistryOptions o;
  o.dir = dir;
  o.layout = small_layout();
  o.host_lock_prefix = host_prefix;
  o.host_dir = host_dir;
  Result<std::unique_ptr<WorkerRegistry>> reg = make_file_registry(clock, o);
  unsigned char answer = 255;
  if (reg.is_ok()) {
    LeaseRequest r;
    r.region = region;
    r.host = host;
    r.holder = {"child", static_cast<std::int64_t>(::getpid()), kStart, ""};
    r.high_water = kStart + seconds(8);
    Result<LeaseGrant> g = reg.value()->acquire(r);
    if (g.is_ok() && reg.value()->renew(g.value(), renew_to).is_ok()) {
      answer = static_cast<unsigned char>(g->worker.host);
    }
  }
  if (::write(report_fd, &answer, 1) != 1) ::_exit(3);
  char c;
  while (::read(hold_fd, &c, 1) < 0 && errno == EINTR) {
  }
  ::_exit(0);  // without release: as a crash would
}

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { EXPECT_EQ(::pipe(fds), 0); }
  ~Pipe() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
  void close_end(int i) {
    ::close(fds[i]);
    fds[i] = -1;
  }
};

unsigned char read_byte(int fd) {
  unsigned char c = 254;
  while (::read(fd, &c, 1) < 0 && errno == EINTR) {
  }
  return c;
}

void reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

TEST_F(FileRegistryTest, SeparateProcessesHoldDistinctIdsAndFreeThemWhenTheyExit) {
  constexpr int kChildren = 5;
  Pipe report, hold;
  std::vector<pid_t> children;
  for (int i = 0; i < kChildren; ++i) {
    children.push_back(spawn_holder(dir_, host_prefix_, host_dir(), 1, std::nullopt,
                                    kStart + seconds(8), report.fds[1], hold.fds[0],
                                    {report.fds[0], hold.fds[1]}));
  }
  std::set<std::uint32_t> hosts;
  for (int i = 0; i < kChildren; ++i) {
    const unsigned char host = read_byte(report.fds[0]);
    ASSERT_LT(host, 8) << "a child failed to acquire";
    EXPECT_TRUE(hosts.insert(host).second) << "host " << int{host} << " twice";
  }
  // This process takes the rest of the block, never a child's id.
  auto reg = registry();
  for (int i = kChildren; i < 8; ++i) {
    Result<LeaseGrant> g = reg->acquire(request(1, std::nullopt, kStart + seconds(8)));
    ASSERT_TRUE(g.is_ok()) << g.status().to_string();
    EXPECT_TRUE(hosts.insert(g->worker.host).second) << "host " << g->worker.host << " twice";
  }
  EXPECT_EQ(reg->acquire(request(1, std::nullopt, kStart)).status().code(),
            Code::kResourceExhausted);

  // The children exit without releasing; the kernel frees their locks. Their
  // ids come back once their marks (renewed to kStart + 8 s) have passed.
  hold.close_end(1);
  for (pid_t pid : children) reap(pid);
  EXPECT_EQ(reg->acquire(request(1, std::nullopt, kStart)).status().code(),
            Code::kResourceExhausted);
  clock_.advance(seconds(8));
  for (int i = 0; i < kChildren; ++i) {
    Result<LeaseGrant> g = reg->acquire(request(1, std::nullopt, kStart + seconds(16)));
    ASSERT_TRUE(g.is_ok()) << g.status().to_string();
    ASSERT_TRUE(g->previous_high_water.has_value());
    EXPECT_EQ(*g->previous_high_water, kStart + seconds(8));
  }
}

TEST_F(FileRegistryTest, AKilledHoldersSuccessorWaitsOutItsMarkAndReceivesIt) {
  Pipe report, hold;
  const WallTime renewed = kStart + seconds(9);
  const pid_t child = spawn_holder(dir_, host_prefix_, host_dir(), 0, 3, renewed, report.fds[1],
                                   hold.fds[0], {report.fds[0], hold.fds[1]});
  ASSERT_EQ(read_byte(report.fds[0]), 3);

  auto reg = registry();
  Result<LeaseGrant> while_alive = reg->acquire(request(0, 3, kStart));
  ASSERT_FALSE(while_alive.is_ok());
  EXPECT_EQ(while_alive.status().code(), Code::kResourceExhausted);
  EXPECT_NE(while_alive.status().message().find("child pid " + std::to_string(child)),
            std::string::npos)
      << while_alive.status().message();
  std::optional<WorkerRecord> rec = record_of(*reg, {0, 3});
  ASSERT_TRUE(rec && rec->holder);
  EXPECT_EQ(rec->holder->pid, child);

  ASSERT_EQ(::kill(child, SIGKILL), 0);
  reap(child);
  // Free of its holder but resting until the mark it renewed to.
  rec = record_of(*reg, {0, 3});
  ASSERT_TRUE(rec);
  EXPECT_FALSE(rec->holder.has_value());
  EXPECT_EQ(rec->high_water, renewed);
  EXPECT_EQ(rec->quarantined_until, renewed);
  Result<LeaseGrant> early = reg->acquire(request(0, 3, kStart));
  ASSERT_FALSE(early.is_ok());
  EXPECT_EQ(early.status().code(), Code::kResourceExhausted);
  EXPECT_NE(early.status().message().find("rests until"), std::string::npos);

  clock_.set_wall(renewed);
  Result<LeaseGrant> successor = reg->acquire(request(0, 3, renewed + seconds(8)));
  ASSERT_TRUE(successor.is_ok()) << successor.status().to_string();
  EXPECT_EQ(successor->previous_high_water, renewed);
}

// ---- Across state directories (issue: two users' default state
// directories both handed out worker 0/0 and issued the same ids) ----

TEST_F(FileRegistryTest, RegistriesOnDifferentDirectoriesNeverShareAnId) {
  auto a = registry_on(dir_ + "/user-a");
  auto b = registry_on(dir_ + "/user-b");
  std::set<std::uint32_t> hosts;
  for (int i = 0; i < 4; ++i) {
    for (WorkerRegistry* reg : {a.get(), b.get()}) {
      Result<LeaseGrant> g = reg->acquire(request(1, std::nullopt, kStart + seconds(8)));
      ASSERT_TRUE(g.is_ok()) << g.status().to_string();
      EXPECT_TRUE(hosts.insert(g->worker.host).second) << "host " << g->worker.host << " twice";
    }
  }
  EXPECT_EQ(hosts.size(), 8u);
  for (WorkerRegistry* reg : {a.get(), b.get()}) {
    Result<LeaseGrant> full = reg->acquire(request(1, std::nullopt, kStart));
    ASSERT_FALSE(full.is_ok());
    EXPECT_EQ(full.status().code(), Code::kResourceExhausted);
    EXPECT_NE(full.status().message().find("4 held through other registry directories"),
              std::string::npos)
        << full.status().message();
  }
}

TEST_F(FileRegistryTest, APinnedIdHeldThroughAnotherDirectoryIsExhaustedAndSaysSo) {
  auto a = registry_on(dir_ + "/user-a");
  auto b = registry_on(dir_ + "/user-b");
  ASSERT_TRUE(a->acquire(request(0, 0, kStart + seconds(8))).is_ok());
  Result<LeaseGrant> pinned = b->acquire(request(0, 0, kStart + seconds(8)));
  ASSERT_FALSE(pinned.is_ok());
  EXPECT_EQ(pinned.status().code(), Code::kResourceExhausted);
  EXPECT_NE(pinned.status().message().find("worker 0/0 is held through another registry "
                                           "directory on this host"),
            std::string::npos)
      << pinned.status().message();
  EXPECT_NE(pinned.status().message().find(host_file("r0-h0.lock")), std::string::npos)
      << pinned.status().message();
  // The loser wrote nothing of its own for the id and holds nothing.
  EXPECT_FALSE(lock_file_taken(dir_ + "/user-b/workers/r0-h0.lock"));
  EXPECT_FALSE(fs::exists(dir_ + "/user-b/workers/r0-h0.mark"));
  // Any-id requests pass it by.
  Result<LeaseGrant> any = b->acquire(request(0, std::nullopt, kStart + seconds(8)));
  ASSERT_TRUE(any.is_ok()) << any.status().to_string();
  EXPECT_EQ(any->worker, (WorkerId{0, 1}));
}

TEST_F(FileRegistryTest, ConcurrentRegistriesOnManyDirectoriesNeverShareAnId) {
  constexpr int kThreads = 16;
  std::vector<std::unique_ptr<WorkerRegistry>> regs;
  for (int i = 0; i < kThreads; ++i) regs.push_back(registry_on(dir_ + "/d" + std::to_string(i)));
  expect_all_race_and_never_share(regs, 2);
}

TEST_F(FileRegistryTest, ProcessesOnDifferentDirectoriesExcludeEachOtherUntilTheHolderDies) {
  constexpr int kChildren = 5;
  Pipe report, hold;
  std::vector<pid_t> children;
  std::map<std::uint32_t, pid_t> holder_of;
  for (int i = 0; i < kChildren; ++i) {
    children.push_back(spawn_holder(dir_ + "/child-" + std::to_string(i), host_prefix_, host_dir(),
                                    1, std::nullopt, kStart + seconds(8), report.fds[1],
                                    hold.fds[0], {report.fds[0], hold.fds[1]}));
  }
  std::set<std::uint32_t> hosts;
  for (int i = 0; i < kChildren; ++i) {
    const unsigned char host = read_byte(report.fds[0]);
    ASSERT_LT(host, 8) << "a child failed to acquire";
    EXPECT_TRUE(hosts.insert(host).second) << "host " << int{host} << " twice";
  }
  // This process, on a directory of its own, takes the rest of the block.
  auto reg = registry_on(dir_ + "/parent");
  for (int i = kChildren; i < 8; ++i) {
    Result<LeaseGrant> g = reg->acquire(request(1, std::nullopt, kStart + seconds(8)));
    ASSERT_TRUE(g.is_ok()) << g.status().to_string();
    EXPECT_TRUE(hosts.insert(g->worker.host).second) << "host " << g->worker.host << " twice";
  }
  EXPECT_EQ(reg->acquire(request(1, std::nullopt, kStart)).status().code(),
            Code::kResourceExhausted);

  // Kill one child: the kernel frees its host locks, and this directory, which
  // has no mark of the id, hands it out once the child's mark, from the host
  // directory, has passed.
  ASSERT_EQ(::kill(children[0], SIGKILL), 0);
  reap(children[0]);
  EXPECT_EQ(reg->acquire(request(1, std::nullopt, kStart)).status().code(),
            Code::kResourceExhausted);
  clock_.set_wall(kStart + seconds(8));
  Result<LeaseGrant> freed = reg->acquire(request(1, std::nullopt, kStart + seconds(8)));
  ASSERT_TRUE(freed.is_ok()) << freed.status().to_string();
  EXPECT_EQ(freed->previous_high_water, kStart + seconds(8));
  // Still no id twice: the one freed was one of the children's.
  EXPECT_EQ(reg->acquire(request(1, std::nullopt, kStart)).status().code(),
            Code::kResourceExhausted);
  hold.close_end(1);
  for (std::size_t i = 1; i < children.size(); ++i) reap(children[i]);
}

TEST_F(FileRegistryTest, AnEmptyHostLockPrefixOrADistinctOneTurnsTheGuardOff) {
  auto guarded = registry_on(dir_ + "/a");
  ASSERT_TRUE(guarded->acquire(request(0, 0, kStart + seconds(8))).is_ok());
  for (const std::string& prefix : {std::string(), unique_host_lock_prefix()}) {
    FileRegistryOptions o;
    o.dir = dir_ + "/independent-" + std::to_string(prefix.size());
    o.layout = small_layout();
    o.host_lock_prefix = prefix;
    o.host_dir = dir_ + "/host-of-" + prefix;  // a distinct prefix's own
    Result<std::unique_ptr<WorkerRegistry>> other = make_file_registry(clock_, o);
    ASSERT_TRUE(other.is_ok()) << other.status().to_string();
    EXPECT_TRUE(other.value()->acquire(request(0, 0, kStart + seconds(8))).is_ok())
        << "prefix \"" << prefix << "\"";
  }
}

// ---- The host directory ----

// Distinct prefixes, so distinct host names: only the host directory's lock
// files keep the two apart, as for holders in separate network namespaces.
TEST_F(FileRegistryTest, RegistriesOnDifferentDirectoriesSharingTheHostDirectoryTakeDistinctIds) {
  FileRegistryOptions o;
  o.dir = dir_ + "/b";
  o.layout = small_layout();
  o.host_lock_prefix = unique_host_lock_prefix();
  o.host_dir = host_dir();
  auto a = registry_on(dir_ + "/a");
  Result<std::unique_ptr<WorkerRegistry>> b = make_file_registry(clock_, o);
  ASSERT_TRUE(b.is_ok()) << b.status().to_string();
  Result<LeaseGrant> first = a->acquire(request(0, std::nullopt, kStart + seconds(8)));
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  EXPECT_EQ(first->worker, (WorkerId{0, 0}));
  EXPECT_TRUE(lock_file_taken(host_file("r0-h0.lock")));
  Result<LeaseGrant> second = b.value()->acquire(request(0, std::nullopt, kStart + seconds(8)));
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  EXPECT_EQ(second->worker, (WorkerId{0, 1}));
  Result<LeaseGrant> pinned = b.value()->acquire(request(0, 0, kStart + seconds(8)));
  ASSERT_FALSE(pinned.is_ok());
  EXPECT_EQ(pinned.status().code(), Code::kResourceExhausted);
  EXPECT_NE(pinned.status().message().find("host lock file " + host_file("r0-h0.lock")),
            std::string::npos)
      << pinned.status().message();
  // Let go: the host lock file stays, unlocked.
  a->abandon(first.value());
  EXPECT_TRUE(fs::exists(host_file("r0-h0.lock")));
  EXPECT_FALSE(lock_file_taken(host_file("r0-h0.lock")));
  clock_.set_wall(kStart + seconds(8));  // past a's mark
  EXPECT_TRUE(b.value()->acquire(request(0, 0, kStart + seconds(16))).is_ok());
}

TEST_F(FileRegistryTest, AReleasedIdsMarkIsCarriedToAnotherDirectoryWhoseClockIsBehind) {
  auto a = registry_on(dir_ + "/a");
  Result<LeaseGrant> g = a->acquire(request(0, 3, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  ASSERT_TRUE(a->renew(g.value(), kStart + seconds(9)).is_ok());
  EXPECT_EQ(read(host_file("r0-h3.mark")),
            "snowid-mark 1 high_water=" + std::to_string(unix_ms(kStart + seconds(9))) +
                " released_at=-\n");
  clock_.advance(seconds(1));
  ASSERT_TRUE(a->release(g.value(), kStart + milliseconds(500)).is_ok());
  EXPECT_EQ(read(host_file("r0-h3.mark")),
            "snowid-mark 1 high_water=" + std::to_string(unix_ms(kStart + milliseconds(500))) +
                " released_at=" + std::to_string(unix_ms(kStart + seconds(1))) + "\n");

  // From another directory, 3 s behind: the id rests until the release.
  SimulatedClock behind(kStart + seconds(1) - seconds(3));
  auto b = registry_on(dir_ + "/b", Duration::zero(), &behind);
  Result<LeaseGrant> early = b->acquire(request(0, 3, behind.wall_now() + seconds(8)));
  ASSERT_FALSE(early.is_ok());
  EXPECT_EQ(early.status().code(), Code::kResourceExhausted);
  EXPECT_NE(early.status().message().find("rests until"), std::string::npos)
      << early.status().message();
  EXPECT_FALSE(fs::exists(dir_ + "/b/workers/r0-h3.mark"));
  // Any-id requests pass it by.
  Result<LeaseGrant> any = b->acquire(request(0, std::nullopt, behind.wall_now() + seconds(8)));
  ASSERT_TRUE(any.is_ok()) << any.status().to_string();
  EXPECT_NE(any->worker, (WorkerId{0, 3}));
  // Once its clock is past the release, it gets the id with A's mark.
  behind.advance(seconds(3));
  Result<LeaseGrant> later = b->acquire(request(0, 3, behind.wall_now() + seconds(8)));
  ASSERT_TRUE(later.is_ok()) << later.status().to_string();
  EXPECT_EQ(later->previous_high_water, kStart + milliseconds(500));
}

TEST_F(FileRegistryTest, AnAbandonedIdsRenewedMarkIsCarriedToAnotherDirectory) {
  auto a = registry_on(dir_ + "/a");
  Result<LeaseGrant> g = a->acquire(request(1, 2, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  ASSERT_TRUE(a->renew(g.value(), kStart + seconds(11)).is_ok());
  a->abandon(g.value());
  // Even on a clock far ahead, and the directory's own mark lower.
  SimulatedClock ahead(kStart + seconds(60));
  auto b = registry_on(dir_ + "/b", Duration::zero(), &ahead);
  Result<LeaseGrant> next = b->acquire(request(1, 2, ahead.wall_now() + seconds(8)));
  ASSERT_TRUE(next.is_ok()) << next.status().to_string();
  EXPECT_EQ(next->previous_high_water, kStart + seconds(11));
}

TEST_F(FileRegistryTest, FenceRecordsItsReleaseTimeInTheHostMark) {
  auto reg = registry();
  Result<LeaseGrant> g = reg->acquire(request(0, 5, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  clock_.advance(seconds(2));
  ASSERT_TRUE(reg->fence({0, 5}).is_ok());
  EXPECT_EQ(read(host_file("r0-h5.mark")),
            "snowid-mark 1 high_water=" + std::to_string(unix_ms(kStart + seconds(8))) +
                " released_at=" + std::to_string(unix_ms(kStart + seconds(2))) + "\n");
}

TEST_F(FileRegistryTest, ACorruptHostMarkIsDataLossNeverAFreshId) {
  auto reg = registry();
  ASSERT_TRUE(reg->acquire(request(0, 0, kStart + seconds(8))).is_ok());  // makes the directory
  write(host_file("r0-h4.mark"), "snowid-mark 1 high_water=12");
  Result<LeaseGrant> pinned = reg->acquire(request(0, 4, kStart + seconds(8)));
  ASSERT_FALSE(pinned.is_ok());
  EXPECT_EQ(pinned.status().code(), Code::kDataLoss) << pinned.status().to_string();
  EXPECT_NE(pinned.status().message().find(host_file("r0-h4.mark")), std::string::npos)
      << pinned.status().message();
  EXPECT_FALSE(lock_file_taken(worker_file("r0-h4.lock")));
  EXPECT_FALSE(lock_file_taken(host_file("r0-h4.lock")));
  // Any-id requests take every other id, then say why 0/4 is not free.
  std::set<std::uint32_t> hosts = {0};
  Result<LeaseGrant> g = Status(Code::kUnavailable, "");
  while ((g = reg->acquire(request(0, std::nullopt, kStart + seconds(8)))).is_ok()) {
    EXPECT_TRUE(hosts.insert(g->worker.host).second);
  }
  EXPECT_EQ(hosts.size(), 7u);
  EXPECT_EQ(hosts.count(4), 0u);
  EXPECT_EQ(g.status().code(), Code::kDataLoss) << g.status().to_string();
  // An empty host mark is no mark either.
  write(host_file("r1-h0.mark"), "");
  EXPECT_EQ(reg->acquire(request(1, 0, kStart + seconds(8))).status().code(), Code::kDataLoss);
}

TEST_F(FileRegistryTest, CreatesTheHostDirectoryStickyAndItsFilesForEveryUser) {
  const mode_t old_umask = ::umask(077);
  auto reg = registry();
  Result<LeaseGrant> g = reg->acquire(request(0, 6, kStart + seconds(8)));
  ::umask(old_umask);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  struct stat st {};
  ASSERT_EQ(::lstat(host_dir().c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 01777u);
  for (const char* name : {"r0-h6.lock", "r0-h6.mark", "r0-h6.mark-lock"}) {
    ASSERT_EQ(::lstat(host_file(name).c_str(), &st), 0) << name;
    EXPECT_EQ(st.st_mode & 07777, 0666u) << name;
  }
}

TEST_F(FileRegistryTest, RefusesAnUnsafeHostDirectoryAndTakesNoId) {
  auto refused = [&](const std::string& why) {
    auto reg = registry();
    Result<LeaseGrant> g = reg->acquire(request(0, 7, kStart + seconds(8)));
    EXPECT_FALSE(g.is_ok()) << why;
    if (g.is_ok()) return;
    EXPECT_EQ(g.status().code(), Code::kUnavailable) << why;
    const std::string& m = g.status().message();
    EXPECT_NE(m.find(host_dir()), std::string::npos) << why << ": " << m;
    EXPECT_NE(m.find(why), std::string::npos) << m;
    EXPECT_NE(m.find("SNOWID_HOST_LOCK=off"), std::string::npos) << m;
    EXPECT_TRUE(!fs::exists(worker_file("r0-h7.lock")) ||
                !lock_file_taken(worker_file("r0-h7.lock")))
        << why;
    EXPECT_FALSE(host_lock_taken(host_prefix_, {0, 7})) << why;
  };
  // A symlink, even to a good directory.
  ASSERT_EQ(::mkdir((dir_ + "/real").c_str(), 0700), 0);
  ASSERT_EQ(::chmod((dir_ + "/real").c_str(), 01777), 0);
  ASSERT_EQ(::symlink((dir_ + "/real").c_str(), host_dir().c_str()), 0);
  refused("is a symlink");
  ASSERT_EQ(::unlink(host_dir().c_str()), 0);
  // Writable by others without the sticky bit.
  ASSERT_EQ(::mkdir(host_dir().c_str(), 0700), 0);
  ASSERT_EQ(::chmod(host_dir().c_str(), 0777), 0);
  refused("writable by others without the sticky bit");
  ASSERT_EQ(::chmod(host_dir().c_str(), 0770), 0);
  refused("writable by others without the sticky bit");
  // Another user's, not sticky; sticky, it is fine.
  ASSERT_EQ(::chmod(host_dir().c_str(), 0755), 0);
  ASSERT_EQ(::chown(host_dir().c_str(), 4242, 4242), 0)
      << std::strerror(errno) << " (the test changes owners: run it as root)";
  refused("belongs to user 4242");
  ASSERT_EQ(::chmod(host_dir().c_str(), 01777), 0);
  auto reg = registry();
  EXPECT_TRUE(reg->acquire(request(0, 7, kStart + seconds(8))).is_ok());
  reg.reset();
  // Not a directory at all.
  fs::remove_all(host_dir());
  write(host_dir(), "x");
  refused("is not a directory");
}

TEST_F(FileRegistryTest, AHostMarkThatIsASymlinkOrAFifoIsRefusedNeverFollowed) {
  auto reg = registry();
  ASSERT_TRUE(reg->acquire(request(0, 0, kStart + seconds(8))).is_ok());  // makes the directory
  // A mark elsewhere that would say the id was never used much.
  write(dir_ + "/elsewhere.mark", "snowid-mark 1 high_water=1 released_at=-\n");
  ASSERT_EQ(::symlink((dir_ + "/elsewhere.mark").c_str(), host_file("r0-h2.mark").c_str()), 0);
  ASSERT_EQ(::mkfifo(host_file("r0-h3.mark").c_str(), 0666), 0);
  for (std::uint32_t host : {2u, 3u}) {
    Result<LeaseGrant> g = reg->acquire(request(0, host, kStart + seconds(8)));
    ASSERT_FALSE(g.is_ok()) << host;
    EXPECT_EQ(g.status().code(), Code::kUnavailable) << g.status().to_string();
    EXPECT_NE(g.status().message().find(host_file("r0-h" + std::to_string(host) + ".mark")),
              std::string::npos)
        << g.status().message();
    EXPECT_FALSE(lock_file_taken(host_file("r0-h" + std::to_string(host) + ".lock")));
  }
}

TEST_F(FileRegistryTest, AHostLockFileRemovedUnderTheHolderVoidsItsLease) {
  auto reg = registry();
  Result<LeaseGrant> g = reg->acquire(request(0, 1, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  ASSERT_EQ(::unlink(host_file("r0-h1.lock").c_str()), 0);
  Status s = reg->renew(g.value(), kStart + seconds(9));
  EXPECT_EQ(s.code(), Code::kLeaseLost) << s.to_string();
  EXPECT_FALSE(lock_file_taken(worker_file("r0-h1.lock")));
}

// ---- Marks ----

TEST_F(FileRegistryTest, AcquireKeepsTheLaterOfTheStoredMarkAndTheRequest) {
  auto reg = registry();
  Result<LeaseGrant> first = reg->acquire(request(0, 1, kStart + seconds(8)));
  ASSERT_TRUE(first.is_ok());
  ASSERT_TRUE(reg->release(first.value(), kStart + milliseconds(700)).is_ok());
  clock_.advance(seconds(1));
  // A request whose first mark is earlier than the stored one.
  Result<LeaseGrant> second = reg->acquire(request(0, 1, kStart + milliseconds(200)));
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  EXPECT_EQ(second->previous_high_water, kStart + milliseconds(700));
  std::optional<WorkerRecord> rec = record_of(*reg, {0, 1});
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->high_water, kStart + milliseconds(700));
}

TEST_F(FileRegistryTest, RenewOnlyRaisesTheMark) {
  auto reg = registry();
  Result<LeaseGrant> g = reg->acquire(request(0, 0, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  ASSERT_TRUE(reg->renew(g.value(), kStart + seconds(11)).is_ok());
  EXPECT_EQ(record_of(*reg, {0, 0})->high_water, kStart + seconds(11));
  ASSERT_TRUE(reg->renew(g.value(), kStart + seconds(9)).is_ok());
  EXPECT_EQ(record_of(*reg, {0, 0})->high_water, kStart + seconds(11));
}

TEST_F(FileRegistryTest, MarksRoundUpToTheMillisecondNeverDown) {
  auto reg = registry();
  Result<LeaseGrant> g = reg->acquire(request(0, 0, kStart + std::chrono::microseconds(1500)));
  ASSERT_TRUE(g.is_ok());
  EXPECT_EQ(record_of(*reg, {0, 0})->high_water, kStart + milliseconds(2));
}

TEST_F(FileRegistryTest, ReleaseRecordsTheExactLastInstantAndTheReleaseTime) {
  auto reg = registry();
  Result<LeaseGrant> g = reg->acquire(request(0, 2, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  ASSERT_TRUE(reg->renew(g.value(), kStart + seconds(9)).is_ok());
  clock_.advance(seconds(1));
  // The renewals' caps lie ahead; the holder stopped at +500 ms.
  ASSERT_TRUE(reg->release(g.value(), kStart + milliseconds(500)).is_ok());
  std::optional<WorkerRecord> rec = record_of(*reg, {0, 2});
  ASSERT_TRUE(rec);
  EXPECT_FALSE(rec->holder.has_value());
  EXPECT_EQ(rec->high_water, kStart + milliseconds(500));
  EXPECT_EQ(rec->released_at, kStart + seconds(1));
  EXPECT_FALSE(rec->quarantined_until.has_value());  // no quarantine configured
  // The lock file stays: removing it could let two processes lock two files.
  EXPECT_TRUE(fs::exists(worker_file("r0-h2.lock")));

  Result<LeaseGrant> next = reg->acquire(request(0, 2, kStart + seconds(9)));
  ASSERT_TRUE(next.is_ok()) << next.status().to_string();
  EXPECT_EQ(next->previous_high_water, kStart + milliseconds(500));
}

TEST_F(FileRegistryTest, ReleaseNeverRecordsLessThanThePreviousHoldersMark) {
  auto reg = registry();
  Result<LeaseGrant> first = reg->acquire(request(0, 4, kStart + seconds(8)));
  ASSERT_TRUE(first.is_ok());
  ASSERT_TRUE(reg->release(first.value(), kStart + seconds(2)).is_ok());
  clock_.advance(seconds(3));
  Result<LeaseGrant> second = reg->acquire(request(0, 4, kStart + seconds(11)));
  ASSERT_TRUE(second.is_ok());
  // This holder issued nothing, and says so with an early instant.
  ASSERT_TRUE(reg->release(second.value(), kStart).is_ok());
  EXPECT_EQ(record_of(*reg, {0, 4})->high_water, kStart + seconds(2));
}

TEST_F(FileRegistryTest, AReleasedLeaseCanNeitherBeRenewedNorReleasedAgain) {
  auto reg = registry();
  Result<LeaseGrant> g = reg->acquire(request(0, 0, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  ASSERT_TRUE(reg->release(g.value(), kStart).is_ok());
  EXPECT_EQ(reg->renew(g.value(), kStart + seconds(20)).code(), Code::kLeaseLost);
  EXPECT_EQ(reg->release(g.value(), kStart + seconds(20)).code(), Code::kLeaseLost);
  EXPECT_EQ(record_of(*reg, {0, 0})->high_water, kStart);
  Result<bool> lost = reg->wait_lost(g.value(), seconds(1));
  ASSERT_TRUE(lost.is_ok());
  EXPECT_TRUE(lost.value());
}

// ---- Letting go (issue: a lost lease, a failed release or a destroyed
// registry kept its ids locked until the process exited) ----

TEST_F(FileRegistryTest, AbandonFreesTheIdAndRecordsNothing) {
  auto reg = registry();
  auto other_dir = registry_on(dir_ + "/other");
  Result<LeaseGrant> g = reg->acquire(request(0, 3, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  ASSERT_TRUE(reg->renew(g.value(), kStart + seconds(11)).is_ok());
  const std::string mark_before = read(worker_file("r0-h3.mark"));
  EXPECT_TRUE(lock_file_taken(worker_file("r0-h3.lock")));
  EXPECT_TRUE(host_lock_taken(host_prefix_, {0, 3}));

  clock_.advance(seconds(1));
  reg->abandon(g.value());
  EXPECT_FALSE(lock_file_taken(worker_file("r0-h3.lock")));
  EXPECT_FALSE(host_lock_taken(host_prefix_, {0, 3}));
  // The mark is as last renewed; no release time.
  EXPECT_EQ(read(worker_file("r0-h3.mark")), mark_before);
  std::optional<WorkerRecord> rec = record_of(*reg, {0, 3});
  ASSERT_TRUE(rec);
  EXPECT_FALSE(rec->holder.has_value());
  EXPECT_EQ(rec->high_water, kStart + seconds(11));
  EXPECT_FALSE(rec->released_at.has_value());

  // The lease is gone; abandoning it again, or a lease never held, is harmless.
  EXPECT_EQ(reg->renew(g.value(), kStart + seconds(20)).code(), Code::kLeaseLost);
  EXPECT_EQ(reg->release(g.value(), kStart + seconds(20)).code(), Code::kLeaseLost);
  Result<bool> lost = reg->wait_lost(g.value(), seconds(1));
  ASSERT_TRUE(lost.is_ok());
  EXPECT_TRUE(lost.value());
  reg->abandon(g.value());
  reg->abandon(LeaseGrant{{0, 3}, "no-such-token", std::nullopt});
  EXPECT_EQ(read(worker_file("r0-h3.mark")), mark_before);

  // Another directory knows the mark too, from the host directory: no one
  // takes the id until it has passed.
  EXPECT_EQ(other_dir->acquire(request(0, 3, kStart + seconds(9))).status().code(),
            Code::kResourceExhausted);
  clock_.set_wall(kStart + seconds(11));
  // (Asking for no later mark, so that this one need not wait again.)
  Result<LeaseGrant> elsewhere = other_dir->acquire(request(0, 3, kStart + seconds(11)));
  ASSERT_TRUE(elsewhere.is_ok()) << elsewhere.status().to_string();
  EXPECT_EQ(elsewhere->previous_high_water, kStart + seconds(11));
  other_dir->abandon(elsewhere.value());
  Result<LeaseGrant> next = reg->acquire(request(0, 3, kStart + seconds(19)));
  ASSERT_TRUE(next.is_ok()) << next.status().to_string();
  EXPECT_EQ(next->previous_high_water, kStart + seconds(11));
}

TEST_F(FileRegistryTest, AbandonEndsAWaitLostInProgress) {
  auto reg = registry(Duration::zero(), &system_clock());
  Result<LeaseGrant> g = reg->acquire(request(0, 0, system_clock().wall_now() + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  Result<bool> lost = false;
  std::thread waiter([&] { lost = reg->wait_lost(g.value(), seconds(30)); });
  reg->abandon(g.value());
  waiter.join();
  ASSERT_TRUE(lost.is_ok());
  EXPECT_TRUE(lost.value());
}

TEST_F(FileRegistryTest, AbandoningAFencedLeaseLeavesTheMarkerForTheNextAcquirer) {
  auto holder = registry();
  auto operator_reg = registry();
  Result<LeaseGrant> g = holder->acquire(request(1, 1, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  ASSERT_TRUE(operator_reg->fence({1, 1}).is_ok());
  holder->abandon(g.value());
  EXPECT_TRUE(fs::exists(worker_file("r1-h1.fence")));
  EXPECT_EQ(operator_reg->fence({1, 1}).code(), Code::kNotFound);
  clock_.set_wall(kStart + seconds(8));
  Result<LeaseGrant> next = operator_reg->acquire(request(1, 1, kStart + seconds(16)));
  ASSERT_TRUE(next.is_ok()) << next.status().to_string();
  EXPECT_FALSE(fs::exists(worker_file("r1-h1.fence")));
  clock_.set_auto_advance(true);  // wait_lost() pauses on the simulated clock
  Result<bool> lost = operator_reg->wait_lost(next.value(), milliseconds(1));
  ASSERT_TRUE(lost.is_ok());
  EXPECT_FALSE(lost.value());
}

TEST_F(FileRegistryTest, AReleaseThatCannotTakeTheMarkLockStillFreesTheId) {
  auto reg = registry();
  Result<LeaseGrant> g = reg->acquire(request(0, 5, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  ASSERT_TRUE(reg->renew(g.value(), kStart + seconds(10)).is_ok());
  const std::string mark_before = read(worker_file("r0-h5.mark"));
  // As a process stopped while it changes the id's mark would.
  const int fd = ::open(worker_file("r0-h5.mark-lock").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  clock_.set_auto_advance(true);  // the 2 s wait passes on the simulated clock

  const Status released = reg->release(g.value(), kStart + seconds(1));
  EXPECT_EQ(released.code(), Code::kUnavailable);
  EXPECT_NE(released.message().find("r0-h5.mark-lock"), std::string::npos) << released.message();
  EXPECT_NE(released.message().find("freed with its last renewed high-water mark"),
            std::string::npos)
      << released.message();
  EXPECT_FALSE(lock_file_taken(worker_file("r0-h5.lock")));
  EXPECT_FALSE(host_lock_taken(host_prefix_, {0, 5}));
  EXPECT_EQ(read(worker_file("r0-h5.mark")), mark_before);
  EXPECT_EQ(reg->renew(g.value(), kStart + seconds(20)).code(), Code::kLeaseLost);
  EXPECT_EQ(reg->release(g.value(), kStart + seconds(20)).code(), Code::kLeaseLost);
  ::close(fd);

  // The successor waits out the renewed mark, the last thing recorded.
  clock_.set_auto_advance(false);
  clock_.set_wall(kStart + seconds(10));
  Result<LeaseGrant> next = reg->acquire(request(0, 5, kStart + seconds(18)));
  ASSERT_TRUE(next.is_ok()) << next.status().to_string();
  EXPECT_EQ(next->previous_high_water, kStart + seconds(10));
}

TEST_F(FileRegistryTest, AReleaseThatFindsTheMarkDamagedStillFreesTheId) {
  auto reg = registry();
  Result<LeaseGrant> g = reg->acquire(request(0, 6, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  write(worker_file("r0-h6.mark"), "damaged");
  EXPECT_EQ(reg->release(g.value(), kStart + seconds(1)).code(), Code::kDataLoss);
  EXPECT_FALSE(lock_file_taken(worker_file("r0-h6.lock")));
  EXPECT_FALSE(host_lock_taken(host_prefix_, {0, 6}));
  EXPECT_EQ(read(worker_file("r0-h6.mark")), "damaged");  // the evidence stays
}

TEST_F(FileRegistryTest, DestroyingARegistryFreesEveryIdItStillHolds) {
  auto reg = registry();
  std::vector<LeaseGrant> grants;
  for (int i = 0; i < 3; ++i) {
    Result<LeaseGrant> g = reg->acquire(request(2, std::nullopt, kStart + seconds(8)));
    ASSERT_TRUE(g.is_ok());
    grants.push_back(g.value());
  }
  // One let go already, one fenced but not yet noticed.
  ASSERT_TRUE(reg->release(grants[0], kStart).is_ok());
  ASSERT_TRUE(registry()->fence(grants[1].worker).is_ok());
  const std::string mark_before = read(worker_file("r2-h2.mark"));
  reg.reset();
  for (const LeaseGrant& g : grants) {
    const std::string name = "r2-h" + std::to_string(g.worker.host);
    EXPECT_FALSE(lock_file_taken(worker_file(name + ".lock"))) << name;
    EXPECT_FALSE(host_lock_taken(host_prefix_, g.worker)) << name;
  }
  EXPECT_EQ(read(worker_file("r2-h2.mark")), mark_before);  // nothing recorded

  auto successor = registry();
  clock_.set_wall(kStart + seconds(8));
  for (const LeaseGrant& g : grants) {
    EXPECT_TRUE(successor->acquire(request(2, g.worker.host, kStart + seconds(16))).is_ok())
        << g.worker.host;
  }
}

// ---- Choosing an id; quarantine ----

TEST_F(FileRegistryTest, TakesNeverUsedIdsFirstThenTheOneThatRestedLongest) {
  auto reg = registry();
  std::vector<std::uint32_t> order;
  for (int i = 0; i < 10; ++i) {
    Result<LeaseGrant> g = reg->acquire(request(0, std::nullopt, clock_.wall_now()));
    ASSERT_TRUE(g.is_ok()) << g.status().to_string();
    order.push_back(g->worker.host);
    ASSERT_TRUE(reg->release(g.value(), clock_.wall_now()).is_ok());
    clock_.advance(milliseconds(10));
  }
  EXPECT_EQ(order, (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 0, 1}));
}

TEST_F(FileRegistryTest, AReleasedIdRestsForTheQuarantineBeforeReuse) {
  auto reg = registry(seconds(5));
  Result<LeaseGrant> g = reg->acquire(request(0, 0, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  ASSERT_TRUE(reg->release(g.value(), kStart).is_ok());
  std::optional<WorkerRecord> rec = record_of(*reg, {0, 0});
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->quarantined_until, kStart + seconds(5));

  Result<LeaseGrant> pinned = reg->acquire(request(0, 0, kStart + seconds(8)));
  ASSERT_FALSE(pinned.is_ok());
  EXPECT_EQ(pinned.status().code(), Code::kResourceExhausted);
  Result<LeaseGrant> any = reg->acquire(request(0, std::nullopt, kStart + seconds(8)));
  ASSERT_TRUE(any.is_ok());
  EXPECT_EQ(any->worker.host, 1u);

  clock_.advance(seconds(5) - milliseconds(1));
  EXPECT_FALSE(reg->acquire(request(0, 0, kStart + seconds(8))).is_ok());
  clock_.advance(milliseconds(1));
  EXPECT_TRUE(reg->acquire(request(0, 0, kStart + seconds(13))).is_ok());
}

TEST_F(FileRegistryTest, AnIdWhoseMarkIsAheadRestsUntilTheMarkPlusTheQuarantine) {
  auto reg = registry(seconds(1));
  Result<LeaseGrant> g = reg->acquire(request(0, 6, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  // Released with a last instant ahead of the clock (ids borrowed ahead).
  ASSERT_TRUE(reg->release(g.value(), kStart + seconds(3)).is_ok());
  EXPECT_EQ(record_of(*reg, {0, 6})->quarantined_until, kStart + seconds(4));
  clock_.advance(seconds(4) - milliseconds(1));
  EXPECT_FALSE(reg->acquire(request(0, 6, clock_.wall_now())).is_ok());
  clock_.advance(milliseconds(1));
  EXPECT_TRUE(reg->acquire(request(0, 6, clock_.wall_now())).is_ok());
}

// ---- Fencing ----

TEST_F(FileRegistryTest, FenceRevokesTheLeaseAndFreesTheIdForASuccessor) {
  auto holder = registry();
  auto operator_reg = registry();
  Result<LeaseGrant> g = holder->acquire(request(1, 2, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  clock_.advance(seconds(1));
  ASSERT_TRUE(operator_reg->fence({1, 2}).is_ok());
  EXPECT_TRUE(fs::exists(worker_file("r1-h2.fence")));

  // Revoked: no longer shown as held, the fence time recorded, the mark kept.
  std::optional<WorkerRecord> rec = record_of(*operator_reg, {1, 2});
  ASSERT_TRUE(rec);
  EXPECT_FALSE(rec->holder.has_value());
  EXPECT_EQ(rec->released_at, kStart + seconds(1));
  EXPECT_EQ(rec->high_water, kStart + seconds(8));

  Result<bool> lost = holder->wait_lost(g.value(), seconds(10));
  ASSERT_TRUE(lost.is_ok());
  EXPECT_TRUE(lost.value());
  EXPECT_EQ(holder->renew(g.value(), kStart + seconds(20)).code(), Code::kLeaseLost);
  EXPECT_EQ(holder->release(g.value(), kStart + seconds(20)).code(), Code::kLeaseLost);
  // The holder let go of the lock and removed the marker naming it.
  EXPECT_FALSE(fs::exists(worker_file("r1-h2.fence")));
  EXPECT_EQ(record_of(*operator_reg, {1, 2})->high_water, kStart + seconds(8));

  // A successor takes the id once its mark has passed, and is told the mark.
  clock_.set_wall(kStart + seconds(8));
  Result<LeaseGrant> next = operator_reg->acquire(request(1, 2, kStart + seconds(16)));
  ASSERT_TRUE(next.is_ok()) << next.status().to_string();
  EXPECT_EQ(next->previous_high_water, kStart + seconds(8));
}

TEST_F(FileRegistryTest, RenewAfterAFenceFailsEvenBeforeTheHolderLooksForIt) {
  auto holder = registry();
  auto operator_reg = registry();
  Result<LeaseGrant> g = holder->acquire(request(0, 0, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  ASSERT_TRUE(operator_reg->fence({0, 0}).is_ok());
  EXPECT_EQ(holder->renew(g.value(), kStart + seconds(30)).code(), Code::kLeaseLost);
  // The fenced holder could not move the mark.
  EXPECT_EQ(record_of(*operator_reg, {0, 0})->high_water, kStart + seconds(8));
}

TEST_F(FileRegistryTest, FencingAnIdNoOneHoldsIsNotFound) {
  auto reg = registry();
  EXPECT_EQ(reg->fence({0, 3}).code(), Code::kNotFound);
  Result<LeaseGrant> g = reg->acquire(request(0, 3, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  ASSERT_TRUE(reg->release(g.value(), kStart).is_ok());
  EXPECT_EQ(reg->fence({0, 3}).code(), Code::kNotFound);
}

TEST_F(FileRegistryTest, FencingTwiceBeforeTheHolderNoticesIsNotFound) {
  auto holder = registry();
  auto operator_reg = registry();
  ASSERT_TRUE(holder->acquire(request(0, 1, kStart + seconds(8))).is_ok());
  ASSERT_TRUE(operator_reg->fence({0, 1}).is_ok());
  const Status again = operator_reg->fence({0, 1});
  EXPECT_EQ(again.code(), Code::kNotFound);
  EXPECT_NE(again.message().find("already fenced"), std::string::npos) << again.message();
}

TEST_F(FileRegistryTest, WaitLostTimesOutWhileTheLeaseIsHeld) {
  auto reg = registry();
  Result<LeaseGrant> g = reg->acquire(request(0, 0, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  clock_.set_auto_advance(true);
  const MonoTime before = clock_.mono_now();
  const std::uint64_t pauses_before = clock_.pauses();
  Result<bool> lost = reg->wait_lost(g.value(), milliseconds(200));
  ASSERT_TRUE(lost.is_ok());
  EXPECT_FALSE(lost.value());
  EXPECT_GE(clock_.mono_now() - before, milliseconds(200));
  // It waited through the clock, at the poll interval (20 ms), not spinning.
  EXPECT_GE(clock_.pauses() - pauses_before, 10u);
  EXPECT_LE(clock_.pauses() - pauses_before, 11u);
  EXPECT_TRUE(reg->renew(g.value(), kStart + seconds(9)).is_ok());
}

TEST_F(FileRegistryTest, WaitLostReturnsSoonAfterAFenceFromAnotherThread) {
  auto holder = registry(Duration::zero(), &system_clock());
  auto operator_reg = registry(Duration::zero(), &system_clock());
  const WallTime now = system_clock().wall_now();
  Result<LeaseGrant> g = holder->acquire(request(0, 7, now + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  std::atomic<bool> returned{false};
  std::chrono::steady_clock::time_point returned_at;
  Result<bool> lost = false;
  std::thread waiter([&] {
    lost = holder->wait_lost(g.value(), seconds(30));
    returned_at = std::chrono::steady_clock::now();
    returned.store(true);
  });
  // Not lost before the fence: wait_lost is still waiting.
  EXPECT_FALSE(returned.load());
  const auto fenced_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(operator_reg->fence({0, 7}).is_ok());
  waiter.join();
  ASSERT_TRUE(lost.is_ok());
  EXPECT_TRUE(lost.value());
  // One poll interval is 20 ms; the target is 100 ms. Generous for a busy host.
  const auto took = std::chrono::duration_cast<milliseconds>(returned_at - fenced_at);
  EXPECT_LT(took, milliseconds(500)) << took.count() << " ms";
  RecordProperty("fence_to_lost_ms", static_cast<int>(took.count()));
}

// ---- Corrupt or tampered state ----

TEST_F(FileRegistryTest, ACorruptMarkIsDataLossNeverAFreshId) {
  auto reg = registry();
  ASSERT_TRUE(fs::create_directories(dir_ + "/workers") || fs::exists(dir_ + "/workers"));
  const std::string mark = worker_file("r0-h0.mark");
  write(mark, "snowid-mark 1 high_water=12x released_at=-\n");

  Result<LeaseGrant> pinned = reg->acquire(request(0, 0, kStart + seconds(8)));
  ASSERT_FALSE(pinned.is_ok());
  EXPECT_EQ(pinned.status().code(), Code::kDataLoss);
  EXPECT_NE(pinned.status().message().find(mark), std::string::npos) << pinned.status().message();
  Result<std::vector<WorkerRecord>> list = reg->list(0);
  ASSERT_FALSE(list.is_ok());
  EXPECT_EQ(list.status().code(), Code::kDataLoss);

  // Any-id acquisitions pass it by; once the rest is taken, DATA_LOSS, not a
  // reuse of the id and not a plain "full".
  for (std::uint32_t h = 1; h < 8; ++h) {
    Result<LeaseGrant> g = reg->acquire(request(0, std::nullopt, kStart + seconds(8)));
    ASSERT_TRUE(g.is_ok()) << g.status().to_string();
    EXPECT_EQ(g->worker.host, h);
  }
  Result<LeaseGrant> last = reg->acquire(request(0, std::nullopt, kStart + seconds(8)));
  ASSERT_FALSE(last.is_ok());
  EXPECT_EQ(last.status().code(), Code::kDataLoss);
  // The evidence is left alone.
  EXPECT_EQ(read(mark), "snowid-mark 1 high_water=12x released_at=-\n");
}

TEST_F(FileRegistryTest, EveryKindOfDamagedMarkIsDataLoss) {
  auto reg = registry();
  ASSERT_TRUE(fs::create_directories(dir_ + "/workers") || fs::exists(dir_ + "/workers"));
  const std::vector<std::string> damaged = {
      "",
      "snowid-mark 1 high_water=1 released_at=2",  // no newline: truncated
      "snowid-mark 2 high_water=1 released_at=2\n",
      "snowid-mark 1 high_water=1\n",
      "snowid-mark 1 released_at=1 high_water=2\n",
      "snowid-mark 1 high_water=-1 released_at=-\n",
      "snowid-mark 1 high_water=99999999999999999999 released_at=-\n",
      std::string("snowid-mark 1 high_water=1\0 released_at=-\n", 42),
  };
  for (const std::string& text : damaged) {
    write(worker_file("r2-h0.mark"), text);
    EXPECT_EQ(reg->acquire(request(2, 0, kStart)).status().code(), Code::kDataLoss)
        << "mark \"" << text << "\"";
  }
}

TEST_F(FileRegistryTest, AnIdWhoseMarkLockStaysTakenIsPassedByNotWaitedForForever) {
  auto reg = registry();
  // As a process stopped in the middle of changing r0-h0's mark would.
  ASSERT_TRUE(fs::create_directories(dir_ + "/workers") || fs::exists(dir_ + "/workers"));
  const int fd = ::open(worker_file("r0-h0.mark-lock").c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  clock_.set_auto_advance(true);  // the 2 s wait passes on the simulated clock

  Result<LeaseGrant> any = reg->acquire(request(0, std::nullopt, kStart + seconds(8)));
  ASSERT_TRUE(any.is_ok()) << any.status().to_string();
  EXPECT_EQ(any->worker.host, 1u);
  Result<LeaseGrant> pinned = reg->acquire(request(0, 0, kStart + seconds(8)));
  ASSERT_FALSE(pinned.is_ok());
  EXPECT_EQ(pinned.status().code(), Code::kUnavailable);
  EXPECT_NE(pinned.status().message().find("r0-h0.mark-lock"), std::string::npos)
      << pinned.status().message();
  EXPECT_EQ(reg->fence({0, 0}).code(), Code::kUnavailable);

  ::close(fd);
  EXPECT_TRUE(reg->acquire(request(0, 0, clock_.wall_now() + seconds(8))).is_ok());
}

TEST_F(FileRegistryTest, ALockFileRemovedUnderTheHolderVoidsItsLease) {
  auto reg = registry();
  Result<LeaseGrant> g = reg->acquire(request(0, 0, kStart + seconds(8)));
  ASSERT_TRUE(g.is_ok());
  ASSERT_EQ(::unlink(worker_file("r0-h0.lock").c_str()), 0);
  EXPECT_EQ(reg->renew(g.value(), kStart + seconds(9)).code(), Code::kLeaseLost);
  Result<bool> lost = reg->wait_lost(g.value(), milliseconds(1));
  ASSERT_TRUE(lost.is_ok());
  EXPECT_TRUE(lost.value());
}

// ---- Listing ----

TEST_F(FileRegistryTest, ListShowsHoldersMarksAndQuarantineOfOneRegionOrAll) {
  auto reg = registry(seconds(10));
  EXPECT_TRUE(reg->list(std::nullopt).value().empty());
  LeaseRequest held = request(1, 4, kStart + seconds(8));
  held.holder = {"build-7", 31337, kStart - seconds(5), "10.0.0.7:7000"};
  ASSERT_TRUE(reg->acquire(held).is_ok());
  Result<LeaseGrant> released = reg->acquire(request(1, 5, kStart + seconds(8)));
  ASSERT_TRUE(released.is_ok());
  clock_.advance(seconds(2));
  ASSERT_TRUE(reg->release(released.value(), kStart + seconds(1)).is_ok());
  ASSERT_TRUE(reg->acquire(request(3, 0, kStart + seconds(10))).is_ok());

  Result<std::vector<WorkerRecord>> region1 = reg->list(1);
  ASSERT_TRUE(region1.is_ok()) << region1.status().to_string();
  ASSERT_EQ(region1->size(), 2u);
  const WorkerRecord& a = region1.value()[0];
  EXPECT_EQ(a.worker, (WorkerId{1, 4}));
  ASSERT_TRUE(a.holder.has_value());
  EXPECT_EQ(a.holder->host, "build-7");
  EXPECT_EQ(a.holder->pid, 31337);
  EXPECT_EQ(a.holder->started, kStart - seconds(5));
  EXPECT_EQ(a.holder->address, "10.0.0.7:7000");
  EXPECT_EQ(a.high_water, kStart + seconds(8));
  EXPECT_FALSE(a.released_at.has_value());
  EXPECT_FALSE(a.quarantined_until.has_value());
  EXPECT_FALSE(a.ttl_left.has_value());  // a lock lives as long as its process

  const WorkerRecord& b = region1.value()[1];
  EXPECT_EQ(b.worker, (WorkerId{1, 5}));
  EXPECT_FALSE(b.holder.has_value());
  EXPECT_EQ(b.high_water, kStart + seconds(1));
  EXPECT_EQ(b.released_at, kStart + seconds(2));
  EXPECT_EQ(b.quarantined_until, kStart + seconds(12));

  Result<std::vector<WorkerRecord>> all = reg->list(std::nullopt);
  ASSERT_TRUE(all.is_ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ(all.value()[2].worker, (WorkerId{3, 0}));
  EXPECT_TRUE(reg->list(2).value().empty());
}

TEST_F(FileRegistryTest, HolderTextStaysOnOneLineWhateverTheCallerPassed) {
  auto reg = registry();
  LeaseRequest r = request(0, 0, kStart + seconds(8));
  r.holder.host = "evil\nhost=forged";
  r.holder.address = "a\rb";
  ASSERT_TRUE(reg->acquire(r).is_ok());
  std::optional<WorkerRecord> rec = record_of(*reg, {0, 0});
  ASSERT_TRUE(rec && rec->holder);
  EXPECT_EQ(rec->holder->host, "evil?host=forged");
  EXPECT_EQ(rec->holder->address, "a?b");
}

}  // namespace
}  // namespace snowid
