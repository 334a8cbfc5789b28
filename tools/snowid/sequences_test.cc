// Black-box tests of `snowid sequences` (alias `seq`) on SQLite files in
// temporary directories: the rows it prints, the ranges it takes, its JSON,
// its refusals and exit statuses, and where its default store lives.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.h"

namespace snowid::cli::testing {
namespace {

using Env = std::vector<std::pair<std::string, std::optional<std::string>>>;

// `snowid sequences ARGS...` with `env` and SNOWID_SEQUENCES unset unless
// `env` sets it.
CliResult seq(std::vector<std::string> args, Env env = {}) {
  CliRun run;
  run.args = {"sequences"};
  run.args.insert(run.args.end(), args.begin(), args.end());
  run.env.emplace_back("SNOWID_SEQUENCES", std::nullopt);
  run.env.insert(run.env.end(), env.begin(), env.end());
  return run_cli(run);
}

// A store in a fresh directory, and the commands on it.
struct Store {
  TempDir dir;
  std::string path = dir.file("seq.db");
  std::string url = "sqlite:" + path;

  CliResult run(std::vector<std::string> args) const {
    args.push_back("--store");
    args.push_back(url);
    return seq(std::move(args));
  }

  // The JSON output of a command that must succeed.
  nlohmann::json json(std::vector<std::string> args) const {
    args.push_back("--json");
    const CliResult r = run(args);
    EXPECT_EQ(r.exit_code, 0) << ::testing::PrintToString(args) << ": " << r.err;
    EXPECT_EQ(r.err, "");
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out;
    return doc;
  }
};

void expect_one_line_failure(const CliResult& r, int exit_code, const std::string& what) {
  EXPECT_EQ(r.exit_code, exit_code) << what << ": " << r.err;
  EXPECT_EQ(r.out, "") << what;
  EXPECT_TRUE(is_one_line_error(r.err)) << what << ": " << r.err;
}

#ifdef SNOWID_CLI_SEQUENCES

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

bool is_iso8601_utc(const std::string& text) {
  static const std::regex kForm(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)");
  return std::regex_match(text, kForm);
}

// "START END" parsed, or {-1, -1}.
std::pair<std::int64_t, std::int64_t> range_of(const CliResult& r) {
  const std::vector<std::string> lines = lines_of(r.out);
  if (r.exit_code != 0 || lines.size() != 1) return {-1, -1};
  const std::vector<std::string> w = words_of(lines[0]);
  if (w.size() != 2) return {-1, -1};
  return {std::stoll(w[0]), std::stoll(w[1])};
}

// A loopback TCP port that refuses connections for as long as the object
// lives: bound, so nobody else gets it, but not listening.
class RefusingPort {
 public:
  RefusingPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
  }
  ~RefusingPort() { ::close(fd_); }
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;

