"""Tests of configs.py and run_nccl_tests.py, end to end with fake nccl-tests
binaries that print the recorded fixtures and write an NCCL INFO log."""

import contextlib
import csv
import io
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
import unittest
from unittest import mock

import configs
import fakes
import mps
import procs
import run_nccl_tests

RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recorded")

def read(path):
    with open(path) as fh:
        return fh.read()


FAKE = r'''#!/usr/bin/env python3
import json, os, signal, socket, sys, time
op = os.path.basename(sys.argv[0])[: -len("_perf")]
mode = os.environ.get("FAKE_MODE", "ok")
name = {"all_reduce": "all_reduce.socket.synthetic.txt", "sendrecv": "sendrecv.socket-4x4.synthetic.txt"}[op]
bad = mode == "wrong" and op == "all_reduce" and os.environ["NCCL_NET"] == "tcpxr"
if bad:
    name = "all_reduce.tcpxr-host.wrong.synthetic.txt"
if os.environ.get("OMPI_COMM_WORLD_RANK", "0") == "0":   # nccl-tests prints from rank 0 only
    sys.stdout.write(open(os.path.join(RECORDED, name)).read())
with open(os.environ["FAKE_CALLS"], "a") as fh:
    fh.write(json.dumps({"argv": sys.argv[1:], "pid": os.getpid(), "env": {k: v for k, v in os.environ.items()
                         if k.startswith(("NCCL_", "CUDA_", "OMPI_"))}}) + "\n")
if mode == "interrupt":                 # kill <runner> (as Ctrl-C: KeyboardInterrupt) during this run
    if os.environ.get("OMPI_COMM_WORLD_RANK", "0") == "0":
        os.kill(int(os.environ["FAKE_RUNNER_PID"]), signal.SIGTERM)
    time.sleep(30)
net = "Socket" if mode == "fallback" else os.environ["NCCL_NET"]
gdr = "/GDRDMA" if os.environ.get("NCCL_NET_GDR_LEVEL") == "SYS" else ""
log = os.environ["NCCL_DEBUG_FILE"].replace("%h", socket.gethostname()).replace("%p", str(os.getpid()))
with open(log, "w") as fh:
    if os.environ.get("NCCL_NET_PLUGIN", "").endswith("libnccl-net-tcpxr.so"):
        fh.write("h:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin tcpxr (v11)\n")
        if gdr and mode != "no-unpack":
            fh.write("h:1:1 [0] NCCL INFO Using NCCL_NET_DEVICE_UNPACK net plugin version 7\n")
        if os.environ.get("NCCL_TCPXR_STATS") == "1":
            fh.write("h:1:3 [0] NCCL INFO NET/tcpxr stats send: 10 messages (2 inline), 8.0 MB in 1.00 s; "
                     "window stalls 4; 2 stripes\n"
                     "h:1:3 [0] NCCL INFO NET/tcpxr stats send s0: 4.0 MB in 8 chunks 40% busy, queued ahead avg 1.5 "
                     "max 3\n"
                     "h:1:3 [0] NCCL INFO NET/tcpxr stats send s1: 4.0 MB in 8 chunks 20% busy, queued ahead avg 0.5 "
                     "max 2\n")
    fh.write(f"h:1:1 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\nh:1:1 [0] NCCL INFO Using network {net}\n")
    fh.write(f"h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/{net}/0{gdr}\n")
sys.exit(7 if bad else 0)
'''.replace("RECORDED", repr(RECORDED))


