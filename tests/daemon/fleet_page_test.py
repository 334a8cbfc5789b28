#!/usr/bin/env python3
"""The /fleet page in a real headless browser: Debian's chromium, driven by
chromedriver over the W3C WebDriver protocol (plain HTTP and JSON, so the
test needs nothing beyond the standard library).

Three real snowidd on a real etcd, each with a wall clock of its own through
libfaketime and a host name of its own. The page of a good host must list the
three hosts with their states and draw a line per measured host; once one
host's clock is stepped 300 ms ahead, the good host's page must show that
host's fence with its reason, and the bad host's own page that it is held.
A screenshot of the good host's page is written beside the test's output
(fleet-page.png) for people to look at.

Environment: SNOWIDD_BIN, SNOWID_CLI_BIN, SNOWID_ETCD_BIN, LIBFAKETIME,
CHROMIUM_BIN, CHROMEDRIVER_BIN; SNOWID_ARTIFACTS_DIR (default: the current
directory) for the screenshot.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid


def need(var: str) -> str:
    value = os.environ.get(var, "")
    if not value or not os.path.exists(value):
        sys.exit(f"{var} must name an existing file (scripts/install-deps installs it): {value!r}")
    return value


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_json(method: str, url: str, body: object | None = None, timeout: float = 30) -> dict:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        raise AssertionError(f"{method} {url}: HTTP {e.code}: {e.read()[:500]!r}") from None


def wait_until(what: str, check, timeout: float):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {last!r}")


class Process:
    """A child whose stderr lines are kept (snowidd logs JSON there)."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None, name: str = ""):
        self.name = name or os.path.basename(args[0])
        self.lines: list[str] = []
        self.proc = subprocess.Popen(
            args,
            env={**os.environ, **(env or {})},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def events(self) -> list[dict]:
        out = []
        for line in list(self.lines):
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if isinstance(doc, dict):
                out.append(doc)
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class WebDriver:
    """The few W3C WebDriver commands the test needs."""

    def __init__(self, url: str, chromium: str):
        self.url = url
        caps = {
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": {
                        "binary": chromium,
                        "args": [
                            "--headless=new",
                            "--no-sandbox",
                            "--disable-gpu",
                            "--disable-dev-shm-usage",
                            "--window-size=1200,1000",
                        ],
                    },
                }
            }
        }
        self.session = http_json("POST", f"{url}/session", caps, timeout=60)["value"]["sessionId"]

    def go(self, page: str):
        http_json("POST", f"{self.url}/session/{self.session}/url", {"url": page})

    def run(self, script: str):
        return http_json(
            "POST",
            f"{self.url}/session/{self.session}/execute/sync",
            {"script": script, "args": []},
        )["value"]

    def screenshot(self) -> bytes:
        value = http_json("GET", f"{self.url}/session/{self.session}/screenshot")["value"]
        return base64.b64decode(value)

    def close(self):
        try:
            http_json("DELETE", f"{self.url}/session/{self.session}", timeout=10)
        except Exception:  # noqa: BLE001 - on the way out
            pass


PAGE_STATE = """
const rows = [...document.querySelectorAll('#hosts tbody tr')];
return {
  rounds: Number(document.body.dataset.rounds || 0),
  hosts: rows.map((r) => [r.dataset.host, r.dataset.state]),
  lines: [...document.querySelectorAll('#chart path')].map((p) => [p.dataset.host, Number(p.dataset.points)]),
  fences: [...document.querySelectorAll('#fences li[data-target]')].map((li) => [li.dataset.target, li.textContent]),
  status: document.getElementById('status').textContent,
  held: document.getElementById('status').className === 'held',
  error: document.getElementById('error').textContent,
};
"""


