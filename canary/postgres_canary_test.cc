// The uniqueness canary against a real PostgreSQL (scripts/pg-scratch): each
// test in a schema of its own on the build's shared server, and the outage
// tests on a server of their own, stopped with SIGSTOP or shut down.
#include "snowid/postgres_canary.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "snowid/generator.h"
#include "snowid/time.h"
#include "testing/postgres_server.h"

namespace snowid {
namespace {

using namespace std::chrono_literals;
using sequences::testing::PostgresServer;
using sequences::testing::shared_postgres_server;

// Rows of a query as text, for the assertions.
std::vector<std::vector<std::string>> rows(const std::string& conninfo, const std::string& sql) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  std::vector<std::vector<std::string>> out;
  PGresult* res = PQexec(conn, sql.c_str());
  EXPECT_EQ(PQresultStatus(res), PGRES_TUPLES_OK) << sql << ": " << PQerrorMessage(conn);
  for (int r = 0; r < PQntuples(res); ++r) {
    std::vector<std::string> row;
    for (int c = 0; c < PQnfields(res); ++c) {
      row.emplace_back(PQgetisnull(res, r, c) ? "NULL" : PQgetvalue(res, r, c));
    }
    out.push_back(std::move(row));
  }
  PQclear(res);
  PQfinish(conn);
  return out;
}

std::int64_t count(const std::string& conninfo, const std::string& sql) {
  const auto r = rows(conninfo, sql);
  return r.empty() ? -1 : std::stoll(r[0][0]);
}

std::string fresh_schema() {
  Result<PostgresServer*> server = shared_postgres_server();
  EXPECT_TRUE(server.is_ok()) << server.status().message();
  if (!server.is_ok()) return "";
  Result<std::string> conninfo = server.value()->fresh_schema();
  EXPECT_TRUE(conninfo.is_ok()) << conninfo.status().message();
  return conninfo.is_ok() ? conninfo.value() : "";
}

CanaryOptions options_for(const std::string& conninfo, const std::string& host) {
  CanaryOptions o;
  o.conninfo = conninfo;
  o.sample_every = 1;
  o.host = host;
  o.holder = host + " pid " + std::to_string(::getpid());
  o.connect_timeout = 2s;
  o.statement_timeout = 2s;
  o.idle_wait = 5ms;
  return o;
}

std::shared_ptr<PostgresCanary> start(CanaryOptions o) {
  Result<std::shared_ptr<PostgresCanary>> c = PostgresCanary::start(system_clock(), std::move(o));
  EXPECT_TRUE(c.is_ok()) << c.status().message();
  return c.is_ok() ? c.value() : nullptr;
}

// Waits until the canary is connected: its tables exist, and in the outage
// tests its backend is among those FrozenServer stops (one connecting while
// the freeze is set up would escape it).
bool connected(const PostgresCanary& canary) {
  for (int i = 0; i < 3000; ++i) {
    if (canary.stats().store_up) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

std::unique_ptr<Generator> generator(WorkerId worker, std::shared_ptr<IssueObserver> observer) {
  GeneratorOptions o;
  o.worker = worker;
  o.observer = std::move(observer);
  Result<std::unique_ptr<Generator>> g = Generator::create(system_clock(), std::move(o));
  EXPECT_TRUE(g.is_ok()) << g.status().message();
  return g.is_ok() ? std::move(g).value() : nullptr;
}

TEST(PostgresCanary, StoresEveryIssuedIdWithItsWorkerAndHost) {
  const std::string db = fresh_schema();
  auto canary = start(options_for(db, "host-a"));
  ASSERT_NE(canary, nullptr);
  auto gen = generator(WorkerId{2, 17}, canary);
  ASSERT_NE(gen, nullptr);
  std::set<std::uint64_t> issued;
  for (int i = 0; i < 500; ++i) {
    const IdResult r = gen->next();
    ASSERT_TRUE(r.ok());
    issued.insert(r.id);
  }
  const IdBatch b = gen->reserve(300);
  ASSERT_TRUE(b.ok());
  for (std::uint32_t i = 0; i < b.count; ++i) issued.insert(b.first + i);
  ASSERT_TRUE(canary->flush(30s));

  const auto stored =
      rows(db, "SELECT id, region, worker_host, host, holder FROM snowid_canary_ids");
  ASSERT_EQ(stored.size(), issued.size());
  for (const auto& row : stored) {
    EXPECT_TRUE(issued.contains(std::stoull(row[0]))) << row[0];
    EXPECT_EQ(row[1], "2");
    EXPECT_EQ(row[2], "17");
    EXPECT_EQ(row[3], "host-a");
    EXPECT_EQ(row[4], "host-a pid " + std::to_string(::getpid()));
  }
  const CanaryStats s = canary->stats();
  EXPECT_EQ(s.sampled, issued.size());
  EXPECT_EQ(s.stored, issued.size());
  EXPECT_EQ(s.violations, 0u);
  EXPECT_EQ(s.dropped_full + s.dropped_unstored, 0u);
  EXPECT_TRUE(s.store_up);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_violations"), 0);
}

TEST(PostgresCanary, SamplesExactlyTheIdsTheRuleChooses) {
  const std::string db = fresh_schema();
  CanaryOptions o = options_for(db, "host-a");
  o.sample_every = 7;
  auto canary = start(o);
  ASSERT_NE(canary, nullptr);
  auto gen = generator(WorkerId{0, 3}, canary);
  std::set<std::uint64_t> chosen;
  std::uint64_t total = 0;
  for (int i = 0; i < 20; ++i) {
    const IdBatch b = gen->reserve(1000);
    ASSERT_TRUE(b.ok());
    for (std::uint32_t k = 0; k < b.count; ++k) {
      if (canary_samples(b.first + k, 7)) chosen.insert(b.first + k);
    }
    total += b.count;
  }
  ASSERT_TRUE(canary->flush(30s));
  std::set<std::uint64_t> stored;
  for (const auto& row : rows(db, "SELECT id FROM snowid_canary_ids")) {
    stored.insert(std::stoull(row[0]));
  }
  EXPECT_EQ(stored, chosen);
  // About 1 in 7 of consecutive ids (whose sequence fields count up).
  EXPECT_GT(chosen.size(), total / 7 * 8 / 10);
  EXPECT_LT(chosen.size(), total / 7 * 12 / 10);
}

TEST(PostgresCanary, TheRuleSamplesEveryIdAtOneAndAboutOneInNOtherwise) {
  std::uint64_t hits = 0;
  for (std::uint64_t id = 1ULL << 40; id < (1ULL << 40) + 1000000; ++id) {
    EXPECT_TRUE(canary_samples(id, 1));
    hits += canary_samples(id, 1000) ? 1 : 0;
  }
  EXPECT_GT(hits, 900u);
  EXPECT_LT(hits, 1100u);
  // Pinned (docs/canary.md lists them for ports of the rule): the first ids
  // from 2^40 that 1 in 1,000 keeps, and splitmix64's known first output
  // for 0.
  std::vector<std::uint64_t> first;
  for (std::uint64_t id = 1ULL << 40; first.size() < 6; ++id) {
    if (canary_samples(id, 1000)) first.push_back(id);
  }
  EXPECT_EQ(first, (std::vector<std::uint64_t>{1099511628492, 1099511629969, 1099511633025,
                                               1099511633432, 1099511633548, 1099511634320}));
  // 0xe220a8397b1dcdaf is above half of 2^64: kept by 1 in 1 only. 558 is
  // the first id 1 in 1,000 keeps.
  EXPECT_TRUE(canary_samples(0, 1));
  EXPECT_FALSE(canary_samples(0, 2));
  EXPECT_TRUE(canary_samples(558, 1000));
  for (std::uint64_t id = 0; id < 558; ++id) EXPECT_FALSE(canary_samples(id, 1000)) << id;
}

TEST(PostgresCanary, AnIdStoredByTwoHoldersIsRecordedWithBoth) {
  const std::string db = fresh_schema();
  std::mutex mu;
  std::vector<CanaryViolation> told;
  CanaryOptions oa = options_for(db, "host-a");
  CanaryOptions ob = options_for(db, "host-b");
  ob.on_violation = [&](const CanaryViolation& v) {
    std::lock_guard<std::mutex> lock(mu);
    told.push_back(v);
  };
  auto a = start(oa);
  auto b = start(ob);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // Two holders of worker 1/5 issuing the same ids, as two hosts sharing a
  // worker id would.
  a->issued(1000000, 10, WorkerId{1, 5});
  ASSERT_TRUE(a->flush(30s));
  b->issued(1000005, 10, WorkerId{1, 5});
  ASSERT_TRUE(b->flush(30s));

  EXPECT_EQ(a->stats().violations, 0u);
  EXPECT_EQ(b->stats().violations, 5u);
  EXPECT_EQ(b->stats().stored, 5u);
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(told.size(), 5u);
    for (const CanaryViolation& v : told) {
      EXPECT_GE(v.id, 1000005u);
      EXPECT_LT(v.id, 1000010u);
      EXPECT_EQ(v.first.host, "host-a");
      EXPECT_EQ(v.second.host, "host-b");
      EXPECT_EQ(v.first.worker, (WorkerId{1, 5}));
      EXPECT_TRUE(v.first.stored_at.has_value());
    }
  }
  const auto recorded = rows(db,
                             "SELECT id, first_host, first_region, first_worker_host,"
                             " second_host, second_holder FROM snowid_canary_violations"
                             " ORDER BY id");
  ASSERT_EQ(recorded.size(), 5u);
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    EXPECT_EQ(recorded[i][0], std::to_string(1000005 + i));
    EXPECT_EQ(recorded[i][1], "host-a");
    EXPECT_EQ(recorded[i][2], "1");
    EXPECT_EQ(recorded[i][3], "5");
    EXPECT_EQ(recorded[i][4], "host-b");
    EXPECT_EQ(recorded[i][5], ob.holder);
  }
}

TEST(PostgresCanary, AnIdIssuedTwiceWithinOneBatchIsCaught) {
  const std::string db = fresh_schema();
  CanaryOptions o = options_for(db, "host-a");
  o.idle_wait = std::chrono::seconds(1);  // both reach the queue before the writer looks
  auto canary = start(o);
  ASSERT_NE(canary, nullptr);
  ASSERT_TRUE(connected(*canary));  // tables made; the writer now idles for 1 s
  canary->issued(77, 1, WorkerId{0, 1});
  canary->issued(77, 1, WorkerId{0, 2});
  ASSERT_TRUE(canary->flush(30s));
  EXPECT_EQ(canary->stats().stored, 1u);
  EXPECT_EQ(canary->stats().violations, 1u);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_violations WHERE id = 77"), 1);
}

TEST(PostgresCanary, BadOptionsAreRefusedBeforeAnythingStarts) {
  CanaryOptions o = options_for("postgresql://snowid@127.0.0.1:1/snowid", "h");
  auto refused = [](CanaryOptions bad) {
    return PostgresCanary::start(system_clock(), std::move(bad)).status().code();
  };
  CanaryOptions bad = o;
  bad.conninfo = "";
  EXPECT_EQ(refused(bad), Code::kInvalidArgument);
  bad = o;
  bad.conninfo = "not a conninfo at all =";
  EXPECT_EQ(refused(bad), Code::kInvalidArgument);
  bad = o;
  bad.sample_every = 0;
  EXPECT_EQ(refused(bad), Code::kInvalidArgument);
  bad = o;
  bad.queue_capacity = 8;
  EXPECT_EQ(refused(bad), Code::kInvalidArgument);
  bad = o;
  bad.batch_max = 0;
  EXPECT_EQ(refused(bad), Code::kInvalidArgument);
  bad = o;
  bad.statement_timeout = Duration::zero();
  EXPECT_EQ(refused(bad), Code::kInvalidArgument);
}

// The server's postmaster and its backends, stopped with SIGSTOP until
// destroyed: a database that takes connections into its backlog and
// statements into its socket, and answers nothing.
class FrozenServer {
 public:
  explicit FrozenServer(const PostgresServer& server) {
    std::ifstream pidfile(server.dir() + "/data/postmaster.pid");
    pid_t postmaster = 0;
    pidfile >> postmaster;
    EXPECT_GT(postmaster, 0);
    pids_.push_back(postmaster);
    for (const auto& row : rows(server.conninfo(),
                                "SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()")) {
      pids_.push_back(static_cast<pid_t>(std::stol(row[0])));
    }
    for (pid_t p : pids_) ::kill(p, SIGSTOP);
  }
  ~FrozenServer() {
    for (pid_t p : pids_) ::kill(p, SIGCONT);
  }
  FrozenServer(const FrozenServer&) = delete;
  FrozenServer& operator=(const FrozenServer&) = delete;