class Configs(unittest.TestCase):
    def test_env(self):
        env = configs.build_env("tcpxr-gpu", "/opt/p", "/tmp/o/logs/x", base_env={"PATH": "/bin"})
        for k, v in dict(configs.COMMON_ENV, **configs.SINGLE_HOST_ENV).items():
            self.assertEqual(env[k], v)
        self.assertEqual(env["NCCL_NET"], "tcpxr")
        self.assertEqual(env["NCCL_NET_PLUGIN"], "/opt/p/libnccl-net-tcpxr.so")
        self.assertEqual(env["NCCL_NET_GDR_LEVEL"], "SYS")
        self.assertEqual(env["LD_LIBRARY_PATH"], "/opt/p")
        self.assertEqual(env["NCCL_DEBUG_FILE"], "/tmp/o/logs/x.%h.%p")
        self.assertEqual((env["NCCL_DEBUG"], env["NCCL_DEBUG_SUBSYS"]), ("INFO", "INIT,NET"))
        self.assertEqual(env["PATH"], "/bin")

    def test_debug_subsystems_add_to_the_checked_ones(self):
        env = configs.build_env("tcpxr-host", "/opt/p", "x", base_env={},
                                extra={"NCCL_DEBUG_SUBSYS": "TUNING, NET"})
        self.assertEqual(env["NCCL_DEBUG_SUBSYS"], "INIT,NET,TUNING")

    def test_socket(self):
        env = configs.overrides("socket-4x4", "/opt/p", "x", base_env={})
        self.assertEqual((env["NCCL_NET"], env["NCCL_NSOCKS_PERTHREAD"], env["NCCL_SOCKET_NTHREADS"]),
                         ("Socket", "4", "4"))
        for name, n in (("socket-1x1", "1"), ("socket-2x2", "2")):
            env = configs.overrides(name, "/opt/p", "x", base_env={})
            self.assertEqual((env["NCCL_NET"], env["NCCL_NSOCKS_PERTHREAD"], env["NCCL_SOCKET_NTHREADS"]),
                             ("Socket", n, n))
        self.assertNotIn("NCCL_SOCKET_NTHREADS", configs.overrides("socket", "/opt/p", "x", base_env={}))
        self.assertEqual(configs.DEFAULT_CONFIGS, ["socket", "socket-1x1", "socket-2x2", "socket-4x4",
                                                   "tcpxr-host", "tcpxr-gpu"])
        self.assertNotIn("LD_LIBRARY_PATH", env)
        self.assertEqual(configs.expected_net("socket"), "Socket")
        self.assertIsNone(configs.expected_gdr("socket"))
        self.assertFalse(configs.expected_gdr("tcpxr-host"))
        self.assertEqual([n for n in configs.CONFIGS if configs.expected_device_unpack(n)], ["tcpxr-gpu", "tcpxr-tcpx"])
        self.assertEqual(configs.expectations("tcpxr-gpu"), {"expected": "tcpxr", "gdr": True, "device_unpack": True})
        self.assertEqual(configs.expectations("socket-2x2"), {"expected": "Socket", "gdr": None, "device_unpack": None})

    def test_tcpx_needs_caller_variable(self):
        with self.assertRaisesRegex(configs.ConfigUnavailable, "NCCL_TCPXR_TCPX_LIB"):
            configs.overrides("tcpxr-tcpx", "/opt/p", "x", base_env={})
        env = configs.overrides("tcpxr-tcpx", "/opt/p", "x", base_env={"NCCL_TCPXR_TCPX_LIB": "/t/libtcpx.so"})
        self.assertEqual((env["NCCL_TCPXR_TRANSPORT"], env["NCCL_TCPXR_TCPX_LIB"]), ("tcpx", "/t/libtcpx.so"))

    def test_multi_node_and_extra(self):
        env = configs.overrides("socket", "/p", "x", single_host=False, base_env={},
                                extra={"NCCL_SOCKET_IFNAME": "eth1"})
        self.assertNotIn("NCCL_P2P_DISABLE", env)
        self.assertEqual((env["NCCL_NVLS_ENABLE"], env["NCCL_SOCKET_IFNAME"]), ("0", "eth1"))
        with self.assertRaises(ValueError):
            configs.overrides("socket", "/p", "x", base_env={}, extra={"NCCL_NVLS_ENABLE": "1"})

    def test_inherited(self):
        base = {"NCCL_IB_HCA": "mlx5", "NCCL_NET": "IB", "HOME": "/root"}
        self.assertEqual(configs.inherited_nccl_vars(["socket"], "/p", base), {"NCCL_IB_HCA": "mlx5"})


    def test_variants_need_a_known_base_a_defined_label_and_one_setting_a_flag(self):
        added = []
        self.addCleanup(lambda: [(configs.CONFIGS.pop(n), configs.DESCRIPTIONS.pop(n)) for n in added])
        names = configs.add_variants(["socket", "tcpxr-gpu+w"], ["w:NCCL_TCPXR_UNREAD_BYTES=256K", "w:X=1"])
        added.append("tcpxr-gpu+w")
        self.assertEqual(names, ["socket", "tcpxr-gpu+w"])
        self.assertEqual(configs.CONFIGS["tcpxr-gpu+w"],
                         dict(configs.CONFIGS["tcpxr-gpu"], NCCL_TCPXR_UNREAD_BYTES="256K", X="1"))
        self.assertTrue(configs.DESCRIPTIONS["tcpxr-gpu+w"].endswith(", with NCCL_TCPXR_UNREAD_BYTES=256K X=1"))
        self.assertTrue(configs.expected_device_unpack("tcpxr-gpu+w"))     # its base's checks
        self.assertEqual(configs.expected_net("tcpxr-gpu+w"), "tcpxr")
        for names, specs, why in ((["nope+w"], ["w:A=1"], "'nope' is not a configuration"),
                                  (["socket+v"], ["w:A=1"], "no --variant v:KEY=VALUE"),
                                  (["socket+w"], ["w:A"], "use LABEL:KEY=VALUE"),
                                  (["socket+w"], ["A=1"], "use LABEL:KEY=VALUE"),
                                  (["socket"], ["w:A=1"], "--variant w is not used")):
            with self.assertRaises(ValueError) as e:
                configs.add_variants(names, specs)
            self.assertIn(why, str(e.exception))
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            run_nccl_tests.parse_args(["--nccl-tests", "b", "--plugin-dir", "p", "--configs", "socket+x"])

class Command(unittest.TestCase):
    def test_single_process(self):
        a = run_nccl_tests.parse_args(["--nccl-tests", "b", "--plugin-dir", "p", "--max", "64M"])
        self.assertEqual(run_nccl_tests.command(a, "b/all_reduce_perf", {"NCCL_NET"}),
                         ["b/all_reduce_perf", "-b", "8", "-e", str(64 << 20), "-f", "2", "-n", "20",
                          "-w", "5", "-c", "1", "-g", "2"])

    def test_mpirun_hostfile(self):
        a = run_nccl_tests.parse_args(["--nccl-tests", "b", "--plugin-dir", "p", "--hostfile", "h", "--np", "16",
                                       "--mpirun-args", "--mca btl_tcp_if_include eth0"])
        cmd = run_nccl_tests.command(a, "b/sendrecv_perf", {"NCCL_NET", "LD_LIBRARY_PATH"})
        self.assertEqual(cmd[:6], ["mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", "16"])
        self.assertIn("--hostfile", cmd)
        self.assertIn("btl_tcp_if_include", cmd)
        self.assertEqual(cmd[cmd.index("-x") + 1], "LD_LIBRARY_PATH")
        self.assertEqual(cmd[-2:], ["-g", "1"])
        self.assertEqual(a.nranks, 16)

    def test_one_gpu_command(self):
        a = run_nccl_tests.parse_args(["--nccl-tests", "b", "--plugin-dir", "p", "--one-gpu"])
        self.assertTrue(a.mpirun)
        self.assertEqual(a.nranks, 2)
        cmd = run_nccl_tests.command(a, "b/all_reduce_perf", {"NCCL_NET"})
        self.assertEqual(cmd[:6], ["mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", "2"])
        wrapper = run_nccl_tests.rank_wrapper(a)
        at = cmd.index("b/all_reduce_perf")
        self.assertEqual(cmd[at - len(wrapper):at], wrapper)
        self.assertEqual(cmd[-2:], ["-g", "1"])

    def test_one_gpu_wrapper_names_a_host_per_rank(self):
        """The wrapper really runs: each MPI rank's binary sees its own NCCL_HOSTID, and the
        arguments arrive untouched."""
        a = run_nccl_tests.parse_args(["--nccl-tests", "b", "--plugin-dir", "p", "--one-gpu"])
        probe = [sys.executable, "-c", "import os, sys; print(os.environ['NCCL_HOSTID'], sys.argv[1:])", "-b", "8 9"]
        seen = []
        for rank_var, rank in (("OMPI_COMM_WORLD_RANK", "0"), ("OMPI_COMM_WORLD_RANK", "1"), ("PMI_RANK", "1")):
            env = {k: v for k, v in os.environ.items() if k not in ("OMPI_COMM_WORLD_RANK", "PMI_RANK")}
            env[rank_var] = rank
            out = subprocess.run(run_nccl_tests.rank_wrapper(a) + probe, env=env, capture_output=True, text=True,
                                 check=True).stdout
            seen.append(out.strip())
        self.assertEqual(seen, ["tcpxr-one-gpu-rank0 ['-b', '8 9']", "tcpxr-one-gpu-rank1 ['-b', '8 9']",
                                "tcpxr-one-gpu-rank1 ['-b', '8 9']"])
        env = {k: v for k, v in os.environ.items() if k not in ("OMPI_COMM_WORLD_RANK", "PMI_RANK")}
        lost = subprocess.run(run_nccl_tests.rank_wrapper(a) + probe, env=env, capture_output=True, text=True)
        self.assertNotEqual(lost.returncode, 0)   # outside MPI: refuses, rather than one name for all ranks
        self.assertIn("no MPI rank", lost.stderr)
        mpirun = run_nccl_tests.parse_args(["--nccl-tests", "b", "--plugin-dir", "p", "--mpirun"])
        self.assertEqual(run_nccl_tests.rank_wrapper(mpirun), ["sh", "-c", run_nccl_tests.RANK_HOSTID, "sh"])
        self.assertEqual(run_nccl_tests.rank_wrapper(run_nccl_tests.parse_args(
            ["--nccl-tests", "b", "--plugin-dir", "p", "--hostfile", "h", "--np", "16"])), [])   # real hosts
        self.assertEqual(run_nccl_tests.rank_wrapper(run_nccl_tests.parse_args(
            ["--nccl-tests", "b", "--plugin-dir", "p"])), [])                                   # one process

    def test_bad_args(self):
        with contextlib.redirect_stderr(io.StringIO()):
            for bad in (["--hostfile", "h"], ["--configs", "nope"], ["--min", "1X"],
                        ["--one-gpu", "--hostfile", "h", "--np", "2"], ["--env", "FOO"], ["--env", "=1"],
                        ["--ranks", "1"], ["--ranks", "0", "--one-gpu"], ["--hostfile", "h", "--np", "8", "--ranks", "4"],
                        ["--algo", "Ring", "--env", "NCCL_ALGO=Tree"], ["--algo", " "], ["--repeat", "0"]):
                with self.assertRaises(SystemExit):
                    run_nccl_tests.parse_args(["--nccl-tests", "b", "--plugin-dir", "p"] + bad)

