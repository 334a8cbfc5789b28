#!/usr/bin/env python3
"""The live cross-language harness: runs one scenario on one real etcd (README.md).

    harness.py SCENARIO [--require KIND,...] [--drivers KIND,...] --bin NAME=PATH ...

Exit status 0 when every check passed, 1 when one failed, 2 on bad usage or a missing driver
that --require names.
"""

import argparse
import importlib
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from driver_process import DriverError, load_registry  # noqa: E402
from report import Report  # noqa: E402
from testbed import ScenarioError, Testbed  # noqa: E402

SCENARIOS = ["fleet", "churn", "fence", "pause", "lost_replies", "clock", "detects_skipped_mark"]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("scenario", choices=SCENARIOS)
    ap.add_argument("--bin", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--require", default="", help="driver kinds that must be usable")
    ap.add_argument("--drivers", default="", help="run only these driver kinds")
    ap.add_argument(
        "--all-pairs",
        action="store_true",
        help="run the pairwise scenarios on every ordered pair of kinds (quadratic)",
    )
    args = ap.parse_args(argv)
    bins = {}
    for item in args.bin:
        name, sep, path = item.partition("=")
        if not sep:
            ap.error(f"--bin takes NAME=PATH, not {item!r}")
        bins[name] = path
    return args, bins


def main(argv):
    args, bins = parse_args(argv)
    registry, missing = load_registry(bins)
    for kind in filter(None, args.require.split(",")):
        if kind not in registry:
            print(f"polyglot: driver {kind!r} is required but {missing.get(kind, 'unknown')}")
            if "libfaketime" in missing.get(kind, ""):
                print("polyglot: run scripts/install-deps (Debian package faketime)")
            return 2
    if args.drivers:
        wanted = args.drivers.split(",")
        registry = {k: v for k, v in registry.items() if k in wanted}
    for kind, why in sorted(missing.items()):
        print(f"[ note     ] driver {kind} not run: {why}")
    if not registry:
        print("polyglot: no driver to run")
        return 2
    report = Report(args.scenario)
    print(f"[ drivers  ] {', '.join(sorted(registry))}", flush=True)
    scenario = importlib.import_module(f"scenarios.{args.scenario}")
    began = time.monotonic()
    try:
        with Testbed(registry, bins, report, all_pairs=args.all_pairs) as bed:
            scenario.run(bed, report)
    except (ScenarioError, DriverError) as e:
        report.fail(f"scenario stopped: {e}")
    except Exception:
        report.fail("harness error:\n" + traceback.format_exc())
    report.measured(f"scenario took {time.monotonic() - began:.1f} s")
    report.summary()
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
