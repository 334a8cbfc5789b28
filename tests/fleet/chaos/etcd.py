"""One region's etcd cluster: N real members on loopback, with the faults the harness injects.

The members run from $SNOWID_ETCD_BIN (--etcd-bin) in the run directory, each logging to a file
of its own. Ports and the JSON gateway calls come from the polyglot harness's etcd helper
(tests/polyglot/etcd_server.py), which starts one member; this starts several and keeps each
restartable on its own data directory, so that a killed leader comes back as the same member.
"""

import os
import signal
import time

from etcd_server import WorkerKeys, free_ports, post_json

from . import procs


class Member:
    def __init__(self, name, client_url, peer_url, data_dir, log_path):
        self.name = name
        self.client_url = client_url
        self.peer_url = peer_url
        self.data_dir = data_dir
        self.log_path = log_path
        self.proc = None
        self.stopped = False  # SIGSTOPped by the harness


class EtcdCluster:
    """The members of one region's cluster. start() blocks until a leader is elected."""

    def __init__(self, binary, run_dir, label, members):
        self.binary = binary
        self.dir = os.path.join(run_dir, f"snowid-etcd-{label}")
        self.label = label
        self.size = members
        self.members = []
        self.cluster_args = []

    @property
    def endpoints(self):
        return [m.client_url for m in self.members]

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        last = None
        for _ in range(3):  # a port taken between free_ports and etcd's bind: fresh ports
            self.stop()
            ports = free_ports(2 * self.size)
            self.members = []
            for i in range(self.size):
                name = f"{self.label}-m{i}"
                self.members.append(
                    Member(
                        name,
                        f"http://127.0.0.1:{ports[2 * i]}",
                        f"http://127.0.0.1:{ports[2 * i + 1]}",
                        os.path.join(self.dir, f"{name}.etcd"),
                        os.path.join(self.dir, f"{name}.log"),
                    )
                )
            initial = ",".join(f"{m.name}={m.peer_url}" for m in self.members)
            self.cluster_args = [
                f"--initial-cluster={initial}",
                "--initial-cluster-state=new",
                f"--initial-cluster-token=chaos-{self.label}-{os.getpid()}",
            ]
            for i in range(self.size):
                self.spawn(i)
            try:
                self.wait_leader(30.0)
                return self
            except RuntimeError as e:
                last = e
        raise RuntimeError(f"etcd cluster {self.label} did not start: {last}; logs in {self.dir}")

    def spawn(self, i):
        m = self.members[i]
        log = open(m.log_path, "ab")
        m.proc = procs.spawn(
            [
                self.binary,
                f"--name={m.name}",
                f"--data-dir={m.data_dir}",
                f"--listen-client-urls={m.client_url}",
                f"--advertise-client-urls={m.client_url}",
                f"--listen-peer-urls={m.peer_url}",
                f"--initial-advertise-peer-urls={m.peer_url}",
                "--logger=zap",
                "--log-outputs=stderr",
                *self.cluster_args,
            ],
            stdout=log,
            stderr=log,
        )
        log.close()
        m.stopped = False

    def status(self, i, timeout=1.0):
        """The member's /v3/maintenance/status answer, or None if it does not answer."""
        try:
            return post_json(self.members[i].client_url, "/v3/maintenance/status", {}, timeout)
        except (OSError, ValueError):
            return None

    def leader_index(self):
        """Index of the member that is leader now, by the members' own answers; None if none."""
        for i, m in enumerate(self.members):
            if m.proc is None or m.proc.poll() is not None or m.stopped:
                continue
            s = self.status(i)
            if s and s.get("leader") and s.get("header", {}).get("member_id") == s["leader"]:
                return i
        return None

    def wait_leader(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for m in self.members:
                if m.proc is not None and m.proc.poll() is not None:
                    raise RuntimeError(f"{m.name} exited with {m.proc.returncode}")
            if self.leader_index() is not None:
                return
            time.sleep(0.1)
        raise RuntimeError("no leader elected in time")

    def freeze(self):
        """SIGSTOP of every member: the whole cluster stops answering at once."""
        for m in self.members:
            if m.proc is not None and m.proc.poll() is None:
                procs.signal_group(m.proc, signal.SIGSTOP)
                m.stopped = True

    def thaw(self):
        for m in self.members:
            if m.proc is not None and m.proc.poll() is None:
                procs.signal_group(m.proc, signal.SIGCONT)
            m.stopped = False

    def kill_member(self, i):
        m = self.members[i]
        procs.signal_group(m.proc, signal.SIGKILL)
        m.proc.wait()
        procs.forget(m.proc)
        m.proc = None

    def restart_member(self, i):
        """Starts member i again on its data directory: it rejoins as the same member."""
        self.spawn(i)

    def unexpected_exits(self):
        """Members that exited while the harness meant them to run: (name, status)."""
        return [
            (m.name, m.proc.returncode)
            for m in self.members
            if m.proc is not None and m.proc.poll() is not None
        ]

    def worker_keys(self, prefix="/snowid", cluster="default"):
        """{(region, host): ...} for every worker id with a key in this cluster."""
        for m in self.members:
            try:
                return WorkerKeys(m.client_url, prefix, cluster).read()
            except OSError:
                continue
        return None

    def stop(self):
        for m in self.members:
            if m.proc is not None:
                procs.end(m.proc, timeout=5.0)
                m.proc = None
