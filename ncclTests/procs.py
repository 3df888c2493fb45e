"""Processes seen through /proc (Linux): the processes of a launched job, and what each holds;
and interrupt_on_sigterm(), so that `kill <pid>` of a tool cleans up as Ctrl-C does.

Every function takes the /proc root as `root` (default "/proc"), so tests can hand it a fake tree:
<root>/<pid>/stat, <root>/<pid>/status, <root>/<pid>/fd/ and <root>/<pid>/environ.
A process that vanishes while it is being read is simply not there.
"""

import contextlib
import os
import signal
import threading
import time

PROC = "/proc"


_held = {"depth": 0, "pending": None}


def _interrupt(signum, frame):
    if _held["depth"]:
        _held["pending"] = signum            # raised when held_interrupts() ends
        return
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def interrupt_on_sigterm():
    """Inside: SIGTERM raises KeyboardInterrupt, as Ctrl-C does, so `finally` blocks and context
    managers stop what the tool started (runs, jobs, the MPS daemon); both wait while
    held_interrupts() is active. Outside the main thread: nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {signal.SIGTERM: signal.signal(signal.SIGTERM, _interrupt)}
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:   # an ignored SIGINT stays ignored
        saved[signal.SIGINT] = signal.signal(signal.SIGINT, _interrupt)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def held_interrupts():
    """Inside: an interrupt waits for the end of the block (under interrupt_on_sigterm()), so that
    a process is never started without being recorded for its cleanup."""
    _held["depth"] += 1
    try:
        yield
    finally:
        _held["depth"] -= 1
        if not _held["depth"] and _held["pending"] is not None:
            signum, _held["pending"] = _held["pending"], None
            raise KeyboardInterrupt(f"signal {signum}")


def _read(path):
    with open(path, errors="replace") as fh:
        return fh.read()


def stat(pid, root=PROC):
    """{"comm", "state", "ppid", "session"} from <root>/<pid>/stat, or None if it is gone."""
    try:
        text = _read(os.path.join(root, str(pid), "stat"))
    except OSError:
        return None
    head, _, tail = text.rpartition(")")     # comm may hold spaces and parentheses
    fields = tail.split()
    if len(fields) < 4:
        return None
    return {"comm": head.partition("(")[2], "state": fields[0], "ppid": int(fields[1]), "session": int(fields[3])}


def table(root=PROC):
    """{pid: stat(pid)} of every process."""
    out = {}
    for name in os.listdir(root):
        if name.isdigit():
            st = stat(name, root)
            if st:
                out[int(name)] = st
    return out


def alive(pid, root=PROC):
    st = stat(pid, root)
    return st is not None and st["state"] not in ("Z", "X")


def family(leader, root=PROC):
    """`leader`, its descendants (by parent pid) and every process of its session, as a set of pids."""
    procs = table(root)
    children = {}
    for pid, st in procs.items():
        children.setdefault(st["ppid"], []).append(pid)
    found, todo = set(), [leader]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo += children.get(pid, [])
    found |= {pid for pid, st in procs.items() if st["session"] == leader}
    return {pid for pid in found if pid in procs}


def named(leader, name, root=PROC):
    """Live processes of `leader`'s family whose command name is `name` (the kernel keeps 15
    characters of it), sorted: the ranks of a job, found by their binary's name."""
    return sorted(pid for pid in family(leader, root)
                  if (st := stat(pid, root)) and st["comm"] == name[:15] and st["state"] not in ("Z", "X"))


def signal_family(leader, sig, root=PROC):
    """Send `sig` to `leader`'s process group and to every process of its family (OpenMPI 4's
    mpirun puts each rank in a process group of its own); returns the pids of the family."""
    members = family(leader, root)
    for pid in [-leader] + sorted(members):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass
    return members


def wait_gone(pids, timeout_s, root=PROC):
    """Wait until none of `pids` is alive, `timeout_s` at most; returns those still alive."""
    deadline = time.monotonic() + timeout_s
    while (left := sorted(p for p in pids if alive(p, root))) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def environ(pid, root=PROC):
    """The environment a process started with, or {} if it cannot be read."""
    try:
        text = _read(os.path.join(root, str(pid), "environ"))
    except OSError:
        return {}
    return dict(item.split("=", 1) for item in text.split("\0") if "=" in item)


def sample(pid, root=PROC):
    """{"rss_kb", "threads", "fds"} of one process, or None if it is gone (or a zombie)."""
    try:
        status = _read(os.path.join(root, str(pid), "status"))
        fds = len(os.listdir(os.path.join(root, str(pid), "fd")))
    except OSError:
        return None
    values = {}
    for line in status.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "Threads"):
            values[key] = int(value.split()[0])
    if len(values) < 2:
        return None
    return {"rss_kb": values["VmRSS"], "threads": values["Threads"], "fds": fds}
