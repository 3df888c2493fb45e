"""Tests of soak.py: its command lines, the progress of a job's output, the verdict over
recorded samples (pure functions), sampling of a fake /proc tree, and short soaks end to end
with a stand-in nccl-tests that repeats its sweep until it is stopped."""

import contextlib
import io
import json
import os
import signal
import tempfile
import threading
import time
import types
import unittest
from unittest import mock

import configs
import fakes
import mps
import procs
import soak
import test_mps

RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recorded")
ARGS = ["--nccl-tests", "/b", "--plugin-dir", "/p"]


def fixture(name):
    with open(os.path.join(RECORDED, name)) as fh:
        return fh.read()


class Args(unittest.TestCase):
    def test_defaults_and_flags(self):
        a = soak.parse_args(ARGS)
        self.assertEqual((a.configs, a.ops, a.duration, a.interval, a.warmup_seconds),
                         (["tcpxr-host", "tcpxr-gpu"], ["all_reduce", "sendrecv"], 600, 10, 60))
        self.assertEqual(a.extra_env, {"NCCL_MIN_NCHANNELS": "16"})
        self.assertEqual(soak.soak_flags(a), ["-b", "8", "-e", str(64 << 20), "-f", "2", "-n", "10", "-w", "2",
                                              "-c", "1", "-N", "0"])
        self.assertIsNone(a.hostfile)
        self.assertEqual(soak.parse_args(ARGS + ["--env", "NCCL_MIN_NCHANNELS=4", "--env", "X=1"]).extra_env,
                         {"NCCL_MIN_NCHANNELS": "4", "X": "1"})
        self.assertEqual(soak.parse_args(ARGS + ["--min-channels", "0"]).extra_env, {})

    def test_bad(self):
        with contextlib.redirect_stderr(io.StringIO()):
            for bad in (["--duration", "30", "--warmup-seconds", "30"], ["--interval", "0"], ["--configs", "x"],
                        ["--hostfile", "h"], ["--max", "1X"], ["--algo", "Tree", "--ops", "all_gather"]):
                with self.assertRaises(SystemExit):
                    soak.parse_args(ARGS + bad)

    def test_one_gpu_command(self):
        """The job's command: run_nccl_tests.py's launch, -N 0, stdbuf -oL before the binary."""
        a = soak.parse_args(ARGS + ["--one-gpu", "--mps", "--env", "CUDA_DEVICE_MAX_CONNECTIONS=1"])
        with tempfile.TemporaryDirectory() as out:
            os.makedirs(os.path.join(out, "logs"))
            spec = soak.runner.prepare(a, "sendrecv", "tcpxr-gpu", out, {"PATH": "/bin"},
                                       {"CUDA_MPS_PIPE_DIRECTORY": "/tmp/m"}, soak.soak_flags(a), ["/usr/bin/stdbuf", "-oL"])
        cmd = spec["cmd"]
        self.assertEqual(cmd[:7], ["mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", "2", "-x"])
        for key in ("NCCL_MIN_NCHANNELS", "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_MPS_PIPE_DIRECTORY", "NCCL_NET",
                    "NCCL_TESTS_DEVICE"):
            self.assertEqual(cmd[cmd.index(key) - 1], "-x")
        at = cmd.index("/usr/bin/stdbuf")
        self.assertEqual(cmd[at - 4:at], soak.runner.rank_wrapper(a))
        self.assertEqual(cmd[at:], ["/usr/bin/stdbuf", "-oL", "/b/sendrecv_perf"] + soak.soak_flags(a) + ["-g", "1"])
        self.assertEqual(spec["over"]["NCCL_MIN_NCHANNELS"], "16")


