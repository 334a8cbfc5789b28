#!/usr/bin/env python3
"""Makes a venv with the pinned test tools of requirements-dev.txt.

    install_dev.py --venv DIR --requirements FILE

Reuses the venv when it exists; pip installs exactly the pinned versions.
Exits non-zero on any failure: tests that cannot be installed fail.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def run(argv: list[str]) -> None:
    print("+ " + " ".join(argv), flush=True)
    subprocess.run(argv, stdin=subprocess.DEVNULL, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", required=True)
    parser.add_argument("--requirements", required=True)
    args = parser.parse_args()
    if sys.version_info < (3, 10):  # noqa: UP036 - this script runs before the venv exists
        print(f"FAIL: Python 3.10 or later is needed, not {sys.version}", file=sys.stderr)
        return 1
    started = time.monotonic()
    python = os.path.join(args.venv, "bin", "python")
    try:
        if not os.path.exists(python):
            run([sys.executable, "-m", "venv", args.venv])
        run(
            [
                python,
                "-m",
                "pip",
                "install",
                "--no-input",
                "--disable-pip-version-check",
                "-q",
                "-r",
                args.requirements,
            ]
        )
    except (subprocess.CalledProcessError, OSError) as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    print(f"installed in {time.monotonic() - started:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
