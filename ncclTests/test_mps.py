"""Tests of procs.py (on a fake /proc tree) and mps.py (with a stand-in nvidia-cuda-mps-control)."""

import json
import os
import signal
import tempfile
import time
import unittest

import fakes
import mps
import procs


def fake_proc(root, pid, comm, ppid, session, *, rss_kb=1000, threads=3, fds=4, state="S", environ=None):
    """One process of a fake /proc tree, in the kernel's formats."""
    d = os.path.join(root, str(pid))
    os.makedirs(os.path.join(d, "fd"), exist_ok=True)
    with open(os.path.join(d, "stat"), "w") as fh:
        fh.write(f"{pid} ({comm}) {state} {ppid} {session} {session} 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 "
                 f"{threads} 0 1234 5678 {rss_kb // 4}\n")
    with open(os.path.join(d, "status"), "w") as fh:
        fh.write(f"Name:\t{comm}\nState:\t{state} (sleeping)\nPid:\t{pid}\nPPid:\t{ppid}\n"
                 + ("" if state == "Z" else f"VmPeak:\t{rss_kb * 2} kB\nVmRSS:\t{rss_kb} kB\n")
                 + f"Threads:\t{threads}\n")
    for n in range(fds):
        open(os.path.join(d, "fd", str(n)), "w").close()
    with open(os.path.join(d, "environ"), "w") as fh:
        fh.write("".join(f"{k}={v}\0" for k, v in (environ or {}).items()))