class Ranks(unittest.TestCase):
    """--ranks N: the command, the ranks each run must show, and the rows nccl-tests prints."""

    def args(self, *extra):
        return run_nccl_tests.parse_args(["--nccl-tests", "b", "--plugin-dir", "p", *extra])

    def test_one_gpu_n_ranks(self):
        for n in (2, 3, 4):
            a = self.args("--one-gpu", "--ranks", str(n))
            self.assertEqual(a.nranks, n)
            cmd = run_nccl_tests.command(a, "b/all_reduce_perf", {"NCCL_NET"})
            self.assertEqual(cmd[:6], ["mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", str(n)])
            self.assertEqual(cmd[cmd.index("sh"):cmd.index("sh") + 4], ["sh", "-c", run_nccl_tests.ONE_GPU_HOSTID, "sh"])
            self.assertEqual(cmd[-2:], ["-g", "1"])
            self.assertEqual(run_nccl_tests.mode_text(a), f"mpirun -np {n} on GPU 0, one NCCL_HOSTID per rank, -g 1")
        a = self.args("--one-gpu", "--ranks", "3", "--mps")
        self.assertIn("all 3 ranks share GPU 0 and run concurrently", run_nccl_tests.one_gpu_note(a))
        self.assertIn("both ranks share GPU 0", run_nccl_tests.one_gpu_note(self.args("--one-gpu")))

    def test_one_rank_per_gpu(self):
        a = self.args("--mpirun", "--ranks", "4")
        cmd = run_nccl_tests.command(a, "b/sendrecv_perf", {"NCCL_NET"})
        self.assertEqual(cmd[4:6], ["-np", "4"])
        self.assertIn(run_nccl_tests.RANK_HOSTID, cmd)             # each rank its own NCCL host
        self.assertIn("tcpxr-rank${OMPI_COMM_WORLD_RANK", run_nccl_tests.RANK_HOSTID)
        self.assertEqual(run_nccl_tests.mode_text(a),
                         "mpirun -np 4, rank r on GPU r (GPUs 0-3), one NCCL_HOSTID per rank, -g 1")
        one = self.args("--ranks", "3")                            # one process, MPI=0 build
        self.assertEqual(run_nccl_tests.command(one, "b/sendrecv_perf", set())[-2:], ["-g", "3"])
        self.assertEqual(run_nccl_tests.mode_text(one), "one process, -g 3 (GPUs 0-2, one NCCL host)")
        self.assertEqual(self.args("--hostfile", "h", "--np", "16", "--ranks", "16").nranks, 16)

    def test_gpu_count(self):
        info = {"gpus": "GPU 0: NVIDIA H200 (UUID: x)\nGPU 1: NVIDIA H200 (UUID: y)"}
        self.assertEqual(run_nccl_tests.settings.gpu_count(info, {}), 2)
        self.assertEqual(run_nccl_tests.settings.gpu_count(info, {"CUDA_VISIBLE_DEVICES": "1"}), 1)
        self.assertIsNone(run_nccl_tests.settings.gpu_count({"gpus": "(nvidia-smi not found)"}, {}))
        self.assertEqual(run_nccl_tests.gpu_problems(self.args("--mpirun", "--ranks", "2"), info, {}), [])
        self.assertEqual(run_nccl_tests.gpu_problems(self.args("--mpirun", "--ranks", "3"), info, {}),
                         ["3 ranks one per GPU need 3 GPUs, this host shows 2 (--one-gpu puts every rank on GPU 0)"])
        self.assertEqual(run_nccl_tests.gpu_problems(self.args("--one-gpu", "--ranks", "4"), info, {}), [])

    def test_algo(self):
        a = self.args("--one-gpu", "--algo", "Tree")
        self.assertEqual(a.extra_env, {"NCCL_ALGO": "Tree"})
        self.assertEqual(run_nccl_tests.algo_text(a, {}), "NCCL_ALGO=Tree (forced by --algo)")
        self.assertEqual(run_nccl_tests.algo_tag(a, {}), "NCCL_ALGO=Tree")
        same = self.args("--algo", "Ring", "--env", "NCCL_ALGO=Ring")
        self.assertEqual(same.extra_env, {"NCCL_ALGO": "Ring"})
        env = self.args("--env", "NCCL_ALGO=^PAT")
        self.assertEqual(run_nccl_tests.algo_text(env, {}), "NCCL_ALGO=^PAT (forced by --env)")
        plain = self.args()
        self.assertEqual(run_nccl_tests.algo_text(plain, {}), "NCCL's own choice (NCCL_ALGO unset)")
        self.assertEqual(run_nccl_tests.algo_tag(plain, {}), "")
        self.assertEqual(run_nccl_tests.algo_text(plain, {"NCCL_ALGO": "Ring"}), "NCCL_ALGO=Ring (from your environment)")
        over = configs.overrides("tcpxr-host", "/p", "x", base_env={}, extra=a.extra_env)
        self.assertEqual(over["NCCL_ALGO"], "Tree")

    def test_forced_tree_refuses_the_collectives_nccl_has_no_tree_for(self):
        with contextlib.redirect_stderr(io.StringIO()) as err, self.assertRaises(SystemExit):
            self.args("--one-gpu", "--algo", "Tree", "--ops", "all_reduce,all_gather,sendrecv,reduce")
        self.assertIn("refuses all_gather, reduce", err.getvalue())
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit):
            self.args("--env", "NCCL_ALGO=tree", "--ops", "reduce_scatter")
        # The tree with the point-to-point ops, or with another algorithm allowed: accepted.
        self.assertEqual(self.args("--algo", "Tree", "--ops", "all_reduce,sendrecv,alltoall").ops,
                         ["all_reduce", "sendrecv", "alltoall"])
        for algo in ("Tree,Ring", "^Ring", "allreduce:Tree"):
            self.assertEqual(self.args("--algo", algo, "--ops", "all_gather").ops, ["all_gather"])

    def test_rows_scale_with_ranks(self):
        """nccl-tests 2.19.6 (<op>GetCollByteCount): all_gather, reduce_scatter and alltoall hold
        (count / nranks) & ~3 floats a rank and print that times the ranks; the others print MIN..MAX."""
        sizes = lambda n, op: run_nccl_tests.expected_sizes(mock.Mock(min_bytes=8, max_bytes=32 << 20, nranks=n), op)
        powers = [8 << i for i in range(23)]                          # 8 B .. 32 MiB
        for n in (2, 3, 4):
            for op in ("all_reduce", "broadcast", "reduce", "sendrecv"):
                self.assertEqual(sizes(n, op), powers)
        self.assertEqual(sizes(2, "all_gather")[:3], [32, 64, 128])
        self.assertEqual(sizes(4, "alltoall")[:3], [64, 128, 256])     # 64 B: 16 floats, 4 a rank
        self.assertEqual(sizes(4, "alltoall")[-1], 32 << 20)
        three = sizes(3, "reduce_scatter")
        self.assertEqual(three[:4], [48, 96, 240, 480])                 # 64 B: 16 floats -> 4 a rank -> 48 B
        self.assertEqual(three[-1], ((((32 << 20) // 4) // 3) & ~3) * 3 * 4)
        self.assertEqual(three[-1], 33554400)
        self.assertEqual(sizes(3, "all_gather"), three)
        self.assertEqual(len(three), 20)                                # 8, 16 and 32 B print as 0
        self.assertNotEqual(powers, three)


class EndToEnd(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.build, self.plugin, self.out = (os.path.join(t, d) for d in ("build", "plugin", "out"))
        os.makedirs(self.build)
        os.makedirs(self.plugin)
        open(os.path.join(self.plugin, configs.PLUGIN_FILE), "w").close()
        for op in ("all_reduce", "sendrecv"):
            path = os.path.join(self.build, f"{op}_perf")
            with open(path, "w") as fh:
                fh.write(FAKE)
            os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
        self.calls = os.path.join(t, "calls.jsonl")
        self.bin = os.path.join(t, "bin")
        os.makedirs(self.bin)
        fakes.install(self.bin, "mpirun", fakes.MPIRUN)
        fakes.install(self.bin, mps.CONTROL, fakes.MPS_CONTROL)
        fakes.install(self.bin, "nvidia-smi", fakes.NVIDIA_SMI)
        self.env_more = {}

    def sweep_fakes(self, *ops):
        """nccl-tests stand-ins that print the rows and ranks of any rank count."""
        for op in ops:
            fakes.install(self.build, f"{op}_perf", fakes.NCCL_TESTS_SWEEP)

    def calls_made(self, prog=None):
        calls = [json.loads(line) for line in read(self.calls).splitlines()]
        return [c for c in calls if c.get("prog") == prog]

    def tearDown(self):
        self.tmp.cleanup()

    def run_main(self, mode, *extra, fake_bin=False):
        env = {"FAKE_MODE": mode, "FAKE_CALLS": self.calls, "FAKE_RUNNER_PID": str(os.getpid()), "FAKE_GPUS": "2"}
        env.update(self.env_more)
        if fake_bin:                   # mpirun, nvidia-cuda-mps-control and nvidia-smi stand-ins
            env["PATH"] = self.bin + os.pathsep + os.environ.get("PATH", "")
        out = io.StringIO()
        with mock.patch.dict(os.environ, env), contextlib.redirect_stdout(out):
            rc = run_nccl_tests.main(["--nccl-tests", self.build, "--plugin-dir", self.plugin,
                                      "--out", self.out, *extra])
        return rc, out.getvalue()

    def test_all_ok(self):
        rc, text = self.run_main("ok")
        self.assertEqual(rc, 0, text)
        self.assertIn("ALL OK", text)
        for name in ("summary.md", "summary.csv", "run.json", "all_reduce.socket.txt", "sendrecv.tcpxr-gpu.txt"):
            self.assertTrue(os.path.isfile(os.path.join(self.out, name)), name)
        self.assertTrue(any(os.path.isfile(os.path.join(self.out, f"busbw.{x}")) for x in ("png", "svg")))
        calls = self.calls_made()
        self.assertEqual(len(calls), 12)  # 2 ops x 6 default configs
        self.assertEqual(len({tuple(c["argv"]) for c in calls}), 1)  # identical flags everywhere
        self.assertTrue(all(c["env"]["NCCL_NVLS_ENABLE"] == "0" for c in calls))
        with open(os.path.join(self.out, "summary.csv")) as fh:
            rows = list(csv.DictReader(fh))
        self.assertEqual(len(rows), 56)  # 2 ops x 28 sizes
        big = next(r for r in rows if r["op"] == "all_reduce" and r["size_bytes"] == str(1 << 30))
        self.assertEqual(big["busbw_socket"], "3.44")
        self.assertEqual(big["tcpxr-gpu/socket-4x4"], "1.0000")
        self.assertEqual(big["best_socket"], "socket")  # all equal: the first in order
        self.assertEqual(big["tcpxr-gpu/best_socket"], "1.0000")
        md = read(os.path.join(self.out, "summary.md"))
        self.assertIn("| 1 GiB | 3.44 | 3.44 | 3.44 | 3.44 | 3.44 | 3.44 | socket | 1.00 | 1.00 |", md)
        self.assertIn("8 B time (us): socket 22.90", md)
        self.assertIn("NCCL 2.28.3+cuda13.0", md)
        self.assertRegex(md, r"CPU cores busy, .*all_reduce socket [0-9.]+, ")
        # tcpxr rows carry tcpxr's own counters (the configs turn NCCL_TCPXR_STATS on); Socket rows none.
        self.assertTrue(all(c["env"].get("NCCL_TCPXR_STATS") == ("1" if c["env"]["NCCL_NET"] == "tcpxr" else None)
                            for c in calls))
        line = "send: 1 conns, 8.0 MB, stripes 30.0% busy, queued ahead 1.0 (max 3), window stalls 4"
        self.assertIn(f"tcpxr stats: {line}", text)
        self.assertIn(f"all_reduce tcpxr-host: {line}", md)
        self.assertNotIn("all_reduce socket: send", md)

    def test_repeat_starts_pass_k_with_the_kth_config_reverses_odd_passes_and_tables_the_median(self):
        rc, text = self.run_main("ok", "--configs", "socket,socket-2x2,tcpxr-host", "--ops", "all_reduce",
                                 "--repeat", "3")
        self.assertEqual(rc, 0, text)
        order = [(c["env"]["NCCL_NET"], c["env"].get("NCCL_SOCKET_NTHREADS")) for c in self.calls_made()]
        socket, two, tcpxr = ("Socket", None), ("Socket", "2"), ("tcpxr", None)
        self.assertEqual(order, [socket, two, tcpxr, two, socket, tcpxr, tcpxr, socket, two])
        for k in (1, 2, 3):
            for name in ("all_reduce.socket.txt", "all_reduce.tcpxr-host.txt", "all_reduce.tcpxr-host.settings.txt"):
                self.assertTrue(os.path.isfile(os.path.join(self.out, f"r{k}", name)), (k, name))
        self.assertFalse(os.path.exists(os.path.join(self.out, "all_reduce.socket.txt")))
        self.assertIn("[9/9] all_reduce socket-2x2 (pass 3 of 3)", text)
        md = read(os.path.join(self.out, "summary.md"))
        self.assertIn("the median of 3 passes", md)
        self.assertIn("8 B time (us): socket 22.90", md)   # every pass printed the same rows
        self.assertEqual(json.loads(read(os.path.join(self.out, "run.json")))["repeat"], 3)

    def test_no_config_always_follows_the_same_other_across_passes(self):
        names = ["a", "b", "c", "d", "e"]
        passes = [run_nccl_tests.pass_order(names, k) for k in range(4)]
        self.assertEqual([p[0] for p in passes], ["a", "b", "c", "d"])
        for p in passes:
            self.assertEqual(sorted(p), names)
        # Two ops a pass, passes back to back: who ran just before each config.
        sequence = [c for p in passes for c in p + p]
        before = {c: {sequence[i - 1] for i in range(1, len(sequence)) if sequence[i] == c} for c in names}
        self.assertTrue(all(len(b) >= 2 for b in before.values()), before)

    def test_a_variant_runs_beside_its_base_in_the_rotation_with_its_own_settings(self):
        self.addCleanup(lambda: (configs.CONFIGS.pop("tcpxr-host+w", None), configs.DESCRIPTIONS.pop("tcpxr-host+w", None)))
        rc, text = self.run_main("ok", "--configs", "socket,tcpxr-host,tcpxr-host+w", "--ops", "all_reduce",
                                 "--repeat", "2", "--variant", "w:NCCL_TCPXR_UNREAD_BYTES=256K",
                                 "--variant", "w:NCCL_TCPXR_UNREAD_MAX_BYTES=4M")
        self.assertEqual(rc, 0, text)
        got = [(c["env"]["NCCL_NET"], c["env"].get("NCCL_TCPXR_UNREAD_BYTES"), c["env"].get("NCCL_TCPXR_UNREAD_MAX_BYTES"))
               for c in self.calls_made()]
        socket_, host, w = ("Socket", None, None), ("tcpxr", None, None), ("tcpxr", "256K", "4M")
        self.assertEqual(got, [socket_, host, w, host, socket_, w])
        for k in (1, 2):
            self.assertTrue(os.path.isfile(os.path.join(self.out, f"r{k}", "all_reduce.tcpxr-host+w.txt")))
        settings = read(os.path.join(self.out, "r1", "all_reduce.tcpxr-host+w.settings.txt"))
        self.assertIn("  NCCL_TCPXR_UNREAD_MAX_BYTES=4M", settings)
        with open(os.path.join(self.out, "summary.csv")) as fh:
            row = next(csv.DictReader(fh))
        self.assertIn("tcpxr-host+w/best_socket", row)
        md = read(os.path.join(self.out, "summary.md"))
        self.assertIn("tcpxr-host+w: tcpxr, socket inner transport, host buffers (GDR off), with "
                      "NCCL_TCPXR_UNREAD_BYTES=256K NCCL_TCPXR_UNREAD_MAX_BYTES=4M", md)

    def test_median_results_take_the_median_pass_at_each_size_and_skip_failed_runs(self):
        def run(op, config, times, problems=()):
            return {"op": op, "config": config, "problems": list(problems),
                    "result": {"rows": [{"size": s, "cycle": 0, "out_of_place": {"time_us": t, "busbw": 1000.0 / t}}
                                        for s, t in times.items()]}}
        runs = [run("sendrecv", "socket", {8: 30.0, 1024: 50.0}), run("sendrecv", "socket", {8: 10.0, 1024: 70.0}),
                run("sendrecv", "socket", {8: 20.0, 1024: 60.0}), run("sendrecv", "tcpxr-host", {8: 5.0}),
                run("sendrecv", "tcpxr-host", {8: 9.0}), run("sendrecv", "tcpxr-host", {8: 1.0}, ["rc 7"])]
        got = run_nccl_tests.median_results(runs, ["sendrecv", "all_reduce"])
        self.assertEqual(got["sendrecv"]["socket"][8], {"time_us": 20.0, "busbw": 50.0})
        self.assertEqual(got["sendrecv"]["socket"][1024]["time_us"], 60.0)
        self.assertEqual(got["sendrecv"]["tcpxr-host"][8]["time_us"], 5.0)   # lower median of 5 and 9; 1 failed
        self.assertEqual(got["all_reduce"], {})
        self.assertEqual(run_nccl_tests.pass_order(["a", "b", "c"], 4), ["b", "c", "a"])

    def test_a_later_cycle_twice_the_fastest_of_its_process_is_listed_and_a_slow_first_one_is_not(self):
        def run(config, cycles_at, k, problems=()):
            return {"op": "all_gather", "config": config, "pass": k, "problems": list(problems),
                    "result": {"rows": [{"size": s, "cycle": c, "out_of_place": {"time_us": t, "busbw": 1.0}}
                                        for s, times in cycles_at.items() for c, t in enumerate(times)]}}
        # Run 381's third pass: Socket 1x1's all_gather of 1 MiB took 1030.03 us in its second
        # cycle against 172.56 in its first; 512 KiB moved less than 2x; at 8 B the first cycle
        # is the slow one (each size's first run in a process), which is never listed.
        runs = [run("socket-1x1", {8: [1020.0, 21.0, 22.0], 524288: [100.0, 199.0], 1048576: [172.56, 1030.03]}, 3),
                run("tcpxr-host", {1048576: [10.0, 50.0]}, 1, ["rc 7"]),
                run("tcpxr-host", {1048576: [176.91, 1818.28]}, 3)]
        got = run_nccl_tests.cycle_jumps(runs)
        self.assertEqual(got, [("all_gather", "socket-1x1", 3, 1048576, 1030.03, 172.56),
                               ("all_gather", "tcpxr-host", 3, 1048576, 1818.28, 176.91)])
        note = run_nccl_tests.jumps_note(got, with_pass=True)
        self.assertIn("at least 2x the same process's fastest", note)
        self.assertIn("all_gather socket-1x1 (pass 3) 1 MiB 1030.0 us against 172.6; "
                      "all_gather tcpxr-host (pass 3) 1 MiB 1818.3 us against 176.9", note)
        self.assertIsNone(run_nccl_tests.jumps_note([], with_pass=True))
        many = run_nccl_tests.jumps_note([("o", "c", 1, 8, 3.0, 1.0)] * 14, with_pass=False, most=12)
        self.assertTrue(many.endswith("o c 8 B 3.0 us against 1.0; and 2 more"), many)

    def test_cycles_run_the_sweep_n_times_a_process_and_table_the_later_cycles(self):
        self.sweep_fakes("all_reduce")
        rc, text = self.run_main("ok", "--mpirun", "--ranks", "2", "--configs", "socket,tcpxr-host",
                                 "--ops", "all_reduce", "--min", "8", "--max", "64", "--cycles", "3", "--repeat", "2",
                                 fake_bin=True)
        self.assertEqual(rc, 0, text)
        calls = [c for c in self.calls_made() if c["env"].get("OMPI_COMM_WORLD_RANK") == "0"]
        self.assertEqual(len(calls), 4)
        self.assertTrue(all(c["argv"][c["argv"].index("-N") + 1] == "3" for c in calls), calls)
        with open(os.path.join(self.out, "summary.csv")) as fh:
            rows = {r["size_bytes"]: r for r in csv.DictReader(fh)}
        # At 8 B each pass took 1020.00 us in its first cycle, then 21.00 and 22.00: the lower
        # median of the later cycles is 21.00 (22.00 were the first cycles counted).
        self.assertEqual(float(rows["8"]["time_us_socket"]), 21.0)
        md = read(os.path.join(self.out, "summary.md"))
        self.assertIn("each process ran the sweep 3 times (-N 3); each figure is the median of the later 2 "
                      "cycles of every pass, the first cycle", md)
        self.assertNotIn("later cycles that took", md, "a slow first cycle is not a jump")
        with open(os.path.join(self.out, "run.json")) as fh:
            self.assertEqual(json.load(fh)["cycles"], 3)
        # Without --cycles: no -N, every row counts.
        self.assertNotIn("-N", run_nccl_tests.test_flags(run_nccl_tests.parse_args(
            ["--nccl-tests", self.build, "--plugin-dir", self.plugin])))

    def test_settings_beside_every_output(self):
        rc, text = self.run_main("ok", "--configs", "socket,tcpxr-host", "--ops", "sendrecv",
                                 "--env", "CUDA_DEVICE_MAX_CONNECTIONS=1", "--env", "NCCL_MIN_NCHANNELS=4")
        self.assertEqual(rc, 0, text)
        got = read(os.path.join(self.out, "sendrecv.tcpxr-host.settings.txt"))
        self.assertTrue(got.startswith("# settings of sendrecv.tcpxr-host.txt\ndate: "), got)
        for line in ("MPS: off", "--env extras: CUDA_DEVICE_MAX_CONNECTIONS=1 NCCL_MIN_NCHANNELS=4",
                     f"nccl-tests: {self.build}, flags -b 8 -e {1 << 30} -f 2 -n 20 -w 5 -c 1",
                     "launch: one process, -g 2", f"command: {self.build}/sendrecv_perf -b 8 -e {1 << 30}",
                     "  CUDA_DEVICE_MAX_CONNECTIONS=1", "  NCCL_MIN_NCHANNELS=4", "  NCCL_NET=tcpxr",
                     "  NCCL_TCPXR_STATS=1", "  NCCL_P2P_DISABLE=1", f"  LD_LIBRARY_PATH={self.plugin}",
                     f"host: {socket.gethostname()}", "gpus:"):
            self.assertIn(line, got)
        self.assertNotIn("forwarded by mpirun", got)          # no mpirun
        socket_settings = read(os.path.join(self.out, "sendrecv.socket.settings.txt"))
        self.assertIn("  NCCL_NET=Socket", socket_settings)
        self.assertIn("  CUDA_DEVICE_MAX_CONNECTIONS=1", socket_settings)
        # the raw output stays nccl-tests' own, parseable as before
        self.assertFalse(read(os.path.join(self.out, "sendrecv.socket.txt")).startswith("# settings"))
        md = read(os.path.join(self.out, "summary.md"))
        self.assertIn("--env extras (every run): CUDA_DEVICE_MAX_CONNECTIONS=1 NCCL_MIN_NCHANNELS=4", md)
        self.assertIn("MPS: off", md)
        self.assertEqual(json.loads(read(os.path.join(self.out, "run.json")))["extra_env"],
                         {"CUDA_DEVICE_MAX_CONNECTIONS": "1", "NCCL_MIN_NCHANNELS": "4"})
        # every run really got the extras
        self.assertTrue(all(c["env"]["CUDA_DEVICE_MAX_CONNECTIONS"] == "1" for c in self.calls_made()))

    def test_one_gpu_under_mps(self):
        """--one-gpu --mps through stand-ins of mpirun (which passes on only the -x variables),
        nvidia-cuda-mps-control and nvidia-smi."""
        rc, text = self.run_main("ok", "--one-gpu", "--mps", "--configs", "socket,tcpxr-gpu", "--ops", "all_reduce",
                                 "--env", "CUDA_DEVICE_MAX_CONNECTIONS=1", fake_bin=True)
        self.assertEqual(rc, 0, text)
        start, quit_ = self.calls_made("mps")
        self.assertEqual((start["argv"], quit_["stdin"]), (["-d"], "quit\n"))
        pipe = start["pipe"]
        self.assertEqual(start["log"], os.path.join(self.out, "mps-log"))
        self.assertFalse(os.path.exists(pipe))                  # stopped and cleaned up
        ranks = self.calls_made()
        self.assertEqual(len(ranks), 4)                          # 2 configs x 2 ranks
        self.assertEqual(sorted(c["env"]["NCCL_HOSTID"] for c in ranks), ["tcpxr-one-gpu-rank0"] * 2
                         + ["tcpxr-one-gpu-rank1"] * 2)
        for c in ranks:                                          # forwarded through mpirun -x
            self.assertEqual((c["env"]["CUDA_MPS_PIPE_DIRECTORY"], c["env"]["CUDA_MPS_LOG_DIRECTORY"]),
                             (pipe, os.path.join(self.out, "mps-log")))
            self.assertEqual((c["env"]["CUDA_DEVICE_MAX_CONNECTIONS"], c["env"]["NCCL_TESTS_DEVICE"]), ("1", "0"))
            self.assertEqual(c["argv"][-2:], ["-g", "1"])
        got = read(os.path.join(self.out, "all_reduce.tcpxr-gpu.settings.txt"))
        for line in (f"MPS: on (CUDA_MPS_PIPE_DIRECTORY={pipe}, CUDA_MPS_LOG_DIRECTORY={self.out}/mps-log)",
                     "launch: mpirun -np 2 on GPU 0, one NCCL_HOSTID per rank, -g 1, under MPS",
                     "--one-gpu: NCCL_TESTS_DEVICE=0 for every rank; each rank's NCCL_HOSTID is set by the rank "
                     "wrapper", "command: mpirun --allow-run-as-root --bind-to none -np 2 -x CUDA_DEVICE_MAX_CONNECTIONS",
                     "-x CUDA_MPS_PIPE_DIRECTORY", "forwarded by mpirun -x: CUDA_DEVICE_MAX_CONNECTIONS",
                     "gpus:\n  GPU 0: NVIDIA H200 (UUID: GPU-", "  NCCL_TESTS_DEVICE=0", "  NCCL_NET_GDR_LEVEL=SYS"):
            self.assertIn(line, got)
        md = read(os.path.join(self.out, "summary.md"))
        self.assertIn(f"MPS: on (CUDA_MPS_PIPE_DIRECTORY={pipe}", md)
        self.assertIn("--one-gpu under MPS: both ranks share GPU 0 and run concurrently", md)
        self.assertNotIn("correctness", md)
        self.assertIn("MPS daemon stopped", text)
        self.assertTrue(json.loads(read(os.path.join(self.out, "run.json")))["mps"].startswith("on ("))

    def test_three_ranks_on_one_gpu_with_the_ring_forced(self):
        """--one-gpu --mps --ranks 3 --algo Ring: three processes, each its own NCCL host, every one
        told NCCL_ALGO=Ring (through mpirun -x), all_gather's rows at 3 ranks expected, and the
        algorithm named in the settings, the summary, the plot's title and run.json."""
        self.sweep_fakes("all_gather", "sendrecv")
        rc, text = self.run_main("ok", "--one-gpu", "--mps", "--ranks", "3", "--algo", "Ring",
                                 "--configs", "socket,tcpxr-host", "--ops", "all_gather,sendrecv", "--max", "32M",
                                 fake_bin=True)
        self.assertEqual(rc, 0, text)
        self.assertIn("ALL OK", text)
        ranks = self.calls_made()
        self.assertEqual(len(ranks), 2 * 2 * 3)                  # 2 ops x 2 configs x 3 ranks
        self.assertEqual(sorted({c["env"]["NCCL_HOSTID"] for c in ranks}),
                         ["tcpxr-one-gpu-rank0", "tcpxr-one-gpu-rank1", "tcpxr-one-gpu-rank2"])
        for c in ranks:
            self.assertEqual((c["env"]["NCCL_ALGO"], c["env"]["NCCL_TESTS_DEVICE"]), ("Ring", "0"))
            self.assertEqual(c["env"]["OMPI_COMM_WORLD_SIZE"], "3")
        got = read(os.path.join(self.out, "all_gather.tcpxr-host.settings.txt"))
        for line in ("launch: mpirun -np 3 on GPU 0, one NCCL_HOSTID per rank, -g 1, under MPS", "ranks: 3",
                     "NCCL algorithm: NCCL_ALGO=Ring (forced by --algo)", "--env extras: NCCL_ALGO=Ring",
                     "command: mpirun --allow-run-as-root --bind-to none -np 3 ", "-x NCCL_ALGO", "  NCCL_ALGO=Ring"):
            self.assertIn(line, got)
        md = read(os.path.join(self.out, "summary.md"))
        self.assertIn("ranks: 3; NCCL algorithm: NCCL_ALGO=Ring (forced by --algo)", md)
        self.assertIn(", 3 ranks, NCCL_ALGO=Ring", md.splitlines()[0])
        self.assertIn("all 3 ranks share GPU 0 and run concurrently", md)
        self.assertIn("| 32 MiB |", md)                           # sendrecv's last row
        self.assertIn("| 33554400 B |", md)                       # all_gather's: 2796200 floats a rank x 3
        run = json.loads(read(os.path.join(self.out, "run.json")))
        self.assertEqual((run["ranks"], run["algo"]), (3, "NCCL_ALGO=Ring (forced by --algo)"))

    def test_four_ranks_one_per_gpu(self):
        self.sweep_fakes("alltoall")
        self.env_more = {"FAKE_GPUS": "4"}
        rc, text = self.run_main("ok", "--mpirun", "--ranks", "4", "--configs", "tcpxr-gpu", "--ops", "alltoall",
                                 "--max", "1M", fake_bin=True)
        self.assertEqual(rc, 0, text)
        ranks = self.calls_made()
        self.assertEqual(sorted(c["env"]["NCCL_HOSTID"] for c in ranks), [f"tcpxr-rank{r}" for r in range(4)])
        self.assertTrue(all("NCCL_TESTS_DEVICE" not in c["env"] for c in ranks))   # rank r on GPU r
        self.assertTrue(all("NCCL_ALGO" not in c["env"] for c in ranks))           # NCCL's own choice
        got = read(os.path.join(self.out, "alltoall.tcpxr-gpu.settings.txt"))
        self.assertIn("NCCL_HOSTID: one per rank, set by the rank wrapper of the command: NCCL_HOSTID=\"tcpxr-rank", got)
        self.assertIn("NCCL algorithm: NCCL's own choice (NCCL_ALGO unset)", got)

    def test_too_few_gpus_for_one_rank_per_gpu(self):
        self.env_more = {"FAKE_GPUS": "2"}
        rc, text = self.run_main("ok", "--mpirun", "--ranks", "4", "--configs", "socket", "--ops", "sendrecv",
                                 fake_bin=True)
        self.assertEqual(rc, 1)
        self.assertIn("FAILED setup: 4 ranks one per GPU need 4 GPUs, this host shows 2", text)
        self.assertFalse(os.path.exists(self.calls))            # nothing ran

    def test_rank_count_checked(self):
        """An MPI=0 build under mpirun is N one-rank jobs: every run fails the rank check."""
        self.sweep_fakes("all_reduce")
        rc, text = self.run_main("mpi0", "--one-gpu", "--ranks", "3", "--configs", "socket", "--ops", "all_reduce",
                                 "--max", "1K", fake_bin=True)
        self.assertEqual(rc, 1)
        self.assertIn("FAILED all_reduce socket: nccl-tests ran 1 rank(s), expected 3", text)

    def test_one_gpu_without_mps_says_correctness_only(self):
        rc, text = self.run_main("ok", "--one-gpu", "--configs", "socket", "--ops", "sendrecv", fake_bin=True)
        self.assertEqual(rc, 0, text)
        md = read(os.path.join(self.out, "summary.md"))
        self.assertIn("--one-gpu without MPS: both ranks share GPU 0 and take turns on it (time-slicing), so these "
                      "figures check correctness", md)
        self.assertIn("MPS: off", md)
        self.assertEqual(self.calls_made("mps"), [])
        self.assertTrue(all("CUDA_MPS_PIPE_DIRECTORY" not in c["env"] for c in self.calls_made()))

    def test_mps_missing_fails_clearly(self):
        rc, text = self.run_main("ok", "--mps", "--configs", "socket")
        self.assertEqual(rc, 1)
        self.assertIn("FAILED setup: --mps: nvidia-cuda-mps-control not found on PATH", text)

    def test_interrupt_ends_the_run_and_mps(self):
        with self.assertRaises(KeyboardInterrupt):
            self.run_main("interrupt", "--mps", "--configs", "socket", "--ops", "sendrecv", fake_bin=True)
        (start, quit_), (run,) = self.calls_made("mps"), self.calls_made()
        self.assertEqual(quit_["stdin"], "quit\n")
        self.assertFalse(os.path.exists(start["pipe"]))
        self.assertFalse(procs.alive(run["pid"]))              # the run's session was ended

    def test_interrupt_ends_every_rank(self):
        """Under mpirun each rank has a process group of its own (OpenMPI 4.1): all are ended."""
        with self.assertRaises(KeyboardInterrupt):
            self.run_main("interrupt", "--one-gpu", "--configs", "socket", "--ops", "sendrecv", fake_bin=True)
        deadline = time.monotonic() + 10
        while len(self.calls_made()) < 2 and time.monotonic() < deadline:   # rank 1 may still be starting
            time.sleep(0.05)
        ranks = self.calls_made()
        self.assertEqual(len(ranks), 2)
        self.assertTrue(all(not procs.alive(r["pid"]) for r in ranks))

    def test_wrong_and_exit_status_fail(self):
        rc, text = self.run_main("wrong", "--configs", "socket,tcpxr-host", "--ops", "all_reduce")
        self.assertEqual(rc, 1)
        self.assertIn("FAILED all_reduce tcpxr-host: exit status 7", text)
        self.assertIn("FAILED all_reduce tcpxr-host: #wrong > 0: 4 KiB out-of-place 3", text)
        self.assertIn("FAILED all_reduce tcpxr-host: Out of bounds values: 3", text)
        self.assertNotIn("FAILED all_reduce socket", text)

    def test_transport_mismatch_fails(self):
        rc, text = self.run_main("fallback", "--configs", "socket,tcpxr-host", "--ops", "sendrecv")
        self.assertEqual(rc, 1)
        self.assertIn("FAILED sendrecv tcpxr-host: transport: used Socket instead of tcpxr", text)
        self.assertNotIn("FAILED sendrecv socket", text)

    def test_device_unpack_required_for_gpu_buffers(self):
        rc, text = self.run_main("no-unpack", "--configs", "tcpxr-host,tcpxr-gpu", "--ops", "all_reduce")
        self.assertEqual(rc, 1)
        self.assertIn("FAILED all_reduce tcpxr-gpu: transport: device unpack expected but no 'Using "
                      "NCCL_NET_DEVICE_UNPACK net plugin version 7' line", text)
        self.assertNotIn("FAILED all_reduce tcpxr-host", text)   # host buffers: not required

    def test_ops_that_split_over_the_ranks_expect_nccl_tests_own_sizes(self):
        a = mock.Mock(min_bytes=8, max_bytes=1 << 20, nranks=2)
        self.assertEqual(run_nccl_tests.expected_sizes(a)[:3], [8, 16, 32])
        # 2 ranks: 16 bytes a rank at least, so 8 and 16 B print as 0 and are not expected.
        self.assertEqual(run_nccl_tests.expected_sizes(a, "all_gather")[:3], [32, 64, 128])
        a.nranks = 3    # 96 B: 8 floats a rank -> 8 x 3 x 4 bytes
        self.assertEqual(run_nccl_tests.expected_sizes(a, "reduce_scatter")[:2], [48, 96])

    def test_missing_rows_fail(self):
        rc, text = self.run_main("ok", "--configs", "socket", "--ops", "all_reduce", "--max", "2G")
        self.assertEqual(rc, 1)
        self.assertIn("missing rows: 2 GiB", text)

    def test_tcpx_skipped_and_missing_plugin(self):
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("NCCL_TCPXR_TCPX_LIB", None)
            rc, text = self.run_main("ok", "--configs", "socket,tcpxr-tcpx", "--ops", "sendrecv")
        self.assertEqual(rc, 0, text)
        self.assertIn("SKIPPED tcpxr-tcpx skipped: set NCCL_TCPXR_TCPX_LIB", text)
        os.remove(os.path.join(self.plugin, configs.PLUGIN_FILE))
        rc, text = self.run_main("ok", "--configs", "tcpxr-host")
        self.assertEqual(rc, 1)
        self.assertIn("FAILED setup", text)


if __name__ == "__main__":
    unittest.main()
