"""The harness's own test: it must catch a successor that does not honour the mark.

The C++ driver's `unsafe_skip_mark` option makes it judge quarantine on the unshifted clock and
issue without waiting past the previous holders' mark. Taking over from each kind with its clock
3 s behind, it issues ids the predecessor already issued, or below them: the churn checks must
report that, in both modes.
"""

from report import Report
from scenarios.churn import MODES, churn_case

HOST = 40


def run(bed, report):
    if "cpp" not in bed.kinds:
        report.fail("this scenario needs the cpp driver (its unsafe_skip_mark option)")
        return
    n = 0
    for first in bed.kinds:
        for mode in MODES:
            inner = Report(
                f"{report.scenario} [{first}->cpp unsafe, {mode}]", expecting_failures=True
            )
            figures = churn_case(
                bed, inner, first, "cpp", mode, HOST + n, options={"unsafe_skip_mark": True}
            )
            n += 1
            report.check(
                bool(inner.failures) and (figures["below"] > 0 or figures["dups"] > 0),
                f"{first}->cpp ({mode}): a successor that skips the mark went unnoticed",
            )
            report.measured(
                f"{first}->cpp ({mode}) skipping the mark: {figures['below']} ids at or below the "
                f"predecessor's last, {figures['dups']} duplicates, "
                f"{len(inner.failures)} failed checks"
            )