  int port() const noexcept { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

TEST(Sequences, CreatePrintsTheNewRow) {
  Store s;
  const CliResult r = s.run({"create", "orders", "--start", "100", "--step", "10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(words_of(lines[0]),
            (std::vector<std::string>{"NAME", "NEXT", "STEP", "CREATED", "UPDATED"}));
  const std::vector<std::string> row = words_of(lines[1]);
  ASSERT_EQ(row.size(), 5u) << lines[1];
  EXPECT_EQ(row[0], "orders");
  EXPECT_EQ(row[1], "100");
  EXPECT_EQ(row[2], "10");
  EXPECT_TRUE(is_iso8601_utc(row[3])) << row[3];
  EXPECT_EQ(row[4], row[3]);
}

TEST(Sequences, CreateDefaultsToStartOneAndStepOneThousand) {
  Store s;
  ASSERT_EQ(s.run({"create", "orders"}).exit_code, 0);
  const nlohmann::json row = s.json({"show", "orders"});
  EXPECT_EQ(row["next_value"], "1");
  EXPECT_EQ(row["step"], 1000);
}

TEST(Sequences, ShowJsonHasTheDaemonsShapeWithTheNextValueAsAString) {
  Store s;
  ASSERT_EQ(s.run({"create", "orders", "--start", "5", "--step", "7"}).exit_code, 0);
  const nlohmann::json row = s.json({"show", "orders"});
  ASSERT_TRUE(row.is_object()) << row;
  EXPECT_EQ(row.size(), 5u) << row;
  EXPECT_EQ(row["sequence"], "orders");
  EXPECT_EQ(row["next_value"], "5");
  EXPECT_EQ(row["step"], 7);
  ASSERT_TRUE(row["created"].is_string() && row["updated"].is_string()) << row;
  EXPECT_TRUE(is_iso8601_utc(row["created"].get<std::string>())) << row;
  EXPECT_TRUE(is_iso8601_utc(row["updated"].get<std::string>())) << row;

  const CliResult text = s.run({"show", "orders"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::vector<std::string> lines = lines_of(text.out);
  ASSERT_EQ(lines.size(), 2u) << text.out;
  EXPECT_EQ(words_of(lines[1])[0], "orders");
}

TEST(Sequences, TwoTakesAreAdjacentAndAdvanceTheRow) {
  Store s;
  ASSERT_EQ(s.run({"create", "orders", "--start", "100", "--step", "10"}).exit_code, 0);
  const auto first = range_of(s.run({"take", "orders"}));
  const auto second = range_of(s.run({"take", "orders"}));
  const auto sized = range_of(s.run({"take", "orders", "--size", "5"}));
  EXPECT_EQ(first, std::make_pair(std::int64_t{100}, std::int64_t{110}));
  EXPECT_EQ(second, std::make_pair(std::int64_t{110}, std::int64_t{120}));
  EXPECT_EQ(sized, std::make_pair(std::int64_t{120}, std::int64_t{125}));
  EXPECT_EQ(s.json({"show", "orders"})["next_value"], "125");
}

TEST(Sequences, TakeJsonGivesTheBoundsAsStringsAndTheSize) {
  Store s;
  ASSERT_EQ(s.run({"create", "orders", "--start", "3001"}).exit_code, 0);
  const nlohmann::json r = s.json({"take", "orders"});
  EXPECT_EQ(
      r, nlohmann::json::parse(R"({"sequence":"orders","start":"3001","end":"4001","size":1000})"));
  const nlohmann::json next = s.json({"take", "orders", "--size", "2"});
  EXPECT_EQ(next["start"], "4001");
  EXPECT_EQ(next["end"], "4003");
  EXPECT_EQ(next["size"], 2);
}

TEST(Sequences, ListShowsEverySequenceByName) {
  Store s;
  ASSERT_EQ(s.run({"migrate"}).exit_code, 0);
  const CliResult empty = s.run({"list"});
  ASSERT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_EQ(lines_of(empty.out).size(), 1u) << empty.out;  // the header only
  EXPECT_EQ(s.json({"list"}), nlohmann::json::parse(R"({"sequences":[]})"));

  ASSERT_EQ(s.run({"create", "zeta", "--start", "7"}).exit_code, 0);
  ASSERT_EQ(s.run({"create", "alpha", "--step", "3"}).exit_code, 0);
  ASSERT_EQ(s.run({"take", "alpha"}).exit_code, 0);

  const nlohmann::json doc = s.json({"list"});
  const nlohmann::json& all = doc["sequences"];
  ASSERT_TRUE(all.is_array()) << doc;
  ASSERT_EQ(all.size(), 2u) << doc;
  EXPECT_EQ(all[0]["sequence"], "alpha");
  EXPECT_EQ(all[0]["next_value"], "4");
  EXPECT_EQ(all[0]["step"], 3);
  EXPECT_EQ(all[1]["sequence"], "zeta");
  EXPECT_EQ(all[1]["next_value"], "7");
  EXPECT_EQ(all[1]["step"], 1000);
  for (const nlohmann::json& row : all) {
    EXPECT_TRUE(is_iso8601_utc(row["created"].get<std::string>())) << row;
    EXPECT_TRUE(is_iso8601_utc(row["updated"].get<std::string>())) << row;
  }

  const CliResult text = s.run({"list"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const std::vector<std::string> lines = lines_of(text.out);
  ASSERT_EQ(lines.size(), 3u) << text.out;
  EXPECT_EQ(words_of(lines[1])[0], "alpha");
  EXPECT_EQ(words_of(lines[1])[1], "4");
  EXPECT_EQ(words_of(lines[2])[0], "zeta");
}

TEST(Sequences, CreatingAnExistingNameFailsAndLeavesTheRowAlone) {
  Store s;
  ASSERT_EQ(s.run({"create", "orders", "--start", "50"}).exit_code, 0);
  const CliResult again = s.run({"create", "orders", "--start", "1"});
  expect_one_line_failure(again, 1, "create again");
  EXPECT_NE(again.err.find("ALREADY_EXISTS"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("orders"), std::string::npos) << again.err;
  EXPECT_EQ(s.json({"show", "orders"})["next_value"], "50");
}

TEST(Sequences, UnknownNameNamesTheSequenceAndHowToCreateIt) {
  Store s;
  ASSERT_EQ(s.run({"create", "orders"}).exit_code, 0);
  for (const std::string sub : {"show", "take"}) {
    const CliResult r = s.run({sub, "invoices"});
    expect_one_line_failure(r, 1, sub);
    EXPECT_NE(r.err.find("no sequence \"invoices\""), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("snowid sequences create invoices"), std::string::npos) << r.err;
  }
  // The take made no row.
  EXPECT_EQ(s.json({"list"})["sequences"].size(), 1u);
}

TEST(Sequences, BadNamesAndNumbersExitTwoWithoutTouchingTheStore) {
  Store s;
  const std::vector<std::vector<std::string>> cases = {
      {"create", "two words"},
      {"create", "a/b"},
      {"create", ""},
      {"create", std::string(65, 'a')},
      {"create", "ok", "--start", "-1"},
      {"create", "ok", "--start", "1e3"},
      {"create", "ok", "--start", "9223372036854775807"},
      {"create", "ok", "--step", "0"},
      {"create", "ok", "--step", "1000000001"},
      {"create", "ok", "--step", ""},
      {"show", "bad!"},
      {"take", "bad name"},
      {"take", "ok", "--size", "0"},
      {"take", "ok", "--size", "1000000001"},
      {"take", "ok", "--size", "ten"},
      {"create"},
      {"take"},
      {"show", "a", "b"},
      {"list", "--no-such-flag"},
      {},
  };
  for (const std::vector<std::string>& args : cases) {
    expect_one_line_failure(s.run(args), 2, ::testing::PrintToString(args));
  }
  EXPECT_FALSE(std::filesystem::exists(s.path)) << "a refused command opened the store";
}

TEST(Sequences, TheLongestNameAndTheLargestStartAndStepAreAccepted) {
  Store s;
  const std::string longest(64, 'n');
  const CliResult r =
      s.run({"create", longest, "--start", "9223372036854775806", "--step", "1000000000"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(s.json({"show", longest})["next_value"], "9223372036854775806");
}

TEST(Sequences, ASpentSequenceFailsWithOutOfRangeAndExitOne) {
  Store s;
  ASSERT_EQ(s.run({"create", "last", "--start", "9223372036854775806", "--step", "1"}).exit_code,
            0);
  EXPECT_EQ(range_of(s.run({"take", "last"})),
            std::make_pair(std::int64_t{9223372036854775806}, INT64_MAX));
  const CliResult spent = s.run({"take", "last"});
  expect_one_line_failure(spent, 1, "take from a spent sequence");
  EXPECT_NE(spent.err.find("OUT_OF_RANGE"), std::string::npos) << spent.err;
  // Past 2^53: JSON readers that hold numbers as doubles would round it.
  EXPECT_EQ(s.json({"show", "last"})["next_value"], "9223372036854775807");
}

TEST(Sequences, TakesFromConcurrentProcessesNeverOverlap) {
  Store s;
  ASSERT_EQ(s.run({"create", "orders", "--step", "7"}).exit_code, 0);
  constexpr int kTakers = 6;
  std::vector<std::unique_ptr<CliProcess>> takers;
  for (int i = 0; i < kTakers; ++i) {
    CliRun run;
    run.args = {"seq", "take", "orders", "--store", s.url};
    run.env = {{"SNOWID_SEQUENCES", std::nullopt}};
    takers.push_back(std::make_unique<CliProcess>(run));
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  for (auto& p : takers) {
    const CliResult r = p->finish();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ranges.push_back(range_of(r));
  }
  std::sort(ranges.begin(), ranges.end());
  std::int64_t expected = 1;
  for (const auto& [first, end] : ranges) {
    EXPECT_EQ(first, expected);
    EXPECT_EQ(end, first + 7);
    expected = end;
  }
  EXPECT_EQ(s.json({"show", "orders"})["next_value"], std::to_string(1 + kTakers * 7));
}

TEST(Sequences, MigrateMakesTheSchemaAndIsIdempotent) {
  Store s;
  for (int i = 0; i < 2; ++i) {
    const CliResult r = s.run({"migrate"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, s.url + ": the schema is current\n");
  }
  // SQLite keeps each table's CREATE statement as text in the file.
  const std::string file = s.dir.read("seq.db");
  EXPECT_EQ(file.rfind("SQLite format 3", 0), 0u);
  EXPECT_NE(file.find("snowid_sequences"), std::string::npos);
  EXPECT_NE(file.find("snowid_schema_migrations"), std::string::npos);
  EXPECT_EQ(s.json({"list"})["sequences"].size(), 0u);
}

TEST(Sequences, ReadingAStoreThatDoesNotExistFailsAndLeavesNoFileBehind) {
  Store s;
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"list"}, {"show", "orders"}, {"take", "orders"}}) {
    const CliResult r = s.run(args);
    expect_one_line_failure(r, 1, args[0]);
    EXPECT_NE(r.err.find(s.url + " (--store) does not exist"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(s.path));

  // The default store's state directory is not made either.
  TempDir xdg;
  const CliResult r = seq({"list"}, {{"XDG_STATE_HOME", xdg.path()}});
  expect_one_line_failure(r, 1, "list on the default store");
  EXPECT_NE(r.err.find("sqlite:" + xdg.path() + "/snowid/sequences.db"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--state-dir"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(xdg.path() + "/snowid"));
}

TEST(Sequences, TheAliasSeqRunsTheSameCommands) {
  Store s;
  CliRun run;
  run.args = {"seq", "create", "orders", "--store", s.url};
  run.env = {{"SNOWID_SEQUENCES", std::nullopt}};
  ASSERT_EQ(run_cli(run).exit_code, 0);
  EXPECT_EQ(s.json({"show", "orders"})["sequence"], "orders");
}

TEST(Sequences, TheDefaultStoreIsSequencesDbInTheStateDirectory) {
  TempDir xdg;
  const CliResult made = seq({"create", "orders"}, {{"XDG_STATE_HOME", xdg.path()}});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string expected = xdg.path() + "/snowid/sequences.db";
  EXPECT_TRUE(std::filesystem::exists(expected));
  // The same file as the one named explicitly.
  const CliResult shown = seq({"show", "orders", "--store", "sqlite:" + expected});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;

  // SNOWID_STATE_DIR wins over XDG_STATE_HOME, as for snowidd and snowid next.
  TempDir state;
  const Env both = {{"XDG_STATE_HOME", xdg.path()}, {"SNOWID_STATE_DIR", state.path()}};
  ASSERT_EQ(seq({"create", "invoices"}, both).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(state.file("sequences.db")));
  const CliResult other = seq({"show", "orders"}, both);
  EXPECT_EQ(other.exit_code, 1) << other.err;
  EXPECT_NE(other.err.find("sqlite:" + state.path() + "/sequences.db"), std::string::npos)
      << other.err;

  // --state-dir wins over both.
  TempDir flag;
  ASSERT_EQ(seq({"create", "orders", "--state-dir", flag.path()}, both).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(flag.file("sequences.db")));

  // HOME last; the directory is made as snowidd makes it.
  TempDir home;
  ASSERT_EQ(seq({"create", "orders"}, {{"HOME", home.path()}}).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(home.path() + "/.local/state/snowid/sequences.db"));
}

TEST(Sequences, SnowidSequencesNamesTheStoreAndStoreWinsOverIt) {
  Store from_env;
  Store from_flag;
  const Env env = {{"SNOWID_SEQUENCES", from_env.url}};
  ASSERT_EQ(seq({"create", "env-only"}, env).exit_code, 0);
  ASSERT_EQ(seq({"create", "flag-only", "--store", from_flag.url}, env).exit_code, 0);
  const nlohmann::json in_env = from_env.json({"list"})["sequences"];
  const nlohmann::json in_flag = from_flag.json({"list"})["sequences"];
  ASSERT_EQ(in_env.size(), 1u);
  EXPECT_EQ(in_env[0]["sequence"], "env-only");
  ASSERT_EQ(in_flag.size(), 1u);
  EXPECT_EQ(in_flag[0]["sequence"], "flag-only");
}

TEST(Sequences, ABadStoreUrlExitsTwoAndNamesWhereItCameFrom) {
  TempDir dir;
  for (const std::string url : {"mysql://db.example/ids", "sqlite:", "", "off",
                                "postgresql://snowid@127.0.0.1/ids?no_such_parameter=1"}) {
    const CliResult r = seq({"list", "--store", url});
    expect_one_line_failure(r, 2, url);
    EXPECT_NE(r.err.find("--store"), std::string::npos) << url << ": " << r.err;
  }
  const CliResult env = seq({"list"}, {{"SNOWID_SEQUENCES", "redis://cache/0"}});
  expect_one_line_failure(env, 2, "SNOWID_SEQUENCES");
  EXPECT_NE(env.err.find("SNOWID_SEQUENCES"), std::string::npos) << env.err;
  const CliResult off = seq({"list"}, {{"SNOWID_SEQUENCES", "off"}});
  expect_one_line_failure(off, 2, "SNOWID_SEQUENCES=off");
  EXPECT_NE(off.err.find("off"), std::string::npos) << off.err;
}

TEST(Sequences, AnUnreachableDatabaseExitsOneWithItsMessageAndNoPassword) {
  const RefusingPort port;
  const std::string host = "127.0.0.1:" + std::to_string(port.port());
  for (const std::string& url : {"postgresql://snowid:s3cret@" + host + "/ids",
                                 "postgres://snowid@" + host + "/ids?password=s3cret"}) {
    const CliResult r = seq({"take", "orders", "--store", url});
    expect_one_line_failure(r, 1, url);
    EXPECT_NE(r.err.find("UNAVAILABLE"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(host), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("s3cret"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("***"), std::string::npos) << r.err;
  }
  // A password in a malformed URL is not shown either.
  const CliResult bad = seq({"list", "--store", "mysql://snowid:s3cret@db/ids"});
  expect_one_line_failure(bad, 2, "mysql URL");
  EXPECT_EQ(bad.err.find("s3cret"), std::string::npos) << bad.err;

  TempDir dir;
  const CliResult file =
      seq({"create", "orders", "--store", "sqlite:" + dir.path() + "/missing/seq.db"});
  expect_one_line_failure(file, 1, "file in a missing directory");
  EXPECT_NE(file.err.find("UNAVAILABLE"), std::string::npos) << file.err;
}

TEST(Sequences, HelpSaysTheEndIsExclusiveAndNamesEverySubcommand) {
  const CliResult take = seq({"take", "--help"});
  EXPECT_EQ(take.exit_code, 0) << take.err;
  EXPECT_NE(take.out.find("exclusive"), std::string::npos) << take.out;
  EXPECT_NE(take.out.find("--store"), std::string::npos) << take.out;
  const CliResult top = seq({"--help"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  for (const std::string sub : {"create", "list", "show", "take", "migrate"}) {
    EXPECT_NE(top.out.find(sub), std::string::npos) << sub << ": " << top.out;
  }
  const CliResult unknown = run_cli({"sequencez"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("sequences"), std::string::npos) << unknown.err;
}

#else  // built without the stores

TEST(Sequences, SaysTheStoresWereNotBuilt) {
  TempDir dir;
  const CliResult r = seq({"list", "--store", "sqlite:" + dir.file("seq.db")});
  expect_one_line_failure(r, 1, "list");
  EXPECT_NE(r.err.find("built without the sequence stores"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("seq.db")));
}

#endif

}  // namespace
}  // namespace snowid::cli::testing
