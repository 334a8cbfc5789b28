#include "ticket_store_url.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "snowid/testing/simulated_clock.h"

namespace snowid::sequences {
namespace {

TEST(TicketStoreKindTest, NamesTheDatabaseOfEachAcceptedForm) {
  EXPECT_EQ(ticket_store_kind("sqlite:/var/lib/snowid/sequences.db").value(), "sqlite");
  EXPECT_EQ(ticket_store_kind("sqlite:relative.db").value(), "sqlite");
  EXPECT_EQ(ticket_store_kind("postgresql://snowid@db.example:5432/ids").value(), "postgresql");
  EXPECT_EQ(ticket_store_kind("postgres://db.example/ids").value(), "postgresql");
}

TEST(TicketStoreKindTest, AnythingElseIsInvalidArgumentNamingTheForms) {
  for (const char* url : {"", "sqlite:", "sqlite", "mysql://x/y", "postgresql:/x", "SQLITE:a.db",
                          "host=127.0.0.1 dbname=ids", "/var/lib/snowid/sequences.db"}) {
    Result<std::string_view> kind = ticket_store_kind(url);
    ASSERT_FALSE(kind.is_ok()) << url;
    EXPECT_EQ(kind.status().code(), Code::kInvalidArgument) << url;
  }
  Result<std::string_view> kind = ticket_store_kind("mysql://x/y");
  EXPECT_NE(kind.status().message().find("sqlite:PATH"), std::string::npos);
  EXPECT_NE(kind.status().message().find("postgresql://"), std::string::npos);
}

TEST(TicketStoreKindTest, RefusalDoesNotRepeatAPassword) {
  Result<std::string_view> kind = ticket_store_kind("mysql://admin:hunter2@db/ids");
  ASSERT_FALSE(kind.is_ok());
  EXPECT_EQ(kind.status().message().find("hunter2"), std::string::npos) << kind.status().message();
}

TEST(RedactTicketStoreUrlTest, HidesThePasswordOfTheUriForm) {
  EXPECT_EQ(redact_ticket_store_url("postgresql://snowid:s3cret@db.example:5432/ids"),
            "postgresql://snowid:***@db.example:5432/ids");
  EXPECT_EQ(redact_ticket_store_url("postgres://u:p%40ss@h/d?sslmode=require"),
            "postgres://u:***@h/d?sslmode=require");
}

TEST(RedactTicketStoreUrlTest, HidesAPasswordParameter) {
  EXPECT_EQ(redact_ticket_store_url("postgresql://h/d?user=u&password=s3cret&sslmode=require"),
            "postgresql://h/d?user=u&password=***&sslmode=require");
  EXPECT_EQ(redact_ticket_store_url("postgresql://h/d?password=s3cret"),
            "postgresql://h/d?password=***");
}

TEST(RedactTicketStoreUrlTest, LeavesUrlsWithoutAPasswordAlone) {
  for (const char* url :
       {"postgresql://snowid@127.0.0.1:5432/snowid", "postgresql://h:5432/d?sslmode=require",
        "postgresql:///ids", "sqlite:/var/lib/snowid/password=1.db", "sqlite:a:b@c.db"}) {
    EXPECT_EQ(redact_ticket_store_url(url), url);
  }
}

class OpenTicketStoreTest : public ::testing::Test {
 protected:
  snowid::testing::SimulatedClock clock_{wall_from_unix_ms(1'893'553'445'678)};
};

TEST_F(OpenTicketStoreTest, PostgresUrlOpensWithoutConnecting) {
  // Nothing listens on port 1: opening still succeeds, the first call fails.
  Result<std::unique_ptr<TicketStore>> store =
      open_ticket_store("postgresql://snowid@127.0.0.1:1/snowid", clock_);
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  EXPECT_EQ(store.value()->kind(), "postgresql");
  EXPECT_EQ(store.value()->get("orders").status().code(), Code::kUnavailable);
}

TEST_F(OpenTicketStoreTest, MalformedPostgresUrlIsInvalidArgument) {
  Result<std::unique_ptr<TicketStore>> store =
      open_ticket_store("postgresql://h/d?no_such_keyword=1", clock_);
  EXPECT_EQ(store.status().code(), Code::kInvalidArgument);
}

TEST_F(OpenTicketStoreTest, UnknownFormIsInvalidArgument) {
  Result<std::unique_ptr<TicketStore>> store = open_ticket_store("redis://localhost", clock_);
  EXPECT_EQ(store.status().code(), Code::kInvalidArgument);
}

TEST_F(OpenTicketStoreTest, SqliteUrlInAMissingDirectoryIsUnavailable) {
  Result<std::unique_ptr<TicketStore>> store =
      open_ticket_store("sqlite:/nonexistent-snowid-dir/sub/tickets.db", clock_);
  EXPECT_EQ(store.status().code(), Code::kUnavailable) << store.status().to_string();
}

}  // namespace
}  // namespace snowid::sequences
