-- snowid schema version 2, PostgreSQL only (SQLite records the version and
-- runs nothing: its gapless number is the statement in sqlite_gapless.sql).
--
-- snowid_next_gapless(name) returns the next number of the gapless counter
-- `name`: 1, 2, 3, ... with no gap and no repeat among committed
-- transactions. Call it in the transaction that inserts the record the
-- number belongs to:
--
--   BEGIN;
--   INSERT INTO invoices (number, customer, total)
--     VALUES (snowid_next_gapless('invoices'), 'ACME', 1200);
--   COMMIT;
--
-- The UPDATE takes the counter row's lock and holds it until the caller's
-- transaction ends: a rollback undoes the increment (no gap), and a second
-- caller waits for the first to commit or roll back before it gets the next
-- number (no repeat). That wait is the price: inserts that take numbers of
-- one counter run one at a time. An unknown counter raises no_data_found
-- (SQLSTATE P0002), which aborts the caller's transaction.
CREATE OR REPLACE FUNCTION snowid_next_gapless(name text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  taken bigint;
BEGIN
  UPDATE snowid_gapless_counters AS c
     SET last_value = c.last_value + 1
   WHERE c.name = snowid_next_gapless.name
  RETURNING c.last_value INTO taken;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'no gapless counter named "%"', snowid_next_gapless.name
      USING ERRCODE = 'no_data_found',
            HINT = 'create it: INSERT INTO snowid_gapless_counters (name, last_value) VALUES (..., 0)';
  END IF;
  RETURN taken;
END
$$;
