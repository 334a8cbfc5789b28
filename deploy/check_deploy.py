#!/usr/bin/env python3
"""Checks the monitoring files under deploy/ against the real snowidd.

    check_deploy.py --snowidd PATH --promtool PATH

- promtool checks the alerting rules and runs their unit tests
  (prometheus/snowid-alerts_test.yml);
- the Grafana dashboard is well formed: unique panel ids, panels that do not
  overlap, a query on every target, every query on the datasource variable;
- a snowidd started on its embedded defaults (fresh state directory, HTTP on
  a kernel-chosen port) is scraped, promtool lints the exposition, and every
  metric that a rule or a panel names must be one it exports.

Exits 0 when all of that holds, 1 with the reasons otherwise.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = os.path.join(HERE, "prometheus", "snowid-alerts.yml")
RULE_TESTS = os.path.join(HERE, "prometheus", "snowid-alerts_test.yml")
DASHBOARD = os.path.join(HERE, "grafana", "snowidd.json")

# Metrics that Prometheus itself provides, not snowidd.
NOT_OURS = {"up"}
METRIC = re.compile(r"\b(snowid_[a-z0-9_]+|up)\b")
HISTOGRAM_PARTS = ("_bucket", "_sum", "_count")

problems = []


def fail(why):
    problems.append(why)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p


def rule_exprs():
    with open(RULES, encoding="utf-8") as f:
        return [m.group(1) for m in re.finditer(r"^\s+expr:\s*(.+)$", f.read(), re.M)]


def dashboard_exprs():
    with open(DASHBOARD, encoding="utf-8") as f:
        dash = json.load(f)
    exprs = []
    seen_ids = set()
    cells = {}
    variables = {v["name"] for v in dash.get("templating", {}).get("list", [])}
    if "datasource" not in variables:
        fail("the dashboard has no datasource variable")
    for panel in dash.get("panels", []):
        pid = panel.get("id")
        title = panel.get("title", f"panel {pid}")
        if pid in seen_ids:
            fail(f"panel id {pid} is used twice")
        seen_ids.add(pid)
        g = panel.get("gridPos", {})
        if not all(k in g for k in ("x", "y", "w", "h")) or g["x"] + g["w"] > 24:
            fail(f"{title}: gridPos {g} is incomplete or wider than the grid")
            continue
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                if (x, y) in cells:
                    fail(f"{title} overlaps {cells[(x, y)]}")
                    break
                cells[(x, y)] = title
        if panel.get("datasource", {}).get("uid") != "${datasource}":
            fail(f"{title}: not on the datasource variable")
        targets = panel.get("targets", [])
        if not targets:
            fail(f"{title}: no query")
        for t in targets:
            if not t.get("expr"):
                fail(f"{title}: a target without a query")
            else:
                exprs.append(t["expr"])
    for v in dash.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            exprs.append(q.get("query", ""))
    return exprs


def referenced(exprs):
    names = set()
    for e in exprs:
        for name in METRIC.findall(e):
            if name in NOT_OURS:
                continue
            for part in HISTOGRAM_PARTS:
                if name.endswith(part):
                    name = name[: -len(part)]
                    break
            names.add(name)
    return names


def scrape(snowidd):
    with tempfile.TemporaryDirectory(prefix="snowid-deploy-") as tmp:
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("SNOWID_"):
                del env[k]
        env["SNOWID_STATE_DIR"] = os.path.join(tmp, "state")
        cmd = [snowidd, "--socket", os.path.join(tmp, "snowidd.sock"), "--http", "127.0.0.1:0"]
        log_path = os.path.join(tmp, "log")
        with open(log_path, "w+", encoding="utf-8") as log:
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=log)
            try:
                address = None
                give_up = time.monotonic() + 30
                while address is None and time.monotonic() < give_up:
                    if proc.poll() is not None:
                        break
                    log.seek(0)
                    lines = log.read().splitlines()
                    for line in lines:
                        try:
                            r = json.loads(line)
                        except ValueError:
                            continue
                        if r.get("msg") == "listening" and r.get("transport") == "http":
                            address = r["address"]
                    ready = any('"msg":"ready"' in line for line in lines)
                    if address and not ready:
                        address = None
                    time.sleep(0.05)
                if address is None:
                    log.seek(0)
                    fail(f"snowidd did not get ready on HTTP:\n{log.read()}")
                    return None
                with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as r:
                    text = r.read().decode("utf-8")
            finally:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                try:
                    rc = proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    rc = proc.wait()
                if rc != 0:
                    log.seek(0)
                    fail(f"snowidd exited {rc} after SIGTERM:\n{log.read()}")
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--snowidd", required=True)
    ap.add_argument("--promtool", required=True)
    args = ap.parse_args()

    try:
        subprocess.run([args.promtool, "--version"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        print(f"{args.promtool}: not found or not working; scripts/install-deps installs it "
              "(Debian's prometheus package)", file=sys.stderr)
        return 1

    run([args.promtool, "check", "rules", RULES])
    run([args.promtool, "test", "rules", RULE_TESTS])

    names = referenced(rule_exprs() + dashboard_exprs())
    text = scrape(args.snowidd)
    if text is not None:
        lint = subprocess.run([args.promtool, "check", "metrics"], input=text,
                              capture_output=True, text=True)
        if lint.returncode != 0:
            fail(f"promtool check metrics on snowidd's /metrics:\n{lint.stdout}{lint.stderr}")
        exported = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
        for name in sorted(names - exported):
            fail(f"{name} is used by a rule or a panel but snowidd does not export it")
        if not problems:
            print(f"{len(names)} metrics named by the rules and the dashboard, "
                  f"{len(exported)} exported, all present")

    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
