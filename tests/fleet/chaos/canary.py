"""The canary's PostgreSQL: a scratch server from scripts/pg-scratch, and what the canary wrote.

Every daemon gets `--canary <conninfo> --canary-sample 1`: it stores every id it issues in
`snowid_canary_ids` (id primary key) and each id it finds there already in
`snowid_canary_violations`. The harness reads both tables with psql at the end: the violations
must be none, and the samples stored are reported beside the ids the clients pulled.
"""

import os
import subprocess


class ScratchPostgres:
    def __init__(self, pg_scratch, run_dir):
        # pg-scratch requires "snowid-pg-" in the path: CI finds leftovers of crashed runs by it.
        self.script = pg_scratch
        self.dir = os.path.join(run_dir, "snowid-pg-chaos")
        self.url = None

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        r = subprocess.run(
            [self.script, "start", self.dir], capture_output=True, text=True, timeout=120
        )
        if r.returncode != 0:
            raise RuntimeError(f"pg-scratch start failed: {r.stderr.strip()}")
        self.url = r.stdout.strip().splitlines()[-1]
        return self.url

    def query(self, sql):
        """One value of one row, as text; None when the query fails (table missing...)."""
        r = subprocess.run(
            ["psql", self.url, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
            capture_output=True,
            text=True,
            timeout=120,
        )
        return r.stdout.strip() if r.returncode == 0 else None

    def counts(self):
        samples = self.query("SELECT count(*) FROM snowid_canary_ids")
        violations = self.query("SELECT count(*) FROM snowid_canary_violations")
        first = self.query("SELECT row_to_json(v)::text FROM snowid_canary_violations v LIMIT 3")
        return {
            "samples_stored": int(samples) if samples is not None else None,
            "violations": int(violations) if violations is not None else None,
            "violation_rows": first,
        }

    def stored_ids(self):
        """Every id in snowid_canary_ids, as a set; None when it cannot be read."""
        r = subprocess.run(
            [
                "psql",
                self.url,
                "-X",
                "-q",
                "-c",
                "COPY (SELECT id FROM snowid_canary_ids) TO STDOUT",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if r.returncode != 0:
            return None
        return {int(line) for line in r.stdout.split()}

    def stop(self):
        if self.url is None and not os.path.isdir(os.path.join(self.dir, "data")):
            return
        subprocess.run([self.script, "stop", self.dir], capture_output=True, text=True, timeout=120)