 private:
  std::vector<pid_t> pids_;
};

Result<std::unique_ptr<PostgresServer>> own_server() { return PostgresServer::launch(); }

TEST(PostgresCanary, AStoppedServerNeverHoldsUpIssuingAndWhatDoesNotFitIsCountedDropped) {
  auto server = own_server();
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  const std::string db = server.value()->conninfo();
  CanaryOptions o = options_for(db, "host-a");
  o.queue_capacity = 1024;
  o.batch_max = 256;
  auto canary = start(o);
  ASSERT_NE(canary, nullptr);
  ASSERT_TRUE(connected(*canary));
  auto gen = generator(WorkerId{0, 9}, canary);
  std::uint64_t issued = 0;
  {
    FrozenServer frozen(*server.value());
    // Were a sample ever to wait for the database, this would hang here.
    for (int i = 0; i < 200; ++i) {
      const IdBatch b = gen->reserve(1000);
      ASSERT_TRUE(b.ok());
      issued += b.count;
    }
    const CanaryStats s = canary->stats();
    EXPECT_EQ(s.sampled, issued);
    // At most the ring and the writer's one batch are held.
    EXPECT_GE(s.dropped_full, issued - 1024 - 256);
  }
  // Back: the writer carries on by itself with what it held.
  ASSERT_TRUE(canary->flush(60s));
  const CanaryStats s = canary->stats();
  EXPECT_TRUE(s.store_up);
  EXPECT_EQ(s.violations, 0u);
  EXPECT_EQ(s.stored + s.dropped_full + s.dropped_unstored, s.sampled);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_ids"),
            static_cast<std::int64_t>(s.stored));
  // New samples are stored again.
  const std::uint64_t before = s.stored;
  ASSERT_TRUE(gen->reserve(50).ok());
  ASSERT_TRUE(canary->flush(30s));
  EXPECT_EQ(canary->stats().stored, before + 50);
}

