-- The next number of the gapless counter :name on SQLite: 1, 2, 3, ... with
-- no gap and no repeat among committed transactions. Run it inside the
-- transaction that inserts the record the number belongs to, opened with
-- BEGIN IMMEDIATE:
--
--   BEGIN IMMEDIATE;
--   UPDATE snowid_gapless_counters SET last_value = last_value + 1
--    WHERE name = 'invoices' RETURNING last_value;        -- say it returns 42
--   INSERT INTO invoices (number, customer, total) VALUES (42, 'ACME', 1200);
--   COMMIT;
--
-- BEGIN IMMEDIATE takes the database's write lock first, so the transaction
-- cannot meet a concurrent writer halfway (a plain BEGIN that reads first
-- may fail with SQLITE_BUSY when it tries to write); every other writer waits
-- until COMMIT or ROLLBACK. A rollback undoes the increment (no gap). No row
-- returned means there is no such counter: roll back. The price: writers of
-- the whole file run one at a time, as SQLite's writers always do.
UPDATE snowid_gapless_counters
   SET last_value = last_value + 1
 WHERE name = :name
RETURNING last_value;
