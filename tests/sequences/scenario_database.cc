#include "scenario_database.h"

#include <utility>

#include "temp_dir.h"
#include "ticket_store_url.h"

namespace snowid::sequence_scenarios {
namespace {

class SqliteDatabase final : public ScenarioDatabase {
 public:
  SqliteDatabase() : dir_("snowid-seq"), url_("sqlite:" + dir_.file("tickets.db")) {}
  bool made() const { return !dir_.path().empty(); }
  const std::string& url() const override { return url_; }

 private:
  test_support::TempDir dir_;
  std::string url_;
};

class DatabaseAt final : public ScenarioDatabase {
 public:
  explicit DatabaseAt(std::string url) : url_(std::move(url)) {}
  const std::string& url() const override { return url_; }

 private:
  std::string url_;
};

}  // namespace

Result<std::unique_ptr<TicketStore>> ScenarioDatabase::open(std::size_t connections,
                                                            Duration timeout) const {
  sequences::TicketStoreOpenOptions options;
  options.connections = connections;
  options.timeout = timeout;
  Result<std::unique_ptr<TicketStore>> store =
      sequences::open_ticket_store(url(), system_clock(), options);
  if (!store.is_ok()) return store;
  // PostgreSQL migrates on its first call; make it now, so that the tables
  // are there before anything reads them by hand.
  if (Status s = store.value()->migrate(); !s.is_ok()) return s;
  return store;
}

Result<std::unique_ptr<ScenarioDatabase>> sqlite_database() {
  auto db = std::make_unique<SqliteDatabase>();
  if (!db->made()) return Status(Code::kUnavailable, "cannot make a temporary directory");
  return std::unique_ptr<ScenarioDatabase>(std::move(db));
}

std::unique_ptr<ScenarioDatabase> database_at(std::string url) {
  return std::make_unique<DatabaseAt>(std::move(url));
}

void SequenceScenario::SetUp() {
  Result<std::unique_ptr<ScenarioDatabase>> db = GetParam().make();
  ASSERT_TRUE(db.is_ok()) << db.status().to_string();
  db_ = std::move(db.value());
  Result<std::unique_ptr<TicketStore>> store = db_->open();
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  store_ = std::move(store.value());
}

}  // namespace snowid::sequence_scenarios
