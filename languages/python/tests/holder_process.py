"""A holder in a process of its own, for the signal tests.

    holder_process.py ETCD_URL CLUSTER HOST

Leases the pinned host of region 0 with the short test timings and prints one
JSON line per batch it issued, {"ids": [...], "worker": [region, host],
"mono_ns": N}, and {"refused": CODE, "mono_ns": N} for each refusal, until
killed.
"""

from __future__ import annotations

import json
import sys
import time

from snowid import LeasedGenerator, SnowidError
from tests.etcd_support import QUARANTINE, SHORT


def main() -> None:
    url, cluster, host = sys.argv[1], sys.argv[2], int(sys.argv[3])
    gen = LeasedGenerator([url], cluster=cluster, host=host, timing=SHORT, quarantine=QUARANTINE)
    print(json.dumps({"ready": True, "worker": list(gen.worker)}), flush=True)
    while True:
        now = time.monotonic_ns()
        try:
            ids = list(gen.reserve(20))
            print(json.dumps({"ids": ids, "worker": list(gen.worker), "mono_ns": now}), flush=True)
        except SnowidError as e:
            print(json.dumps({"refused": e.code.name, "mono_ns": now}), flush=True)
        time.sleep(0.005)


if __name__ == "__main__":
    main()