class Ranks(unittest.TestCase):
    def test_n_ranks_and_algo(self):
        a = soak.parse_args(ARGS + ["--one-gpu", "--ranks", "4", "--algo", "Ring"])
        self.assertEqual(a.nranks, 4)
        self.assertEqual(a.extra_env, {"NCCL_ALGO": "Ring", "NCCL_MIN_NCHANNELS": "16"})
        with tempfile.TemporaryDirectory() as out:
            os.makedirs(os.path.join(out, "logs"))
            spec = soak.runner.prepare(a, "all_reduce", "tcpxr-host", out, {}, {}, soak.soak_flags(a))
        self.assertEqual(spec["cmd"][4:6], ["-np", "4"])
        self.assertEqual(spec["over"]["NCCL_ALGO"], "Ring")
        self.assertIn("NCCL_ALGO", spec["forwarded"])

    def test_a_cycle_ends_at_the_ops_own_last_row(self):
        """At 3 ranks all_gather's last row is not MAX: (16M floats / 3) & ~3 a rank, x 3 x 4 bytes."""
        a = soak.parse_args(ARGS + ["--one-gpu", "--ranks", "3", "--ops", "all_gather,sendrecv,alltoall"])
        self.assertEqual(soak.cycle_ends(a), {"all_gather": 67108848, "sendrecv": 64 << 20, "alltoall": 67108848})
        a = soak.parse_args(ARGS + ["--one-gpu", "--ranks", "4", "--ops", "reduce_scatter"])
        self.assertEqual(soak.cycle_ends(a), {"reduce_scatter": 64 << 20})


class Progress(unittest.TestCase):
    def test_cycles_wrong_and_partial_lines(self):
        one = fixture("all_reduce.socket.synthetic.txt")
        rows = [ln for ln in one.splitlines() if ln.split() and ln.split()[0].isdigit()]
        text = one + "\n".join(rows) + "\n" + rows[0][:40]       # two cycles and a line being written
        p = soak.progress(text, 1 << 30)
        self.assertEqual((p["cycles"], p["rows"], p["wrong"], p["errors"]), (2, 56, [], []))
        self.assertEqual(soak.progress(text, 64 << 20)["cycles"], 2)
        bad = soak.progress(fixture("all_reduce.tcpxr-host.wrong.synthetic.txt"), 1 << 30)
        self.assertEqual(bad["wrong"][0], (4096, "out_of_place", 3))
        self.assertTrue(bad["errors"])
        self.assertEqual(soak.progress("", 8)["cycles"], 0)

    def test_longest_gap(self):
        self.assertEqual(soak._longest_gap([(0, 1), (10, 1), (20, 2), (30, 3), (40, 3)], 50), 20)
        self.assertEqual(soak._longest_gap([(0, 1), (10, 2)], 10), 10)
        self.assertIsNone(soak._longest_gap([], 10))


