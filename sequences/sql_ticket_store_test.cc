// What the SQL stores promise beyond one store: the migrations, several
// stores (each with its connection) sharing one database, and the table's
// own checks. Instantiated by sqlite_ticket_store_test.cc and
// postgres_ticket_store_test.cc.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "ticket_store_conformance.h"

namespace snowid::sequences::conformance {
namespace {

// Starts `n` threads running `body(i)` together, as close to the same moment
// as threads allow, and joins them.
template <typename F>
void run_together(int n, F body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < n) std::this_thread::yield();
      body(i);
    });
  }
  for (std::thread& t : threads) t.join();
}

// Drops the schema's tables: an empty database, which not every backend has
// at hand otherwise.
void drop_schema(StoreBackend& backend) {
  for (const char* table :
       {"snowid_sequences", "snowid_gapless_counters", "snowid_schema_migrations"}) {
    ASSERT_TRUE(backend.query(std::string("DROP TABLE ") + table).is_ok()) << table;
  }
}

// Opens `n` stores without migrating (each first finding the schema missing,
// when `look_first`), has them all migrate at once, and checks that every one
// succeeded and each version was recorded once. The stores end up in `stores`.
void migrate_side_by_side(StoreBackend& backend, const Clock& clock, int n, bool look_first,
                          std::vector<std::unique_ptr<TicketStore>>& stores) {
  for (int i = 0; i < n; ++i) {
    Result<std::unique_ptr<TicketStore>> s = backend.open(clock, /*migrate=*/false);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    if (look_first) {
      ASSERT_EQ(s.value()->list().status().code(), Code::kFailedPrecondition);
    }
    stores.push_back(std::move(s.value()));
  }
  std::vector<Status> results(static_cast<std::size_t>(n));
  run_together(n, [&](int i) {
    results[static_cast<std::size_t>(i)] = stores[static_cast<std::size_t>(i)]->migrate();
  });
  for (const Status& s : results) EXPECT_TRUE(s.is_ok()) << s.to_string();
  Result<std::string> count = backend.query("SELECT COUNT(*) FROM snowid_schema_migrations");
  ASSERT_TRUE(count.is_ok());
  EXPECT_EQ(count.value(), "2");
}

TEST_P(SqlTicketStoreTest, MigrationRecordsEveryVersionOnce) {
  Result<std::string> versions = backend_->query(
      "SELECT COUNT(*) || ':' || MIN(version) || ':' || MAX(version) FROM "
      "snowid_schema_migrations");
  ASSERT_TRUE(versions.is_ok()) << versions.status().to_string();
  EXPECT_EQ(versions.value(), "2:1:2");
  Result<std::string> names =
      backend_->query("SELECT name FROM snowid_schema_migrations WHERE version = 1");
  ASSERT_TRUE(names.is_ok());
  EXPECT_EQ(names.value(), "ticket_table");
  ASSERT_TRUE(store_->migrate().is_ok());
  versions = backend_->query("SELECT COUNT(*) FROM snowid_schema_migrations");
  ASSERT_TRUE(versions.is_ok());
  EXPECT_EQ(versions.value(), "2");
}

TEST_P(SqlTicketStoreTest, MigrationTimeComesFromTheClock) {
  Result<std::string> applied =
      backend_->query("SELECT applied FROM snowid_schema_migrations WHERE version = 1");
  ASSERT_TRUE(applied.is_ok()) << applied.status().to_string();
  EXPECT_EQ(applied.value(), std::to_string(unix_ms(clock_.wall_now())));
}