TEST(PostgresCanary, ADatabaseDownAtStartIsReachedWhenItComesUp) {
  auto server = own_server();
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  const std::string db = server.value()->conninfo();
  ASSERT_TRUE(server.value()->stop().is_ok());
  std::mutex mu;
  std::vector<Status> changes;
  CanaryOptions o = options_for(db, "host-a");
  o.on_store_change = [&](const Status& s) {
    std::lock_guard<std::mutex> lock(mu);
    changes.push_back(s);
  };
  auto canary = start(o);
  ASSERT_NE(canary, nullptr);
  canary->issued(5000, 100, WorkerId{3, 1});
  EXPECT_FALSE(canary->flush(1s));
  EXPECT_FALSE(canary->stats().store_up);
  EXPECT_GT(canary->stats().store_failures, 0u);
  ASSERT_TRUE(server.value()->start().is_ok());
  ASSERT_TRUE(canary->flush(60s));
  EXPECT_EQ(canary->stats().stored, 100u);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_ids"), 100);
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_GE(changes.size(), 2u);
  EXPECT_FALSE(changes.front().is_ok());
  EXPECT_TRUE(changes.back().is_ok());
}

TEST(PostgresCanary, CloseGivesUpOnAServerThatDoesNotAnswerAndCountsWhatWasLeft) {
  auto server = own_server();
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  CanaryOptions o = options_for(server.value()->conninfo(), "host-a");
  o.statement_timeout = 60s;  // the server's own timeout would not end it sooner
  auto canary = start(o);
  ASSERT_NE(canary, nullptr);
  ASSERT_TRUE(connected(*canary));
  FrozenServer frozen(*server.value());
  canary->issued(9000, 500, WorkerId{0, 1});
  // The writer is now waiting on the frozen server (up to 62 s by its
  // budget); close() ends that wait after its own timeout. Were it to wait
  // out the budget, this would take a minute.
  const auto began = std::chrono::steady_clock::now();
  canary->close(200ms);
  EXPECT_LT(std::chrono::steady_clock::now() - began, 30s);
  const CanaryStats s = canary->stats();
  EXPECT_EQ(s.sampled, 500u);
  EXPECT_EQ(s.stored, 0u);
  EXPECT_EQ(s.dropped_unstored, 500u);
  // Closed: later samples are dropped, never queued.
  canary->issued(9500, 1, WorkerId{0, 1});
  EXPECT_EQ(canary->stats().dropped_unstored, 501u);
}