def main() -> int:
    snowidd = need("SNOWIDD_BIN")
    cli = need("SNOWID_CLI_BIN")
    etcd_bin = need("SNOWID_ETCD_BIN")
    faketime = need("LIBFAKETIME")
    chromium = need("CHROMIUM_BIN")
    chromedriver = need("CHROMEDRIVER_BIN")
    artifacts = os.environ.get("SNOWID_ARTIFACTS_DIR") or os.getcwd()

    work = tempfile.mkdtemp(prefix="snowid-fleet-page-")
    procs: list[Process] = []
    driver: WebDriver | None = None
    try:
        client, peer = free_port(), free_port()
        etcd_url = f"http://127.0.0.1:{client}"
        procs.append(
            Process(
                [
                    etcd_bin,
                    "--name=fleet",
                    f"--data-dir={work}/etcd",
                    f"--listen-client-urls={etcd_url}",
                    f"--advertise-client-urls={etcd_url}",
                    f"--listen-peer-urls=http://127.0.0.1:{peer}",
                    f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                    f"--initial-cluster=fleet=http://127.0.0.1:{peer}",
                    "--log-level=error",
                ],
                name="etcd",
            )
        )

        def etcd_up():
            try:
                with urllib.request.urlopen(f"{etcd_url}/health", timeout=2) as r:
                    return json.loads(r.read()).get("health") == "true"
            except (OSError, ValueError):
                return False

        wait_until("etcd", etcd_up, 30)
        subprocess.run([cli, "workers", "init", "--etcd", etcd_url], check=True, timeout=60)

        daemons: dict[str, Process] = {}
        ports: dict[str, int] = {}
        clocks: dict[str, str] = {}
        for name in ("h1", "h2", "h3"):
            d = os.path.join(work, name)
            os.makedirs(d)
            clocks[name] = os.path.join(d, "faketime.rc")
            with open(clocks[name], "w") as f:
                f.write("+0\n")
            env = {
                "LD_PRELOAD": faketime,
                "FAKETIME_TIMESTAMP_FILE": clocks[name],
                "FAKETIME_NO_CACHE": "1",
                "FAKETIME_DONT_FAKE_MONOTONIC": "1",
                "SNOWID_HOST_LOCK": "snowid-fleet-page-" + uuid.uuid4().hex[:12],
                "ASAN_OPTIONS": (os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0").lstrip(":"),
            }
            p = Process(
                [
                    snowidd,
                    "--registry=etcd",
                    f"--etcd={etcd_url}",
                    f"--socket={d}/snowidd.sock",
                    f"--state-dir={d}/state",
                    "--http=127.0.0.1:0",
                    "--tcp=127.0.0.1:0",
                    f"--host-name={name}",
                    "--lease-ttl=4s",
                    "--lease-renew=1s",
                    "--lease-stop=3s",
                ],
                env,
                name=name,
            )
            procs.append(p)
            daemons[name] = p

            def ready(p=p):
                if p.proc.poll() is not None:
                    raise AssertionError(f"{p.name} exited: " + "\n".join(p.lines[-20:]))
                return any(e.get("msg") == "ready" for e in p.events())

            wait_until(f"{name} ready", ready, 60)
            http = [
                e["address"]
                for e in p.events()
                if e.get("msg") == "listening" and e.get("transport") == "http"
            ]
            ports[name] = int(http[0].rsplit(":", 1)[1])

        procs.append(Process([chromedriver, f"--port={(wd := free_port())}"], name="chromedriver"))

        def driver_up():
            try:
                return http_json("GET", f"http://127.0.0.1:{wd}/status", timeout=2)["value"]["ready"]
            except (OSError, AssertionError, KeyError):
                return False

        wait_until("chromedriver", driver_up, 30)
        driver = WebDriver(f"http://127.0.0.1:{wd}", chromium)

        # A good host's page: three hosts, all ok, a line for each measured one.
        driver.go(f"http://127.0.0.1:{ports['h1']}/fleet")
        def listed():
            s = driver.run(PAGE_STATE)
            hosts_ok = sorted(h for h, _ in s["hosts"]) == ["h1", "h2", "h3"]
            states_ok = all(st == "ok" for _, st in s["hosts"])
            lines_ok = {h for h, n in s["lines"] if n >= 3} >= {"h2", "h3"}
            return s if hosts_ok and states_ok and lines_ok else None

        state = wait_until("the page to list three hosts, all ok, with lines for h2 and h3", listed, 30)
        print(f"[ measured ] the page of h1 after {state['rounds']} rounds: {state['hosts']}")
        assert state["error"] == "", state

        # h3 steps 300 ms ahead: fenced, and the fence shown with its reason.
        with open(clocks["h3"], "w") as f:
            f.write("+0.3\n")
        stepped = time.monotonic()
        def fence_shown():
            s = driver.run(PAGE_STATE)
            return s if any(t == "h3" for t, _ in s["fences"]) else None

        state = wait_until("h3's fence on h1's page", fence_shown, 40)
        shown_after = time.monotonic() - stepped
        text = [t for target, t in state["fences"] if target == "h3"][0]
        assert "h3 fenced by" in text and "target=h3" in text, text
        png = driver.screenshot()
        assert png.startswith(b"\x89PNG"), png[:16]
        path = os.path.join(artifacts, "fleet-page.png")
        with open(path, "wb") as f:
            f.write(png)
        print(f"[ measured ] h3's fence shown on h1's page {shown_after:.1f} s after the step; screenshot {path}")

        # h3's own page says it is held.
        driver.go(f"http://127.0.0.1:{ports['h3']}/fleet")
        def held():
            s = driver.run(PAGE_STATE)
            return s if s["held"] else None

        state = wait_until("h3's page to say it is held", held, 20)
        assert state["status"].startswith("HELD"), state["status"]
        print("fleet page: ok")
        return 0
    finally:
        if driver is not None:
            driver.close()
        for p in reversed(procs):
            p.stop()
        if os.environ.get("KEEP_FLEET_PAGE_DIR") is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
