// Every row of the command table is reachable over HTTP: its method on its
// path, with a valid subject and every parameter in the query, answers 2xx.
// A row added to the table is covered here without a line more; a row
// without a path (TIME) is RESP's only, and no path reaches it.
#include <gtest/gtest.h>

#include <string>

#include "commands.h"
#include "fake_public_ids.h"
#include "http_handler.h"
#include "sequence_test_support.h"
#include "service_test_support.h"

namespace snowid::daemon {
namespace {

using test_support::TestSequences;
using test_support::TestService;

// The row's path with its subject or item, and each parameter just above its
// lowest value in the query (a text: the public-id type "ord"); "walked" for
// the sequence the PUT creates.
std::string target_of(const CommandRow& row, const std::string& id, const std::string& public_id) {
  std::string target(row.path);
  if (const std::size_t hole = target.find("{}"); hole != std::string::npos) {
    const std::string subject = row.subject == Subject::kId || row.items == Items::kIds ? id
                                : row.items == Items::kPublicIds                        ? public_id
                                : row.op == Op::kSeqCreate                              ? "walked"
                                                                                        : "orders";
    target.replace(hole, 2, subject);
  }
  char separator = '?';
  for (const Param& p : row.params) {
    target += separator + std::string(p.name) + "=" + (p.text ? "ord" : std::to_string(p.low + 1));
    separator = '&';
  }
  return target;
}

TEST(HttpCommands, EveryRowOfTheTableIsAnsweredOverHttp) {
  TestService svc;
  TestSequences seq;
  seq.create("orders", 1001, 10);
  test_support::FakePublicIds public_ids;
  const HttpHandler handler(*svc.service, {}, "", seq.service.get(), &public_ids);
  const IdResult one = svc.service->next_id();
  ASSERT_TRUE(one.ok());
  const std::string wrapped = public_ids.text_of("ord", one.id);
  ASSERT_FALSE(command_rows().empty());
  for (const CommandRow& row : command_rows()) {
    SCOPED_TRACE(std::string(row.resp));
    if (!row.http()) continue;  // RESP's own (TIME)
    const std::string target = target_of(row, std::to_string(one.id), wrapped);
    HttpRequest request;
    request.method = row.method;
    request.target = target;
    request.loopback_peer = true;
    const HttpResponse r = handler.handle(request);
    EXPECT_GE(r.status, 200u) << target << ": " << r.body;
    EXPECT_LT(r.status, 300u) << target << ": " << r.body;
  }
}

}  // namespace
}  // namespace snowid::daemon