// A TCP proxy in front of PostgreSQL that loses the answer to the first
// INSERT: it forwards the statement, then, instead of the server's
// CommandComplete ("INSERT 0 n"), closes both sides. The insert is
// committed; the client sees a broken connection. It reads the server's
// messages by their framing (a type byte and a 4-byte length), so the client
// must not ask for SSL or GSS encryption (whose answer is one bare byte).
class AnswerLosingProxy {
 public:
  explicit AnswerLosingProxy(int upstream_port) : upstream_port_(upstream_port) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(listener_, 8), 0);
    socklen_t len = sizeof a;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~AnswerLosingProxy() {
    stop_ = true;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    acceptor_.join();
    for (std::thread& t : pumps_) t.join();
  }
  int port() const { return port_; }
  int cuts() const { return cuts_.load(); }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) continue;
      const int server = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<std::uint16_t>(upstream_port_));
      if (::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(client);
        ::close(server);
        continue;
      }
      pumps_.emplace_back([this, client, server] { pump(client, server); });
    }
  }

  // Both directions on one thread; returns when either side closes.
  void pump(int client, int server) {
    std::string from_server;  // bytes of the server not yet forwarded
    char buf[65536];
    for (bool open = true; open && !stop_;) {
      pollfd p[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      if (::poll(p, 2, 50) <= 0) continue;
      if (p[0].revents != 0) {
        const ssize_t n = ::read(client, buf, sizeof buf);
        open = n > 0 && ::write(server, buf, static_cast<std::size_t>(n)) == n;
      }
      if (open && p[1].revents != 0) {
        const ssize_t n = ::read(server, buf, sizeof buf);
        if (n <= 0) break;
        from_server.append(buf, static_cast<std::size_t>(n));
        // Forward whole messages; the first INSERT's completion is lost.
        std::size_t sent = 0;
        while (from_server.size() - sent >= 5) {
          std::uint32_t len = 0;
          std::memcpy(&len, from_server.data() + sent + 1, 4);
          const std::size_t whole = 1 + ntohl(len);
          if (from_server.size() - sent < whole) break;
          if (from_server[sent] == 'C' && !cut_done_.load() &&
              std::string_view(from_server).substr(sent + 5, 6) == "INSERT" &&
              from_server.find("INSERT 0", sent + 5) == sent + 5) {
            cut_done_ = true;
            ++cuts_;
            open = false;
            break;
          }
          sent += whole;
        }
        if (sent > 0 && ::write(client, from_server.data(), sent) != static_cast<ssize_t>(sent)) {
          open = false;
        }
        from_server.erase(0, sent);
      }
    }
    ::close(client);
    ::close(server);
  }

  int upstream_port_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> cut_done_{false};
  std::atomic<int> cuts_{0};
  std::thread acceptor_;
  std::vector<std::thread> pumps_;  // the acceptor's only
};

