-- snowid schema version 1: the ticket table. Runs unchanged on PostgreSQL
-- and SQLite (docs/sequences.md). Times are milliseconds since the Unix
-- epoch, written by the application from its clock, so that both databases
-- store the same thing.

-- One row per applied migration; the highest version is the schema's.
CREATE TABLE snowid_schema_migrations (
  version BIGINT NOT NULL PRIMARY KEY,
  name TEXT NOT NULL,
  applied BIGINT NOT NULL
);

-- One row per named sequence. next_value is the first number no range has
-- taken yet; a range of n numbers is taken by adding n to it in one
-- statement. Numbers stay below 9223372036854775807 (INT64_MAX), so
-- next_value may reach it but never pass it.
CREATE TABLE snowid_sequences (
  name TEXT NOT NULL PRIMARY KEY
    CHECK (length(name) BETWEEN 1 AND 64),
  next_value BIGINT NOT NULL
    CHECK (next_value >= 0),
  step BIGINT NOT NULL
    CHECK (step BETWEEN 1 AND 1000000000),
  created BIGINT NOT NULL,
  updated BIGINT NOT NULL
);

-- Counters for gapless numbers, each taken inside the caller's own
-- transaction (postgres_gapless.sql, sqlite_gapless.sql). A counter is made
-- by inserting its row with last_value 0; the first number is then 1.
CREATE TABLE snowid_gapless_counters (
  name TEXT NOT NULL PRIMARY KEY
    CHECK (length(name) BETWEEN 1 AND 64),
  last_value BIGINT NOT NULL
    CHECK (last_value >= 0)
);
