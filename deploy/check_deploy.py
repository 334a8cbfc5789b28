#!/usr/bin/env python3
"""Checks the monitoring files under deploy/ against the real snowidd.

    check_deploy.py --snowidd PATH --promtool PATH

- promtool checks the alerting rules and runs their unit tests
  (prometheus/snowid-alerts_test.yml);
- the Grafana dashboard is well formed: unique panel ids, panels that do not
  overlap, a query on every target, every query on the datasource variable;
- a snowidd started on its embedded defaults (fresh state directory, HTTP on
  a kernel-chosen port) is scraped, and so is one with etcd as the registry
  (a one-member etcd from $SNOWID_ETCD_BIN, else `etcd` on PATH), whose skew
  monitor exports the snowid_skew_* series that the other does not; promtool
  lints both expositions, and every metric that a rule or a panel names must
  be one of them exports.

Exits 0 when all of that holds, 1 with the reasons otherwise.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

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


def free_ports(n):
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def stop(proc, timeout=30):
    """SIGTERM, SIGKILL after `timeout` seconds: the exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def start_etcd(etcd, tmp):
    """A one-member etcd on free loopback ports: (process, client URL), or None."""
    log_path = os.path.join(tmp, "etcd.log")
    for attempt in range(3):
        client, peer = free_ports(2)
        url = f"http://127.0.0.1:{client}"
        peer_url = f"http://127.0.0.1:{peer}"
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [etcd, "--name=deploy", f"--data-dir={tmp}/etcd-{attempt}",
                 f"--listen-client-urls={url}", f"--advertise-client-urls={url}",
                 f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
                 f"--initial-cluster=deploy={peer_url}", "--log-level=error"],
                stdout=log, stderr=log)
        give_up = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < give_up:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
                    if json.loads(r.read()).get("health") == "true":
                        return proc, url
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        stop(proc, timeout=10)
    with open(log_path, encoding="utf-8", errors="replace") as log:
        fail(f"etcd ({etcd}) did not come up:\n{log.read()}")
    return None


def scrape_with_monitor(snowidd, etcd):
    """/metrics of a snowidd on a fresh etcd once its skew monitor has run a round."""
    with tempfile.TemporaryDirectory(prefix="snowid-deploy-etcd-") as tmp:
        started = start_etcd(etcd, tmp)
        if started is None:
            return None
        proc, url = started
        try:
            return scrape(snowidd,
                          ["--registry", "etcd", "--etcd", url, "--tcp", "127.0.0.1:0",
                           "--host-name", "deploy-check"],
                          {"SNOWID_HOST_LOCK": "snowid-deploy-" + uuid.uuid4().hex[:12]},
                          until_family="snowid_skew_rounds_total")
        finally:
            stop(proc, timeout=10)


def scrape(snowidd, extra_args=(), extra_env=None, until_family=None):
    """/metrics of a snowidd on its embedded defaults and `extra_args`, scraped
    once it is ready, or with `until_family` once the exposition has that
    family (the etcd registry's first holder of a new namespace waits 8 s
    before it is ready; its skew monitor runs meanwhile)."""
    with tempfile.TemporaryDirectory(prefix="snowid-deploy-") as tmp:
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("SNOWID_"):
                del env[k]
        env["SNOWID_STATE_DIR"] = os.path.join(tmp, "state")
        env.update(extra_env or {})
        cmd = [snowidd, "--socket", os.path.join(tmp, "snowidd.sock"), "--http", "127.0.0.1:0",
               *extra_args]
        what = " ".join(["snowidd", *extra_args])
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
                    if address and until_family is None and not ready:
                        address = None
                    time.sleep(0.05)
                if address is None:
                    log.seek(0)
                    fail(f"{what} did not get ready on HTTP:\n{log.read()}")
                    return None
                give_up = time.monotonic() + 30
                while True:
                    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as r:
                        text = r.read().decode("utf-8")
                    if until_family is None or f"# TYPE {until_family} " in text:
                        break
                    if time.monotonic() > give_up or proc.poll() is not None:
                        log.seek(0)
                        fail(f"{what} exported no {until_family} "
                             f"within 30 s:\n{log.read()}")
                        return None
                    time.sleep(0.2)
            finally:
                rc = stop(proc)
                if rc != 0:
                    log.seek(0)
                    fail(f"{what} exited {rc} after SIGTERM:\n{log.read()}")
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--snowidd", required=True)
    ap.add_argument("--promtool", required=True)
    args = ap.parse_args()
    etcd = os.environ.get("SNOWID_ETCD_BIN") or "etcd"
    if shutil.which(etcd) is None:
        print(f"etcd not found ({etcd!r}): scripts/install-etcd installs it; set "
              "SNOWID_ETCD_BIN to it, as scripts/test does", file=sys.stderr)
        return 1

    try:
        subprocess.run([args.promtool, "--version"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        print(f"{args.promtool}: not found or not working; scripts/install-deps installs it "
              "(Debian's prometheus package)", file=sys.stderr)
        return 1

    run([args.promtool, "check", "rules", RULES])
    run([args.promtool, "test", "rules", RULE_TESTS])

    names = referenced(rule_exprs() + dashboard_exprs())
    texts = [scrape(args.snowidd), scrape_with_monitor(args.snowidd, etcd)]
    if None not in texts:
        exported = set()
        for text in texts:
            lint = subprocess.run([args.promtool, "check", "metrics"], input=text,
                                  capture_output=True, text=True)
            if lint.returncode != 0:
                fail(f"promtool check metrics on snowidd's /metrics:\n{lint.stdout}{lint.stderr}")
            exported |= set(re.findall(r"^# TYPE (\S+) ", text, re.M))
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