TEST_P(SqlTicketStoreTest, StoreOnAnUnmigratedDatabaseSaysRunMigrateUntilItDoes) {
  // A second, empty database is not at hand for every backend; dropping the
  // tables makes one.
  ASSERT_NO_FATAL_FAILURE(drop_schema(*backend_));
  Result<std::unique_ptr<TicketStore>> bare = backend_->open(clock_, /*migrate=*/false);
  ASSERT_TRUE(bare.is_ok()) << bare.status().to_string();
  TicketStore& store = *bare.value();
  const Status create = store.create("orders", 0, 10);
  EXPECT_EQ(create.code(), Code::kFailedPrecondition) << create.to_string();
  EXPECT_NE(create.message().find("run migrate"), std::string::npos) << create.message();
  EXPECT_EQ(store.take("orders", 0).status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(store.get("orders").status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(store.list().status().code(), Code::kFailedPrecondition);

  ASSERT_TRUE(store.migrate().is_ok());
  ASSERT_TRUE(store.create("orders", 0, 10).is_ok());
  Result<SequenceRange> r = store.take("orders", 0);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value(), (SequenceRange{0, 10}));
}

TEST_P(SqlTicketStoreTest, ConcurrentMigratorsOfOneDatabaseAllSucceedOnce) {
  ASSERT_NO_FATAL_FAILURE(drop_schema(*backend_));
  constexpr int kMigrators = 6;
  std::vector<std::unique_ptr<TicketStore>> stores;
  ASSERT_NO_FATAL_FAILURE(
      migrate_side_by_side(*backend_, clock_, kMigrators, /*look_first=*/false, stores));
  ASSERT_TRUE(stores[0]->create("orders", 0, 10).is_ok());
  EXPECT_TRUE(stores[kMigrators - 1]->take("orders", 0).is_ok());
}

// Stores that looked for the schema before it existed (a call answered "run
// migrate") then migrate at once. PostgreSQL keeps such an answer in the
// backend's catalog cache, which waiting for the migration lock does not
// refresh: the version must still be read as the migrator before committed it.
TEST_P(SqlTicketStoreTest, ConcurrentMigratorsThatLookedForTheSchemaFirstSucceedOnce) {
  ASSERT_NO_FATAL_FAILURE(drop_schema(*backend_));
  constexpr int kMigrators = 6;
  std::vector<std::unique_ptr<TicketStore>> stores;
  ASSERT_NO_FATAL_FAILURE(
      migrate_side_by_side(*backend_, clock_, kMigrators, /*look_first=*/true, stores));
  for (auto& store : stores) EXPECT_TRUE(store->list().is_ok());
}

TEST_P(SqlTicketStoreTest, SchemaNewerThanTheCodeIsFailedPrecondition) {
  ASSERT_TRUE(backend_
                  ->query("INSERT INTO snowid_schema_migrations (version, name, applied) "
                          "VALUES (3, 'from_the_future', 0)")
                  .is_ok());
  const Status again = store_->migrate();
  EXPECT_EQ(again.code(), Code::kFailedPrecondition) << again.to_string();
  EXPECT_NE(again.message().find("version 3"), std::string::npos) << again.message();
  Result<std::unique_ptr<TicketStore>> fresh = backend_->open(clock_, /*migrate=*/true);
  if (fresh.is_ok()) {
    // PostgreSQL connects, and so migrates, on the first call.
    EXPECT_EQ(fresh.value()->list().status().code(), Code::kFailedPrecondition);
  } else {
    EXPECT_EQ(fresh.status().code(), Code::kFailedPrecondition) << fresh.status().to_string();
  }
  // Nothing was rolled back or applied over the newer schema.
  Result<std::string> max = backend_->query("SELECT MAX(version) FROM snowid_schema_migrations");
  ASSERT_TRUE(max.is_ok());
  EXPECT_EQ(max.value(), "3");
}

// A store that leaves migrating to someone else (migrate = false) still
// refuses a schema it does not know, rather than take from a table whose
// rules may have changed.
TEST_P(SqlTicketStoreTest, StoreOpenedWithoutMigrateRefusesASchemaNewerThanTheCode) {
  ASSERT_TRUE(store_->create("orders", 0, 10).is_ok());
  ASSERT_TRUE(backend_
                  ->query("INSERT INTO snowid_schema_migrations (version, name, applied) "
                          "VALUES (3, 'from_the_future', 0)")
                  .is_ok());
  Result<std::unique_ptr<TicketStore>> bare = backend_->open(clock_, /*migrate=*/false);
  if (bare.is_ok()) {
    // PostgreSQL connects, and so looks at the schema, on the first call.
    TicketStore& store = *bare.value();
    Result<SequenceRange> taken = store.take("orders", 0);
    EXPECT_EQ(taken.status().code(), Code::kFailedPrecondition) << taken.status().to_string();
    EXPECT_NE(taken.status().message().find("version 3"), std::string::npos)
        << taken.status().message();
    EXPECT_EQ(store.create("other", 0, 10).code(), Code::kFailedPrecondition);
    EXPECT_EQ(store.get("orders").status().code(), Code::kFailedPrecondition);
    EXPECT_EQ(store.list().status().code(), Code::kFailedPrecondition);
  } else {
    EXPECT_EQ(bare.status().code(), Code::kFailedPrecondition) << bare.status().to_string();
    EXPECT_NE(bare.status().message().find("version 3"), std::string::npos)
        << bare.status().message();
  }
  Result<std::string> next =
      backend_->query("SELECT next_value FROM snowid_sequences WHERE name = 'orders'");
  ASSERT_TRUE(next.is_ok()) << next.status().to_string();
  EXPECT_EQ(next.value(), "0") << "nothing was taken";
}

TEST_P(SqlTicketStoreTest, TableRefusesRowsTheContractForbids) {
  const char* bad_rows[] = {
      "INSERT INTO snowid_sequences VALUES ('neg', -1, 10, 0, 0)",
      "INSERT INTO snowid_sequences VALUES ('zero_step', 0, 0, 0, 0)",
      "INSERT INTO snowid_sequences VALUES ('big_step', 0, 1000000001, 0, 0)",
      "INSERT INTO snowid_sequences VALUES ('', 0, 10, 0, 0)",
      "INSERT INTO snowid_sequences VALUES ('no_step', 0, NULL, 0, 0)",
      "INSERT INTO snowid_gapless_counters VALUES ('neg', -1)",
  };
  for (const char* sql : bad_rows) {
    EXPECT_FALSE(backend_->query(sql).is_ok()) << sql;
  }
  EXPECT_TRUE(
      backend_->query("INSERT INTO snowid_sequences VALUES ('fine', 0, 1000000000, 0, 0)").is_ok());
}

TEST_P(SqlTicketStoreTest, RowWrittenByAnotherClientIsReadAsTheContractSays) {
  ASSERT_TRUE(backend_->query("INSERT INTO snowid_sequences VALUES ('by_hand', 42, 8, 1000, 2000)")
                  .is_ok());
  Result<SequenceInfo> info = store_->get("by_hand");
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->next_value, 42);
  EXPECT_EQ(info->step, 8);
  EXPECT_EQ(info->created, wall_from_unix_ms(1000));
  EXPECT_EQ(info->updated, wall_from_unix_ms(2000));
  Result<SequenceRange> r = store_->take("by_hand", 0);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r.value(), (SequenceRange{42, 50}));
  Result<std::string> stored =
      backend_->query("SELECT next_value FROM snowid_sequences WHERE name = 'by_hand'");
  ASSERT_TRUE(stored.is_ok());
  EXPECT_EQ(stored.value(), "50");
}

