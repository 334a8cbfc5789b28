// Black-box tests of `snowid public-id`: the keyring's life (keygen, promote,
// retire), wrap and unwrap, check, and the refusals with their exit codes.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace snowid::cli::testing {
namespace {

// 2026-01-01T00:00:01Z, worker 5, sequence 0; and one of 2031-07-02.
constexpr const char* kOldId = "4194324480";
const std::string kNewId = std::to_string(std::uint64_t{173566800000} << 22);

class PublicIdCli : public ::testing::Test {
 protected:
  CliResult run(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), "public-id");
    return run_cli(CliRun{args, input, {{"SNOWID_PUBLIC_ID_KEYS", keys_}}});
  }
  std::string one_line(const CliResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::vector<std::string> lines = lines_of(r.out);
    return lines.size() == 1 ? lines[0] : "";
  }
  TempDir dir_;
  std::string keys_ = dir_.file("keys");
};

TEST_F(PublicIdCli, KeygenMakesA0600KeyringWhoseKeysAreNeverShown) {
  const CliResult made = run({"keygen", "--not-before", "2026-01-01T00:00:00Z", "--name", "first"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_TRUE(std::regex_match(
      one_line(made),
      std::regex("slot 0: key first \\(fingerprint [0-9a-f]{8}\\) added as primary")));
  struct stat st {};
  ASSERT_EQ(::stat(keys_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(run({"keygen", "--not-before", "2031-01-01"}).exit_code, 0);

  const std::string file = dir_.read("keys");
  std::smatch key;
  ASSERT_TRUE(std::regex_search(file, key, std::regex("[0-9a-f]{64}")));
  const CliResult list = run({"keys", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const std::vector<std::string> lines = lines_of(list.out);
  ASSERT_EQ(lines.size(), 4u) << list.out;
  EXPECT_EQ(lines[0], "policy by_time");
  EXPECT_NE(lines[2].find("primary"), std::string::npos);
  EXPECT_NE(lines[3].find("decrypt"), std::string::npos);
  EXPECT_EQ(list.out.find(key.str().substr(0, 16)), std::string::npos);
  const nlohmann::json doc = nlohmann::json::parse(run({"keys", "list", "--json"}).out);
  EXPECT_EQ(doc["slots"].size(), 2u);
  EXPECT_EQ(doc["slots"][1]["state"], "decrypt");
  EXPECT_EQ(doc["slots"][1]["not_before"], "2031-01-01T00:00:00.000Z");
}

TEST_F(PublicIdCli, RotationDrill) {
  ASSERT_EQ(run({"keygen", "--not-before", "2026-01-01T00:00:00Z"}).exit_code, 0);
  const std::string old_public = one_line(run({"wrap", "--type", "ord", kOldId}));
  ASSERT_EQ(old_public.size(), 17u);
  // Added as decrypt: nothing changes.
  ASSERT_EQ(run({"keygen", "--not-before", "2031-01-01T00:00:00Z"}).exit_code, 0);
  EXPECT_EQ(one_line(run({"wrap", "--type", "ord", kOldId})), old_public);
  // Promoted: old objects keep their public id; new ones get slot 1.
  EXPECT_EQ(one_line(run({"promote", "1"})), "slot 1 is now primary; slot 0 is active");
  EXPECT_EQ(one_line(run({"wrap", "--type", "ord", kOldId})), old_public);
  EXPECT_EQ(one_line(run({"unwrap", old_public})), kOldId);
  const std::string new_public = one_line(run({"wrap", "--type", "ord", kNewId}));
  const nlohmann::json checked =
      nlohmann::json::parse(one_line(run({"check", "--json", new_public})));
  EXPECT_EQ(checked["slot"], 1);
  // Retired: refused with UNKNOWN_KEY, exit 2.
  EXPECT_EQ(one_line(run({"retire", "0"})), "slot 0 is now retired");
  const CliResult refused = run({"unwrap", old_public});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(is_one_line_error(refused.err)) << refused.err;
  EXPECT_NE(refused.err.find("UNKNOWN_KEY"), std::string::npos) << refused.err;
  // The primary cannot be retired.
  const CliResult primary = run({"retire", "1"});
  EXPECT_EQ(primary.exit_code, 1);
  EXPECT_NE(primary.err.find("promote another slot first"), std::string::npos) << primary.err;
}

TEST_F(PublicIdCli, WrapAndUnwrapFromStdinAndAsJson) {
  ASSERT_EQ(run({"keygen", "--not-before", "2026-01-01T00:00:00Z"}).exit_code, 0);
  const CliResult wrapped = run({"wrap", "--type", "ord", "--sealed"}, "4194324480\n4194324481\n");
  ASSERT_EQ(wrapped.exit_code, 0) << wrapped.err;
  const std::vector<std::string> publics = lines_of(wrapped.out);
  ASSERT_EQ(publics.size(), 2u);
  EXPECT_EQ(publics[0].size(), 4u + 26u);
  const CliResult unwrapped = run({"unwrap", "--json", "--type", "ord"}, wrapped.out);
  ASSERT_EQ(unwrapped.exit_code, 0) << unwrapped.err;
  const nlohmann::json first = nlohmann::json::parse(lines_of(unwrapped.out).at(0));
  EXPECT_EQ(first["id"], kOldId);
  EXPECT_EQ(first["form"], "sealed");
  EXPECT_EQ(first["time"], "2026-01-01T00:00:01.000Z");
  EXPECT_EQ(first["host"], 5);
  // The wrong type, a bad line and a bad id: each one line, exit 2, the rest still done.
  const CliResult wrong = run({"unwrap", "--type", "cus", publics[0]});
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("WRONG_TYPE"), std::string::npos);
  const CliResult mixed = run({"wrap", "--type", "ord"}, "4194324480\nx\n0\n4194324481\n");
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_EQ(lines_of(mixed.out).size(), 2u);
  EXPECT_EQ(lines_of(mixed.err).size(), 2u);
  EXPECT_NE(mixed.err.find("line 3: BAD_ID"), std::string::npos) << mixed.err;
}

TEST_F(PublicIdCli, CheckNeedsNoKeyAndHintsAtAmbiguousSymbols) {
  const CliResult ok = run({"check", "ORD_C4KHYWQWTW0XE"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "ord_c4khywqwtw0xe type ord compact slot 1\n");
  const CliResult bad = run({"check", "ord_c4khywqwtwoxe"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_TRUE(is_one_line_error(bad.err));
  EXPECT_NE(bad.err.find("AMBIGUOUS_SYMBOL"), std::string::npos);
  EXPECT_NE(bad.err.find("did you mean 0"), std::string::npos);
}

TEST_F(PublicIdCli, AReadableKeyringOrNoneIsRefused) {
  ASSERT_EQ(run({"keygen"}).exit_code, 0);
  ASSERT_EQ(::chmod(keys_.c_str(), 0640), 0);
  const CliResult readable = run({"wrap", "--type", "ord", kOldId});
  EXPECT_EQ(readable.exit_code, 1);
  EXPECT_NE(readable.err.find("chmod 600"), std::string::npos) << readable.err;
  EXPECT_EQ(readable.out, "");
  const CliResult none = run_cli(CliRun{{"public-id", "wrap", "--type", "ord", kOldId},
                                        "",
                                        {{"SNOWID_PUBLIC_ID_KEYS", std::nullopt}}});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("SNOWID_PUBLIC_ID_KEYS"), std::string::npos) << none.err;
}

}  // namespace
}  // namespace snowid::cli::testing