def samples(figures, pids=(11, 12), job="all_reduce.tcpxr-host", cycles=lambda t: t // 10):
    """Samples every 10 s, t = 0..100; figures(pid, t) -> (rss_kb, threads, fds)."""
    rows, ticks = [], []
    for t in range(0, 101, 10):
        ticks.append({"time_s": t, "cycles": {job: cycles(t)}})
        for pid in pids:
            rss, threads, fds = figures(pid, t)
            rows.append({"time_s": t, "job": job, "pid": pid, "rss_kb": rss, "threads": threads, "fds": fds,
                         "cycles": cycles(t)})
    return rows, ticks


def outcome(**over):
    job = {"ended_early": False, "rc": -15, "end_s": None, "cycles": 10, "rows": 240, "wrong": [], "errors": [],
           "transport": [], "evidence": "ok"}
    return {"all_reduce.tcpxr-host": dict(job, **over)}


def judge(rows, ticks, jobs=None, **kw):
    kw = dict(dict(warmup_s=30, nranks=2, max_rss_growth_kb=16 << 10, max_gap_s=25), **kw)
    return soak.judge(rows, ticks, jobs or outcome(), **kw)


class Verdict(unittest.TestCase):
    def test_flat_after_warm_up_passes(self):
        # warm-up: RSS, threads and fds grow; after 30 s flat, RSS wobbling within the bound
        rows, ticks = samples(lambda pid, t: (500000 + min(t, 30) * 1000 + (t % 20) * 100, 40 + min(t, 30) // 10,
                                              60 + min(t, 30) // 10))
        ok, problems, per_job, per_rank = judge(rows, ticks)
        self.assertTrue(ok, problems)
        self.assertEqual(per_job["all_reduce.tcpxr-host"], {"warm_s": 30, "gap_s": 10, "cycles_warm": 3})
        fig = per_rank[("all_reduce.tcpxr-host", 11)]
        self.assertEqual(fig["threads"], {"first": 40, "warm": 43, "last": 43, "max": 43})
        self.assertEqual(fig["rss_kb"]["first"], 500000)
        self.assertEqual(fig["rss_kb"]["warm"], 530000 + 1000)
        text = soak.markdown("t", ok, problems, "criteria", ["n"], outcome(), per_job, per_rank)
        self.assertIn("**PASS**", text)
        self.assertIn("| all_reduce.tcpxr-host | -15 (stopped by the soak) | 10 | 7 | 240 | 0 | 0 | ok (ok) | 30 | 10 |",
                      text)
        self.assertIn("| all_reduce.tcpxr-host | 11 | 500000 / 531000 / 530000 / 531000 | -1000 | 40 / 43 / 43 / 43 |",
                      text)

    def test_leaks_fail(self):
        rows, ticks = samples(lambda pid, t: (500000 + (t * 400 if pid == 12 else 0), 40 + (t == 100), 60 + t // 50))
        ok, problems, _, _ = judge(rows, ticks)
        self.assertFalse(ok)
        self.assertIn("all_reduce.tcpxr-host: pid 11: threads 40 at the end of warm-up, 41 at the end", problems)
        self.assertIn("all_reduce.tcpxr-host: pid 11: fds 60 at the end of warm-up, 62 at the end", problems)
        self.assertIn("all_reduce.tcpxr-host: pid 12: RSS grew 27.3 MiB after warm-up (limit 16 MiB)", problems)
        self.assertNotIn("pid 11: RSS", " ".join(problems))

    def test_threads_back_to_the_warm_up_count_pass(self):
        rows, ticks = samples(lambda pid, t: (500000, 40 + (t == 60), 60))      # a transient thread
        ok, problems, _, per_rank = judge(rows, ticks)
        self.assertTrue(ok, problems)
        self.assertEqual(per_rank[("all_reduce.tcpxr-host", 11)]["threads"]["max"], 41)   # still reported

    def test_job_failures(self):
        rows, ticks = samples(lambda pid, t: (500000, 40, 60))
        ok, problems, _, _ = judge(rows, ticks, outcome(ended_early=True, end_s=42.0, rc=3,
                                                        wrong=[(8, "out_of_place", 2)], errors=["NCCL failure x"],
                                                        transport=["transport: used Socket instead of tcpxr"]))
        self.assertFalse(ok)
        self.assertEqual(problems[:4], ["all_reduce.tcpxr-host: exited by itself after 42 s with status 3",
                                        "all_reduce.tcpxr-host: #wrong > 0 1 time(s) (size, placement, #wrong): 8 B out-of-place 2",
                                        "all_reduce.tcpxr-host: error lines in the output: NCCL failure x",
                                        "all_reduce.tcpxr-host: transport: used Socket instead of tcpxr"])

    def test_many_wrong_rows_are_counted(self):
        rows, ticks = samples(lambda pid, t: (500000, 40, 60))
        wrong = [(8 << i, "in_place", i + 1) for i in range(12)]
        problem = judge(rows, ticks, outcome(wrong=wrong))[1][0]
        self.assertTrue(problem.startswith("all_reduce.tcpxr-host: #wrong > 0 12 time(s) (size, placement, "
                                           "#wrong): 8 B in-place 1, 16 B in-place 2"), problem)
        self.assertTrue(problem.endswith("4 KiB in-place 10 and 2 more (see the job's .txt)"), problem)

    def test_hang_and_gaps(self):
        rows, ticks = samples(lambda pid, t: (500000, 40, 60), cycles=lambda t: min(t // 10, 4))
        ok, problems, per_job, _ = judge(rows, ticks)
        self.assertFalse(ok)
        self.assertEqual(problems, ["all_reduce.tcpxr-host: 60 s without a complete cycle after warm-up (limit 25 s)"])
        rows, ticks = samples(lambda pid, t: (500000, 40, 60), cycles=lambda t: min(t // 10, 3))
        self.assertIn("all_reduce.tcpxr-host: no complete cycle after warm-up (hung?)", judge(rows, ticks)[1])
        rows, ticks = samples(lambda pid, t: (500000, 40, 60), cycles=lambda t: 0)
        self.assertEqual(judge(rows, ticks)[1], ["all_reduce.tcpxr-host: no complete cycle in any sample"])

    def test_warm_up_waits_for_the_first_cycle(self):
        rows, ticks = samples(lambda pid, t: (500000 + min(t, 70) * 1000, 40, 60), cycles=lambda t: max(0, t - 60) // 5)
        ok, problems, per_job, _ = judge(rows, ticks, max_gap_s=100)
        self.assertTrue(ok, problems)
        self.assertEqual(per_job["all_reduce.tcpxr-host"]["warm_s"], 70)
        rows, ticks = samples(lambda pid, t: (500000, 40, 60), cycles=lambda t: t // 100)
        self.assertIn("fewer than two samples after warm-up (it ends at 100 s): run longer", judge(rows, ticks)[1][0])

    def test_rank_processes_counted(self):
        rows, ticks = samples(lambda pid, t: (500000, 40, 60))
        rows = [r for r in rows if not (r["pid"] == 12 and r["time_s"] >= 80)]
        self.assertEqual(judge(rows, ticks)[1], ["all_reduce.tcpxr-host: 1 rank process(es) found at 80 s, expected 2"])
        self.assertTrue(judge([r for r in rows if r["pid"] == 11], ticks, nranks=1)[0])


class Sampling(unittest.TestCase):
    def test_fake_proc_tree(self):
        with tempfile.TemporaryDirectory() as root:
            test_mps.fake_proc(root, 100, "mpirun", 1, 100)
            test_mps.fake_proc(root, 101, "sendrecv_perf", 100, 100, rss_kb=700000, threads=90, fds=120)
            test_mps.fake_proc(root, 102, "sendrecv_perf", 100, 100, rss_kb=710000, threads=91, fds=121)
            test_mps.fake_proc(root, 200, "sendrecv_perf", 1, 200)            # another job's
            jobs = {"sendrecv.tcpxr-gpu": {"proc": types.SimpleNamespace(pid=100), "name": "sendrecv_perf"}}
            rows = soak.sample(jobs, 12.34, {"sendrecv.tcpxr-gpu": 7}, root)
        self.assertEqual(rows, [
            {"time_s": 12.3, "job": "sendrecv.tcpxr-gpu", "pid": 101, "rss_kb": 700000, "threads": 90, "fds": 120,
             "cycles": 7},
            {"time_s": 12.3, "job": "sendrecv.tcpxr-gpu", "pid": 102, "rss_kb": 710000, "threads": 91, "fds": 121,
             "cycles": 7}])


class EndToEnd(unittest.TestCase):
    """Short soaks with the stand-in nccl-tests (real processes, real /proc)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.build, self.plugin, self.out, self.bin = (os.path.join(t, d) for d in ("build", "plugin", "out", "bin"))
        for d in (self.build, self.plugin, self.bin):
            os.makedirs(d)
        open(os.path.join(self.plugin, configs.PLUGIN_FILE), "w").close()
        for op in ("all_reduce", "sendrecv", "all_gather"):
            fakes.install(self.build, f"{op}_perf", fakes.NCCL_TESTS_LOOP)
        fakes.install(self.bin, "mpirun", fakes.MPIRUN)
        fakes.install(self.bin, mps.CONTROL, fakes.MPS_CONTROL)
        self.calls = os.path.join(t, "calls.jsonl")

    def tearDown(self):
        self.tmp.cleanup()

    def run_main(self, mode, *extra):
        env = {"FAKE_MODE": mode, "FAKE_CALLS": self.calls, "PATH": self.bin + os.pathsep + os.environ["PATH"]}
        out = io.StringIO()
        with mock.patch.dict(os.environ, env), contextlib.redirect_stdout(out):
            rc = soak.main(["--nccl-tests", self.build, "--plugin-dir", self.plugin, "--out", self.out,
                            "--duration", "4", "--interval", "0.5", "--warmup-seconds", "1", "--max", "64K", *extra])
        return rc, out.getvalue()

    def read(self, name):
        with open(os.path.join(self.out, name)) as fh:
            return fh.read()

    def ranks(self):
        with open(self.calls) as fh:
            return [c for c in map(json.loads, fh) if "prog" not in c]

    def test_pass(self):
        rc, text = self.run_main("ok")
        self.assertEqual(rc, 0, text)
        self.assertTrue(text.rstrip().endswith("PASS"), text)
        md = self.read("soak.md")
        self.assertIn("**PASS**", md)
        for job in ("all_reduce.tcpxr-host", "all_reduce.tcpxr-gpu", "sendrecv.tcpxr-host", "sendrecv.tcpxr-gpu"):
            self.assertRegex(md, rf"\| {job} \| -15 \(stopped by the soak\) \| \d+ \| \d+ \|")
        self.assertIn("device unpack v7", md)                      # tcpxr-gpu's transport check
        csv_lines = self.read("soak.csv").splitlines()
        self.assertEqual(csv_lines[0], "time_s,job,pid,rss_kb,threads,fds,cycles")
        self.assertGreaterEqual(len(csv_lines), 1 + 4 * 2)   # PASS needs two samples after warm-up
        calls = self.ranks()
        self.assertEqual(len(calls), 4)                             # one process each, -g 2
        for c in calls:
            self.assertEqual(c["argv"][-4:], ["-N", "0", "-g", "2"])
            self.assertEqual(c["env"]["NCCL_MIN_NCHANNELS"], "16")
        settings = self.read("sendrecv.tcpxr-gpu.settings.txt")
        self.assertIn("soak: 4 s, samples every 0.5 s, warm-up 1 s, all 4 jobs at once", settings)
        self.assertIn("output buffering: stdbuf -oL", settings)
        self.assertIn("  NCCL_MIN_NCHANNELS=16", settings)
        self.assertTrue(all(not procs.alive(c["pid"]) for c in calls))   # every job stopped

    def test_fd_leak_fails(self):
        rc, text = self.run_main("leak", "--configs", "tcpxr-host", "--ops", "sendrecv")
        self.assertEqual(rc, 1)
        self.assertRegex(text, r"FAILED sendrecv\.tcpxr-host: pid \d+: fds \d+ at the end of warm-up, \d+ at the end")
        self.assertIn("**FAIL**", self.read("soak.md"))

    def test_wrong_stops_early(self):
        rc, text = self.run_main("wrong", "--configs", "tcpxr-host", "--ops", "all_reduce", "--duration", "20")
        self.assertEqual(rc, 1)
        self.assertIn("stopping early: all_reduce.tcpxr-host failed", text)
        self.assertIn("FAILED all_reduce.tcpxr-host: #wrong > 0 2 time(s) (size, placement, #wrong): "
                      "8 B out-of-place 5, 8 B in-place 5", text)

    def test_exit_fails(self):
        rc, text = self.run_main("exit", "--configs", "tcpxr-gpu", "--ops", "all_reduce", "--duration", "20")
        self.assertEqual(rc, 1)
        self.assertRegex(text, r"FAILED all_reduce\.tcpxr-gpu: exited by itself after \d+ s with status 3")
        self.assertRegex(self.read("soak.md"), r"\| all_reduce\.tcpxr-gpu \| 3 \(exited by itself at \d+ s\) \|")

    def test_sigterm_ends_every_job_and_mps(self):
        """kill <soak.py's pid> in the middle: no job (-N 0 runs forever) and no MPS daemon is left."""
        def kill_when_both_jobs_run():
            deadline = time.monotonic() + 30      # well before the soak would end by itself
            while time.monotonic() < deadline:
                try:
                    if len(self.ranks()) == 2:
                        break
                except (OSError, ValueError):     # not written yet, or a line being written
                    pass
                time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGTERM)

        killer = threading.Thread(target=kill_when_both_jobs_run)
        killer.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                self.run_main("ok", "--mps", "--ops", "sendrecv", "--duration", "60")
        finally:
            killer.join()
        with open(self.calls) as fh:
            calls = [json.loads(line) for line in fh]
        ranks = [c for c in calls if "prog" not in c]
        self.assertEqual(len(ranks), 2)
        self.assertTrue(all(not procs.alive(c["pid"]) for c in ranks))
        start, quit_ = [c for c in calls if c.get("prog") == "mps"]
        self.assertFalse(os.path.exists(start["pipe"]))

    def test_three_ranks_on_one_gpu(self):
        """3 ranks, 3 NCCL hosts: all_gather's cycles end at its own last row (not MAX), and each
        job must show 3 rank processes."""
        rc, text = self.run_main("ok", "--one-gpu", "--mps", "--ranks", "3", "--algo", "Ring", "--configs", "tcpxr-host",
                                 "--ops", "all_gather,sendrecv")
        self.assertEqual(rc, 0, text)
        ranks = self.ranks()
        self.assertEqual(len(ranks), 2 * 3)
        self.assertEqual(sorted({c["env"]["NCCL_HOSTID"] for c in ranks}),
                         [f"tcpxr-one-gpu-rank{r}" for r in range(3)])
        self.assertTrue(all(c["env"]["NCCL_ALGO"] == "Ring" for c in ranks))
        md = self.read("soak.md")
        self.assertIn("3 rank process(es) in every sample after warm-up", md)
        self.assertIn("ranks: 3; NCCL algorithm: NCCL_ALGO=Ring (forced by --algo)", md)
        self.assertRegex(md, r"\| all_gather\.tcpxr-host \| -15 \(stopped by the soak\) \| [1-9]\d* \|")

    def test_one_gpu_under_mps(self):
        rc, text = self.run_main("ok", "--one-gpu", "--mps", "--configs", "tcpxr-gpu", "--ops", "sendrecv",
                                 "--env", "CUDA_DEVICE_MAX_CONNECTIONS=1")
        self.assertEqual(rc, 0, text)
        with open(self.calls) as fh:
            start, quit_ = [c for c in map(json.loads, fh) if c.get("prog") == "mps"]
        ranks = self.ranks()
        self.assertEqual(sorted(c["env"]["NCCL_HOSTID"] for c in ranks), ["tcpxr-one-gpu-rank0", "tcpxr-one-gpu-rank1"])
        for c in ranks:
            self.assertEqual(c["env"]["CUDA_MPS_PIPE_DIRECTORY"], start["pipe"])
            self.assertEqual(c["env"]["CUDA_DEVICE_MAX_CONNECTIONS"], "1")
        self.assertFalse(os.path.exists(start["pipe"]))
        self.assertTrue(all(not procs.alive(c["pid"]) for c in ranks))   # each in its own process group
        md = self.read("soak.md")
        self.assertIn("2 rank process(es) in every sample after warm-up", md)
        self.assertIn(f"MPS: on (CUDA_MPS_PIPE_DIRECTORY={start['pipe']}", md)
        self.assertIn("--env extras (every job): CUDA_DEVICE_MAX_CONNECTIONS=1 NCCL_MIN_NCHANNELS=16", md)
        self.assertEqual(len([ln for ln in md.splitlines() if ln.startswith("| sendrecv.tcpxr-gpu | ")]), 3)  # job + 2 ranks


if __name__ == "__main__":
    unittest.main()
