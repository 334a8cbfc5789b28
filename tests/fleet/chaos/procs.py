"""Child processes of the harness: every one in a process group of its own, all ended on exit.

Contract: everything the harness starts (etcd members, snowidd daemons, the snowid tool) goes
through `spawn`, which puts the child in a new session, so that `os.killpg` reaches it and its
own children, and records it in `LIVE`. `kill_all` (registered with atexit and called from the
signal handlers that `install_handlers` sets) sends SIGCONT then SIGKILL to every group still
recorded and reaps it: no child outlives the harness, whether it ends normally, on an exception
or on Ctrl-C. A harness killed with SIGKILL cannot clean up; `leftovers` finds what such a run
left behind by the run directory named in the processes' command lines.
"""

import atexit
import os
import signal
import subprocess
import threading

LIVE = {}  # pid -> subprocess.Popen, every child not yet reaped
_LOCK = threading.Lock()


def spawn(argv, *, env=None, stdout=None, stderr=None, stdin=subprocess.DEVNULL):
    """Starts argv in a new session (its own process group) and records it in LIVE."""
    proc = subprocess.Popen(
        argv, env=env, stdin=stdin, stdout=stdout, stderr=stderr, start_new_session=True
    )
    with _LOCK:
        LIVE[proc.pid] = proc
    return proc


def forget(proc):
    """Drops a reaped child from LIVE."""
    with _LOCK:
        LIVE.pop(proc.pid, None)


def signal_group(proc, sig):
    """Sends sig to proc's process group; False when the group is gone."""
    try:
        os.killpg(proc.pid, sig)
        return True
    except ProcessLookupError:
        return False


def end(proc, timeout=10.0):
    """SIGCONT and SIGTERM to proc's group, SIGKILL after timeout; reaps. The exit status,
    and whether it had to be killed."""
    if proc.poll() is None:
        signal_group(proc, signal.SIGCONT)
        signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            signal_group(proc, signal.SIGKILL)
            proc.wait()
            forget(proc)
            return proc.returncode, True
    signal_group(proc, signal.SIGKILL)  # whatever the group leader left behind
    forget(proc)
    return proc.returncode, False


def kill_all():
    """SIGCONT and SIGKILL to every recorded group, then reaps each. Idempotent."""
    with _LOCK:
        procs = list(LIVE.values())
    for proc in procs:
        signal_group(proc, signal.SIGCONT)
        signal_group(proc, signal.SIGKILL)
    for proc in procs:
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        forget(proc)


def install_handlers():
    """atexit cleanup, and SIGINT/SIGTERM/SIGHUP turned into KeyboardInterrupt in the main
    thread, so that the run's `finally` blocks stop the fleet and write what was measured."""
    atexit.register(kill_all)

    def interrupt(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)


def leftovers(marker):
    """Processes (pid, command line) whose command line mentions marker, other than this one
    and its ancestors: what a stopped fleet must not leave behind."""
    out = []
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            continue
        if marker in cmdline:
            out.append((int(name), cmdline))
    return out


def proc_stats():
    """Each live process as (pid, command, fields of /proc/<pid>/stat after the command)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # The command is in parentheses and may hold spaces: the fields follow the last ')'.
        yield (
            int(name),
            stat[stat.find("(") + 1 : stat.rfind(")")],
            stat[stat.rfind(")") + 2 :].split(),
        )


def children_of_self():
    """Live processes whose parent is this process (zombies included: they were not reaped)."""
    me = str(os.getpid())
    return [
        (pid, command, fields[0])
        for pid, command, fields in proc_stats()
        if len(fields) > 1 and fields[1] == me
    ]


def cpu_seconds(pid):
    """User plus system CPU time of a live process, from /proc/<pid>/stat; 0 if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return 0.0
    fields = stat[stat.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(pid):
    """CPU time of a live process and its live children (PostgreSQL's postmaster and backends)."""
    parent = str(pid)
    children = [
        child for child, _, fields in proc_stats() if len(fields) > 1 and fields[1] == parent
    ]
    return cpu_seconds(pid) + sum(cpu_seconds(child) for child in children)