// A batch whose INSERT committed but whose answer was lost with the
// connection is sent again with its batch number: its own rows are not
// taken for duplicates, and a real duplicate within it still is.
TEST(PostgresCanary, ABatchSentAgainAfterItsAnswerWasLostIsNoDuplicate) {
  const std::string db = fresh_schema();
  ASSERT_FALSE(db.empty());
  {
    auto owner = start(options_for(db, "admin"));  // the tables, before the proxy
    ASSERT_NE(owner, nullptr);
    ASSERT_TRUE(connected(*owner));
  }
  const std::size_t at = db.find("127.0.0.1:") + 10;
  const int pg_port = std::stoi(db.substr(at, db.find('/', at) - at));
  AnswerLosingProxy proxy(pg_port);
  std::string through = db;
  through.replace(at, db.find('/', at) - at, std::to_string(proxy.port()));
  through += "&sslmode=disable&gssencmode=disable";
  CanaryOptions o = options_for(through, "host-p");
  o.idle_wait = std::chrono::seconds(1);  // one batch for all of them
  auto canary = start(o);
  ASSERT_NE(canary, nullptr);
  ASSERT_TRUE(connected(*canary));
  canary->issued(5000, 100, WorkerId{1, 3});
  canary->issued(5000, 1, WorkerId{1, 3});  // issued twice: a real duplicate
  ASSERT_TRUE(canary->flush(60s));
  EXPECT_EQ(proxy.cuts(), 1);
  const CanaryStats s = canary->stats();
  EXPECT_EQ(s.stored, 100u);
  EXPECT_EQ(s.violations, 1u);
  EXPECT_EQ(s.dropped_full + s.dropped_unstored, 0u);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_ids WHERE host = 'host-p'"), 100);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_violations WHERE id = 5000"), 1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_violations WHERE id <> 5000"), 0);
}

