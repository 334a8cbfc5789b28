// Every row of the command table is reachable over RESP: its name with a
// valid subject and every parameter answers without an error. A row added
// to the table is covered here without a line more.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "commands.h"
#include "fake_public_ids.h"
#include "resp_session.h"
#include "resp_test_support.h"
#include "sequence_test_support.h"
#include "service_test_support.h"

namespace snowid::daemon {
namespace {

using test_support::read_one;
using test_support::Reply;
using test_support::TestSequences;
using test_support::TestService;

// A RESP array of bulk strings.
std::string command_of(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

// The row's name, its subject, each parameter just above its lowest value
// (a text: the public-id type "ord"), and one item; "walked" for the
// sequence SEQCREATE makes.
std::vector<std::string> argv_of(const CommandRow& row, const std::string& id,
                                 const std::string& public_id) {
  std::vector<std::string> argv{std::string(row.resp)};
  if (row.subject == Subject::kId) argv.push_back(id);
  if (row.subject == Subject::kSequence)
    argv.push_back(row.op == Op::kSeqCreate ? "walked" : "orders");
  for (const Param& p : row.params) argv.push_back(p.text ? "ord" : std::to_string(p.low + 1));
  if (row.items == Items::kIds) argv.push_back(id);
  if (row.items == Items::kPublicIds) argv.push_back(public_id);
  return argv;
}

TEST(RespCommands, EveryRowOfTheTableIsAnsweredOverResp) {
  TestService svc;
  TestSequences seq;
  seq.create("orders", 1001, 10);
  test_support::FakePublicIds public_ids;
  RespSessionOptions o;
  o.sequences = seq.service.get();
  o.public_ids = &public_ids;
  o.unix_socket = true;
  RespSession s(*svc.service, std::move(o));
  const std::uint64_t issued =
      test_support::id_of(read_one(test_support::talk(s, command_of({"NEXTID"}))));
  const std::string id = std::to_string(issued);
  const std::string wrapped = public_ids.text_of("ord", issued);
  ASSERT_FALSE(command_rows().empty());
  for (const CommandRow& row : command_rows()) {
    SCOPED_TRACE(std::string(row.resp));
    EXPECT_EQ(&command_row(row.op), &row) << "rows are in the order of Op";
    EXPECT_EQ(find_resp_command(row.resp), &row);
    const std::vector<std::string> argv = argv_of(row, id, wrapped);
    ASSERT_GE(argv.size() - 1, row.resp_min_args);
    ASSERT_LE(argv.size() - 1, row.resp_max_args);
    const Reply r = read_one(test_support::talk(s, command_of(argv)));
    EXPECT_NE(r.type, '-') << r.text;
  }
}

}  // namespace
}  // namespace snowid::daemon
