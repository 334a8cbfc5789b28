"""The command line of scripts/fleet-chaos."""

import argparse
import os

# tests/fleet/chaos -> the repository's root
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def parse(argv):
    build = os.path.join(ROOT, "build", "default")
    p = argparse.ArgumentParser(
        prog="fleet-chaos",
        description="Runs a fleet of snowidd daemons on etcd on this machine, injects seeded "
        "random faults, and checks that no id is issued twice or when it should not be. "
        "Writes report.json, report.md and timeline.png to --out; exits 1 when a check fails.",
    )
    p.add_argument("--seed", type=int, default=1, metavar="N", help="seed of the faults (1)")
    p.add_argument(
        "--minutes", type=float, default=10.0, metavar="M", help="minutes of faults (10)"
    )
    p.add_argument("--out", default="fleet-chaos-out", metavar="DIR", help="report directory")
    p.add_argument("--regions", type=int, default=2, metavar="N", help="regions, 1..3 (2)")
    p.add_argument("--daemons-per-region", type=int, default=3, metavar="N", help="(3)")
    p.add_argument("--members", type=int, default=3, metavar="N", help="etcd members (3)")
    p.add_argument(
        "--host-bits", type=int, default=3, metavar="B", help="2^B worker ids per region (3)"
    )
    p.add_argument("--batch", type=int, default=20, metavar="N", help="ids per NEXTIDS (20)")
    p.add_argument("--interval-ms", type=float, default=10.0, metavar="MS", help="pause (10)")
    p.add_argument("--lease-ttl-ms", type=int, default=3000, metavar="MS", help="(3000)")
    p.add_argument("--lease-renew-ms", type=int, default=500, metavar="MS", help="(500)")
    p.add_argument("--lease-stop-ms", type=int, default=2000, metavar="MS", help="(2000)")
    p.add_argument(
        "--recovery-s", type=float, default=30.0, metavar="S", help="bound on a recovery (30)"
    )
    p.add_argument(
        "--deadline-tolerance-ms",
        type=float,
        default=50.0,
        metavar="MS",
        help="slack on the stop deadlines (50)",
    )
    p.add_argument(
        "--ksort-slack-ms", type=float, default=5.0, metavar="MS", help="on the k-sort bound (5)"
    )
    p.add_argument("--faults", default="", metavar="K,K", help="the kinds drawn (all)")
    p.add_argument("--no-canary", action="store_true", help="no canary, no PostgreSQL")
    p.add_argument("--keep", action="store_true", help="keep the run directory (etcd, state)")
    p.add_argument("--snowidd", default=os.path.join(build, "daemon", "snowidd"), metavar="PATH")
    p.add_argument(
        "--snowid", default=os.path.join(build, "tools", "snowid", "snowid"), metavar="PATH"
    )
    p.add_argument(
        "--etcd-bin",
        default=os.environ.get("SNOWID_ETCD_BIN") or "etcd",
        metavar="PATH",
        help="($SNOWID_ETCD_BIN, else etcd on PATH)",
    )
    p.add_argument(
        "--pg-scratch", default=os.path.join(ROOT, "scripts", "pg-scratch"), metavar="PATH"
    )
    cfg = p.parse_args(argv)
    if not 1 <= cfg.regions <= 3:
        p.error("--regions must be 1 to 3 (regions 1.. of the 2-bit region field)")
    if cfg.daemons_per_region < 1 or cfg.members < 1:
        p.error("--daemons-per-region and --members must be at least 1")
    if cfg.daemons_per_region > (1 << cfg.host_bits):
        p.error("more daemons per region than worker ids (--host-bits)")
    return cfg