// A connection attempt to a server that accepts but never answers (its
// postmaster stopped) is given up by close(), not waited out.
TEST(PostgresCanary, CloseEndsAConnectionAttemptThatGetsNoAnswer) {
  auto server = own_server();
  ASSERT_TRUE(server.is_ok()) << server.status().message();
  CanaryOptions o = options_for(server.value()->conninfo(), "host-a");
  o.connect_timeout = 60s;
  std::shared_ptr<PostgresCanary> canary;
  {
    FrozenServer frozen(*server.value());
    canary = start(o);
    ASSERT_NE(canary, nullptr);
    canary->issued(1, 10, WorkerId{0, 1});
    std::this_thread::sleep_for(300ms);  // the writer is in its connection attempt
    const auto began = std::chrono::steady_clock::now();
    canary->close(100ms);
    EXPECT_LT(std::chrono::steady_clock::now() - began, 30s);
  }
  const CanaryStats s = canary->stats();
  EXPECT_FALSE(s.store_up);
  EXPECT_EQ(s.dropped_unstored, 10u);
}

// Tables made by an administrator, and a role that may only insert and
// read: the canary stores without creating anything.
TEST(PostgresCanary, ARoleThatMayNotCreateStoresIntoTablesMadeForIt) {
  const std::string db = fresh_schema();
  {
    auto owner = start(options_for(db, "admin"));  // creates the tables
    ASSERT_NE(owner, nullptr);
    ASSERT_TRUE(connected(*owner));
  }
  const auto schema = rows(db, "SELECT current_schema()");
  ASSERT_EQ(schema.size(), 1u);
  const std::string role = "canary_writer_" + std::to_string(::getpid());
  for (const std::string& sql :
       {"CREATE ROLE " + role + " LOGIN", "GRANT USAGE ON SCHEMA " + schema[0][0] + " TO " + role,
        "GRANT SELECT, INSERT, DELETE ON snowid_canary_ids, snowid_canary_violations TO " + role,
        "REVOKE CREATE ON SCHEMA " + schema[0][0] + " FROM PUBLIC"}) {
    PGconn* conn = PQconnectdb(db.c_str());
    PGresult* res = PQexec(conn, sql.c_str());
    EXPECT_EQ(PQresultStatus(res), PGRES_COMMAND_OK) << sql << ": " << PQerrorMessage(conn);
    PQclear(res);
    PQfinish(conn);
  }
  std::string as_role = db;
  as_role.replace(as_role.find("snowid@"), 7, role + "@");
  auto canary = start(options_for(as_role, "host-r"));
  ASSERT_NE(canary, nullptr);
  canary->issued(4242, 5, WorkerId{1, 2});
  ASSERT_TRUE(canary->flush(30s));
  EXPECT_EQ(canary->stats().stored, 5u);
  EXPECT_EQ(count(db, "SELECT count(*) FROM snowid_canary_ids WHERE host = 'host-r'"), 5);
}

}  // namespace
}  // namespace snowid