class FakeProcTree(unittest.TestCase):
    """mpirun (100, session leader) -> two ranks (101, 102, exec'd through sh); a rank's helper
    (103); a rank that left the tree but not the session (104); strangers (1, 200)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        r = self.root = self.tmp.name
        fake_proc(r, 1, "init", 0, 1)
        fake_proc(r, 100, "mpirun", 1, 100)
        fake_proc(r, 101, "all_reduce_perf", 100, 100, rss_kb=500000, threads=40, fds=60)
        fake_proc(r, 102, "all_reduce_perf", 100, 100, rss_kb=510000, threads=41, fds=61)
        fake_proc(r, 103, "cuda-EvtHandlr", 101, 100)
        fake_proc(r, 104, "all_reduce_perf", 1, 100)
        fake_proc(r, 105, "all_reduce_perf", 100, 100, state="Z")
        fake_proc(r, 200, "all_reduce_perf", 1, 200)
        fake_proc(r, 300, "odd) name (x", 1, 300)
        os.makedirs(os.path.join(r, "self"))                 # non-numeric entries are ignored

    def tearDown(self):
        self.tmp.cleanup()

    def test_stat_and_family(self):
        self.assertEqual(procs.stat(300, self.root), {"comm": "odd) name (x", "state": "S", "ppid": 1, "session": 300})
        self.assertIsNone(procs.stat(999, self.root))
        self.assertEqual(procs.family(100, self.root), {100, 101, 102, 103, 104, 105})
        self.assertEqual(procs.named(100, "all_reduce_perf", self.root), [101, 102, 104])   # not the zombie
        self.assertEqual(procs.named(100, "sendrecv_perf", self.root), [])
        self.assertEqual(procs.named(101, "all_reduce_perf", self.root), [101])   # one process, -g 2
        self.assertFalse(procs.alive(105, self.root))
        self.assertTrue(procs.alive(100, self.root))

    def test_sample(self):
        self.assertEqual(procs.sample(101, self.root), {"rss_kb": 500000, "threads": 40, "fds": 60})
        self.assertIsNone(procs.sample(105, self.root))      # zombie: no VmRSS
        self.assertIsNone(procs.sample(999, self.root))      # gone

    def test_long_names_are_cut_as_the_kernel_cuts_them(self):
        fake_proc(self.root, 110, "reduce_scatter_", 100, 100)
        self.assertEqual(procs.named(100, "reduce_scatter_perf", self.root), [110])

    def test_environ(self):
        fake_proc(self.root, 120, "nvidia-cuda-mps", 1, 120, environ={"CUDA_MPS_PIPE_DIRECTORY": "/tmp/x", "A": "b=c"})
        self.assertEqual(procs.environ(120, self.root), {"CUDA_MPS_PIPE_DIRECTORY": "/tmp/x", "A": "b=c"})
        self.assertEqual(procs.environ(999, self.root), {})

    def test_real_proc_sees_this_process(self):
        me = procs.sample(os.getpid())
        self.assertGreater(me["rss_kb"], 0)
        self.assertGreaterEqual(me["threads"], 1)
        self.assertGreaterEqual(me["fds"], 3)
        self.assertIn(os.getpid(), procs.family(os.getpid()))


class Interrupts(unittest.TestCase):
    def test_held_until_the_block_ends(self):
        steps = []
        with self.assertRaises(KeyboardInterrupt):
            with procs.interrupt_on_sigterm():
                with procs.held_interrupts():
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(0.2)
                    steps.append("after the signal")         # not interrupted here
                steps.append("after the block")              # interrupted before this
        self.assertEqual(steps, ["after the signal"])
        with procs.interrupt_on_sigterm(), procs.held_interrupts():
            pass                                             # nothing pending: nothing raised

    def test_ignored_sigint_stays_ignored(self):
        before = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            with procs.interrupt_on_sigterm():
                self.assertIs(signal.getsignal(signal.SIGINT), signal.SIG_IGN)
        finally:
            signal.signal(signal.SIGINT, before)


class Mps(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.bin = os.path.join(self.tmp.name, "bin")
        os.makedirs(self.bin)
        fakes.install(self.bin, mps.CONTROL, fakes.MPS_CONTROL)
        self.calls = os.path.join(self.tmp.name, "calls.jsonl")
        self.env = {"PATH": self.bin + os.pathsep + os.environ.get("PATH", ""), "FAKE_CALLS": self.calls}
        self.log = os.path.join(self.tmp.name, "out", "mps-log")

    def tearDown(self):
        self.tmp.cleanup()

    def calls_made(self):
        with open(self.calls) as fh:
            return [json.loads(line) for line in fh]

    def test_start_and_stop(self):
        with mps.Daemon(True, self.log, base_env=self.env, wait_s=5) as d:
            pipe = d.env["CUDA_MPS_PIPE_DIRECTORY"]
            self.assertEqual(d.env, {"CUDA_MPS_PIPE_DIRECTORY": pipe, "CUDA_MPS_LOG_DIRECTORY": self.log})
            self.assertTrue(os.path.basename(pipe).startswith("tcpxr-mps-"))
            self.assertEqual(len(d.pids), 1)
            daemon = d.pids[0]
            self.assertTrue(procs.alive(daemon))
            self.assertEqual(d.describe(), f"on (CUDA_MPS_PIPE_DIRECTORY={pipe}, CUDA_MPS_LOG_DIRECTORY={self.log})")
        self.assertEqual(d.problems, [])
        self.assertFalse(procs.alive(daemon))                  # waited until it was gone
        self.assertFalse(os.path.exists(pipe))                 # private pipe directory removed
        self.assertTrue(os.path.isfile(os.path.join(self.log, "control.log")))   # its log is kept
        start, quit_ = self.calls_made()
        self.assertEqual((start["argv"], quit_["argv"], quit_["stdin"]), (["-d"], [], "quit\n"))
        self.assertEqual((start["pipe"], start["log"]), (pipe, self.log))
        self.assertEqual((quit_["pipe"], quit_["log"]), (pipe, self.log))   # the same daemon

    def test_stopped_on_exception_and_interrupt(self):
        for exc in (RuntimeError("run failed"), KeyboardInterrupt()):
            with self.assertRaises(type(exc)):
                with mps.Daemon(True, self.log, base_env=self.env, wait_s=5) as d:
                    daemon = d.pids[0]
                    raise exc
            self.assertFalse(procs.alive(daemon))
            self.assertEqual(d.problems, [])

    def test_sigterm_stops_it_like_ctrl_c(self):
        before = signal.getsignal(signal.SIGTERM)
        with self.assertRaises(KeyboardInterrupt):
            with procs.interrupt_on_sigterm(), mps.Daemon(True, self.log, base_env=self.env, wait_s=5) as d:
                daemon = d.pids[0]
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
        self.assertFalse(procs.alive(daemon))
        self.assertIs(signal.getsignal(signal.SIGTERM), before)

    def test_off(self):
        with mps.Daemon(False, self.log, base_env=self.env) as d:
            self.assertEqual((d.env, d.describe()), ({}, "off"))
        self.assertFalse(os.path.exists(self.calls))
        self.assertFalse(os.path.exists(self.log))

    def test_not_found(self):
        with self.assertRaisesRegex(mps.MpsError, "nvidia-cuda-mps-control not found"):
            mps.Daemon(True, self.log, base_env={"PATH": self.tmp.name}).start()

    def test_start_fails(self):
        env = dict(self.env, FAKE_MPS="fail")
        with self.assertRaisesRegex(mps.MpsError, "exited with status 1: An instance of this daemon"):
            mps.Daemon(True, self.log, base_env=env, wait_s=5).start()

    def test_stuck_daemon_is_reported(self):
        d = mps.Daemon(True, self.log, base_env=dict(self.env, FAKE_MPS="stuck"), wait_s=0.5).start()
        pipe, daemon = d.pipe_dir, d.pids[0]
        problems = d.stop()
        self.assertEqual(len(problems), 1)
        self.assertIn(f"still running 0.5 s after quit (pids {daemon})", problems[0])
        self.assertIn(f"CUDA_MPS_PIPE_DIRECTORY={pipe} sh -c 'echo quit | nvidia-cuda-mps-control'", problems[0])
        self.assertTrue(os.path.isdir(pipe))                   # kept for that command
        open(os.path.join(pipe, "quit"), "w").close()          # end the stand-in now
        deadline = time.monotonic() + 5
        while procs.alive(daemon) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(procs.alive(daemon))


if __name__ == "__main__":
    unittest.main()