TEST_P(SqlTicketStoreTest, ConcurrentCreatesOfOneNameHaveOneWinner) {
  constexpr int kCreators = 6;
  std::vector<std::unique_ptr<TicketStore>> stores;
  for (int i = 0; i < kCreators; ++i) {
    Result<std::unique_ptr<TicketStore>> s = backend_->open(clock_, /*migrate=*/true);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    stores.push_back(std::move(s.value()));
  }
  std::vector<Status> results(kCreators);
  run_together(kCreators, [&](int i) {
    results[static_cast<std::size_t>(i)] = stores[i]->create("orders", 100 * i, 10);
  });
  int won = 0;
  for (const Status& s : results) {
    if (s.is_ok()) {
      ++won;
    } else {
      EXPECT_EQ(s.code(), Code::kAlreadyExists) << s.to_string();
    }
  }
  EXPECT_EQ(won, 1);
}

// Eight takers, each with a store (so a connection) of its own, draw ranges
// of mixed sizes from one sequence at once: no number twice, none skipped.
TEST_P(SqlTicketStoreTest, ConcurrentTakersGetDisjointRangesThatCoverTheSequence) {
  constexpr int kTakers = 8;
  constexpr int kTakesEach = 40;
  constexpr std::int64_t kStart = 1'000;
  ASSERT_TRUE(store_->create("orders", kStart, 10).is_ok());
  std::vector<std::unique_ptr<TicketStore>> stores;
  for (int i = 0; i < kTakers; ++i) {
    Result<std::unique_ptr<TicketStore>> s = backend_->open(clock_, /*migrate=*/true);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    stores.push_back(std::move(s.value()));
  }
  std::vector<std::vector<SequenceRange>> taken(kTakers);
  std::vector<std::vector<Status>> failures(kTakers);
  run_together(kTakers, [&](int i) {
    const auto me = static_cast<std::size_t>(i);
    for (int k = 0; k < kTakesEach; ++k) {
      // Sizes 0 (the step), 1, 2, ..., 6 in a pattern of its own per thread.
      const std::int64_t size = (i + k) % 7;
      Result<SequenceRange> r = stores[me]->take("orders", size);
      if (!r.is_ok()) {
        failures[me].push_back(r.status());
        continue;
      }
      if (r->size() != (size == 0 ? 10 : size))
        failures[me].push_back(Status(Code::kDataLoss, "size"));
      taken[me].push_back(r.value());
    }
  });
  std::vector<SequenceRange> all;
  for (int i = 0; i < kTakers; ++i) {
    for (const Status& s : failures[static_cast<std::size_t>(i)]) {
      ADD_FAILURE() << "taker " << i << ": " << s.to_string();
    }
    all.insert(all.end(), taken[static_cast<std::size_t>(i)].begin(),
               taken[static_cast<std::size_t>(i)].end());
  }
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kTakers * kTakesEach));
  std::sort(all.begin(), all.end(),
            [](const SequenceRange& a, const SequenceRange& b) { return a.first < b.first; });
  std::int64_t expected = kStart;
  for (const SequenceRange& r : all) {
    ASSERT_EQ(r.first, expected) << "a gap or an overlap before " << r.first;
    expected = r.end;
  }
  Result<SequenceInfo> info = store_->get("orders");
  ASSERT_TRUE(info.is_ok());
  EXPECT_EQ(info->next_value, expected);
}

}  // namespace
}  // namespace snowid::sequences::conformance
