// The canary's statements, in one place: the tables it creates and the
// queries docs/canary.md shows operators. Parameters travel as text.
#pragma once

namespace snowid::canary::sql {

// Run on each new connection, under an advisory lock so that canaries
// starting together do not race to create the same table. Safe to run on
// tables that exist. `batch` tells a retried statement's own rows (an
// answer lost with the connection) from an earlier holder's.
inline constexpr const char* kSchema = R"sql(
BEGIN;
SELECT pg_advisory_xact_lock(7310423582517364226);
CREATE TABLE IF NOT EXISTS snowid_canary_ids (
  id          bigint PRIMARY KEY,
  region      integer NOT NULL,
  worker_host integer NOT NULL,
  host        text NOT NULL,
  holder      text NOT NULL,
  batch       bigint NOT NULL,
  stored_at   timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS snowid_canary_ids_stored_at ON snowid_canary_ids (stored_at);
CREATE TABLE IF NOT EXISTS snowid_canary_violations (
  id                 bigint NOT NULL,
  first_region       integer,
  first_worker_host  integer,
  first_host         text,
  first_holder       text,
  first_stored_at    timestamptz,
  second_region      integer NOT NULL,
  second_worker_host integer NOT NULL,
  second_host        text NOT NULL,
  second_holder      text NOT NULL,
  found_at           timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS snowid_canary_violations_id ON snowid_canary_violations (id);
COMMIT;
)sql";

// Whether both tables exist already ("t" or "f"): the schema is run only
// when one is missing, so a role without CREATE on the schema works.
inline constexpr const char* kTablesExist =
    "SELECT to_regclass('snowid_canary_ids') IS NOT NULL"
    " AND to_regclass('snowid_canary_violations') IS NOT NULL";

// $1 statement_timeout in ms. A sample lost with a crash of the server is
// only a sample: commits need not wait for the disk.
inline constexpr const char* kSession =
    "SELECT set_config('statement_timeout', $1, false),"
    " set_config('synchronous_commit', 'off', false)";

// $1 ids, $2 regions, $3 worker hosts (arrays), $4 host, $5 holder, $6
// batch. Answers the ids the table took; an id it already had is left alone.
inline constexpr const char* kInsert =
    "INSERT INTO snowid_canary_ids (id, region, worker_host, host, holder, batch)"
    " SELECT s.id, s.region, s.worker_host, $4, $5, $6"
    " FROM unnest($1::bigint[], $2::integer[], $3::integer[]) AS s(id, region, worker_host)"
    " ON CONFLICT (id) DO NOTHING RETURNING id";

// $1 ids: the rows the table kept, stored_at in µs since 1970.
inline constexpr const char* kFirstHolders =
    "SELECT id, region, worker_host, host, holder, batch,"
    " (extract(epoch FROM stored_at) * 1000000)::bigint"
    " FROM snowid_canary_ids WHERE id = ANY($1::bigint[])";

// $1 id, $2..$6 the first copy (NULL when pruned; $6 in µs), $7..$10 the second.
inline constexpr const char* kRecordViolation =
    "INSERT INTO snowid_canary_violations (id, first_region, first_worker_host, first_host,"
    " first_holder, first_stored_at, second_region, second_worker_host, second_host,"
    " second_holder) VALUES ($1, $2, $3, $4, $5, to_timestamp($6::double precision / 1e6),"
    " $7, $8, $9, $10)";

// $1 retention in ms: deletes up to 5,000 of the oldest samples past it.
inline constexpr const char* kPrune =
    "DELETE FROM snowid_canary_ids WHERE id IN (SELECT id FROM snowid_canary_ids"
    " WHERE stored_at < clock_timestamp() - $1::bigint * interval '1 millisecond'"
    " ORDER BY stored_at LIMIT 5000)";

}  // namespace snowid::canary::sql
