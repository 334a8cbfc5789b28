"""What a scenario found: failed checks and measured figures, printed as they come."""

import sys


class Report:
    def __init__(self, scenario, expecting_failures=False):
        self.scenario = scenario
        # For the harness's own test: failures are what it looks for, printed as caught.
        self.tag = "caught" if expecting_failures else "FAILED"
        self.failures = []
        self.checks = 0

    def check(self, ok, message):
        """Records one check; `message` says what was wrong when `ok` is false."""
        self.checks += 1
        if not ok:
            self.failures.append(message)
            print(f"[ {self.tag:<8} ] {self.scenario}: {message}", flush=True)
        return ok

    def fail(self, message):
        return self.check(False, message)

    def measured(self, message):
        print(f"[ measured ] {self.scenario}: {message}", flush=True)

    def note(self, message):
        print(f"[ note     ] {self.scenario}: {message}", flush=True)

    def summary(self, out=sys.stdout):
        verdict = "FAILED" if self.failures else "passed"
        print(
            f"polyglot {self.scenario}: {verdict}, {self.checks} checks, "
            f"{len(self.failures)} failed",
            file=out,
            flush=True,
        )
