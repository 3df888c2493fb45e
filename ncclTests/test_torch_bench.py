"""torch_bench.main end to end without torch or a GPU: a stand-in `torch` module whose workers
write the results and NCCL logs that real workers would, so the parent's logic (MPS, settings
files, checks, summary) runs as on the GPU machine."""

import contextlib
import io
import json
import os
import socket
import sys
import tempfile
import types
import unittest
from unittest import mock

import configs
import exactness
import fakes
import mps
import torch_bench


class FakeProcess:
    """torch.multiprocessing's Process, done at once: rank 0 writes every row (speed sweep), each
    rank its exactness records (--exact) and an NCCL log. FAKE_EXACT=wrong: rank 1 sees 3 wrong
    elements in bfloat16 all_gather of 4097; FAKE_EXACT=stop: rank 2 stops after 5 checks."""
    started = []

    def __init__(self, target, args):
        self.rank, self.job = args
        self.env, self.one_gpu = self.job["env"], self.job["one_gpu"]
        self.exitcode = None

    def start(self):
        FakeProcess.started.append({"rank": self.rank, "env": dict(self.env), "one_gpu": self.one_gpu,
                                    "world": self.job["world"], "exact": self.job["exact"],
                                    "hostid": torch_bench.rank_env(self.rank, self.one_gpu)["NCCL_HOSTID"],
                                    "os_environ_mps": os.environ.get("CUDA_MPS_PIPE_DIRECTORY")})
        mode = os.environ.get("FAKE_EXACT", "ok")
        if self.job["exact"] is not None:
            with open(self.job["exact_path"].format(rank=self.rank), "w") as fh:
                for k, c in enumerate(self.job["exact"]):
                    if mode == "stop" and self.rank == 2 and k == 5:
                        break
                    rec = dict(c, rank=self.rank, elements=c["count"], wrong=0, first=[])
                    if mode == "wrong" and self.rank == 1 and (c["op"], c["dtype"], c["count"]) == \
                            ("all_gather", "bfloat16", 4097):
                        rec.update(elements=4097 * self.job["world"], wrong=3, first=[
                            {"index": 4100, "where": "from rank 1, its element 3", "got": 5, "expected": -3}])
                    fh.write(json.dumps(rec) + "\n")
        elif self.rank == 0:
            rows = [{"op": op, "size": s, "count": s // 4, "dtype": "float32", "warmup": w, "iters": n,
                     "time_us": 20.0 + s / 1e3, "algbw": 1.0, "busbw": 1.0, "wrong": 0}
                    for op in self.job["ops"] for s, w, n in self.job["steps"]]
            with open(self.job["result_path"], "w") as fh:
                json.dump(rows, fh)
        net, gdr = self.env["NCCL_NET"], "/GDRDMA" if self.env.get("NCCL_NET_GDR_LEVEL") == "SYS" else ""
        log = self.env["NCCL_DEBUG_FILE"].replace("%h", "h").replace("%p", str(1000 + self.rank))
        with open(log, "w") as fh:
            if net == "tcpxr":
                fh.write("h:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin tcpxr (v11)\n")
                if gdr:
                    fh.write("h:1:1 [0] NCCL INFO Using NCCL_NET_DEVICE_UNPACK net plugin version 7\n")
            fh.write(f"h:1:1 [0] NCCL INFO Using network {net}\n"
                     f"h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/{net}/0{gdr}\n")
        self.exitcode = 0

    def is_alive(self):
        return False


def fake_torch(gpus=1):
    torch = types.ModuleType("torch")
    torch.__version__ = "9.9.9-fake"
    torch.cuda = types.SimpleNamespace(device_count=lambda: gpus,
                                       nccl=types.SimpleNamespace(version=lambda: (2, 28, 3)))
    mp = types.ModuleType("torch.multiprocessing")
    mp.get_context = lambda kind: types.SimpleNamespace(Process=FakeProcess)
    torch.multiprocessing = mp
    return {"torch": torch, "torch.multiprocessing": mp}


class TorchBenchMain(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        t = self.tmp.name
        self.plugin, self.out, self.bin = (os.path.join(t, d) for d in ("plugin", "out", "bin"))
        for d in (self.plugin, self.bin):
            os.makedirs(d)
        open(os.path.join(self.plugin, configs.PLUGIN_FILE), "w").close()
        fakes.install(self.bin, mps.CONTROL, fakes.MPS_CONTROL)
        fakes.install(self.bin, "nvidia-smi", fakes.NVIDIA_SMI)
        self.calls = os.path.join(t, "calls.jsonl")
        FakeProcess.started = []

    def tearDown(self):
        self.tmp.cleanup()

    def run_main(self, *args, gpus=1, **env_more):
        env = {"PATH": self.bin + os.pathsep + os.environ.get("PATH", ""), "FAKE_CALLS": self.calls, **env_more}
        out = io.StringIO()
        with mock.patch.dict(sys.modules, fake_torch(gpus)), mock.patch.dict(os.environ, env), \
                contextlib.redirect_stdout(out):
            os.environ.pop("NCCL_TCPXR_TCPX_LIB", None) if "NCCL_TCPXR_TCPX_LIB" not in env_more else None
            rc = torch_bench.main(["--plugin-dir", self.plugin, "--out", self.out, "--max", "64K", *args])
        return rc, out.getvalue()

    def read(self, name):
        with open(os.path.join(self.out, name)) as fh:
            return fh.read()

    def test_exact_three_ranks_on_one_gpu(self):
        rc, text = self.run_main("--one-gpu", "--mps", "--ranks", "3", "--exact", "--algo", "Ring")
        self.assertEqual(rc, 0, text)
        self.assertIn("SKIPPED tcpxr-tcpx skipped: set NCCL_TCPXR_TCPX_LIB", text)
        # default --exact configs: socket (the check's own reference), tcpxr-host, tcpxr-gpu
        self.assertEqual(len(FakeProcess.started), 3 * 3)
        self.assertEqual(sorted({w["hostid"] for w in FakeProcess.started}),
                         ["tcpxr-one-gpu-rank0", "tcpxr-one-gpu-rank1", "tcpxr-one-gpu-rank2"])
        for w in FakeProcess.started:
            self.assertEqual((w["world"], w["env"]["NCCL_ALGO"]), (3, "Ring"))
            checks = w["exact"]
            self.assertEqual({c["op"] for c in checks}, set(exactness.OPS))
            self.assertEqual({c["dtype"] for c in checks}, {"float32", "bfloat16", "int32"})
            self.assertEqual({c["count"] for c in checks}, set(exactness.COUNTS))
            self.assertEqual({c["part"] for c in checks if c["op"] == "broadcast"}, {"root 0", "root 1", "root 2"})
            self.assertEqual({c["part"] for c in checks if c["op"] == "sendrecv"}, {"from prev", "from next"})
        md = self.read("exact.md")
        self.assertIn("NCCL algorithm: NCCL_ALGO=Ring (forced by --algo)", md)
        self.assertIn("## tcpxr-gpu", md)
        self.assertIn("| all_to_all | bfloat16 | result | ok | ok | ok | ok | ok | ok |", md)
        self.assertIn("3 processes, --exact, float32,bfloat16,int32: 3 ranks on cuda:0 under MPS", md)
        self.assertIn("162 of 162 checks exact on all 3 ranks", text)   # (4 ops + 3 roots + 2 directions) x 18
        settings_text = self.read("raw/torch.tcpxr-host.settings.txt")
        for line in ("ranks: 3 ranks on cuda:0 under MPS", "NCCL algorithm: NCCL_ALGO=Ring (forced by --algo)",
                     "check: --exact: bit-exact results", "counts (elements): 1,7,4097,65537,1048577,3145729",
                     "NCCL_HOSTID: all on cuda:0; rank r sets NCCL_HOSTID=tcpxr-one-gpu-rank<r>", "  NCCL_ALGO=Ring"):
            self.assertIn(line, settings_text)
        result = json.loads(self.read("torch_results.json"))
        self.assertEqual((result["world"], result["exact"], result["algo"]), (3, True, "NCCL_ALGO=Ring (forced by --algo)"))
        self.assertEqual(len(result["runs"][0]["exact"]), 162 * 3)

    def test_exact_mismatch_names_the_rank_and_fails(self):
        rc, text = self.run_main("--one-gpu", "--ranks", "2", "--exact", "--configs", "tcpxr-gpu",
                                 "--exact-counts", "7,4097", FAKE_EXACT="wrong")
        self.assertEqual(rc, 1)
        line = ("FAILED tcpxr-gpu: exact: all_gather bfloat16 count 4097: rank 1: 3 of 8194 elements wrong: "
                "[4100] (from rank 1, its element 3) got 5 expected -3")
        self.assertIn(line, text)
        md = self.read("exact.md")
        self.assertIn("| all_gather | bfloat16 | result | ok | WRONG on rank 1 |", md)
        self.assertIn("- all_gather bfloat16 count 4097 result, rank 1: 3 of 8194 elements wrong", md)

    def test_exact_a_rank_that_stops_fails(self):
        rc, text = self.run_main("--ranks", "4", "--exact", "--configs", "tcpxr-host", "--exact-ops", "all_reduce",
                                 "--exact-counts", "1,7,4097", gpus=4, FAKE_EXACT="stop")
        self.assertEqual(rc, 1)
        self.assertIn("FAILED tcpxr-host: exact: 4 of 9 checks not reported by every rank, the first all_reduce "
                      "bfloat16 count 4097 result (rank 2: the worker stopped there?)", text)
        self.assertEqual(sorted(w["hostid"] for w in FakeProcess.started), [f"tcpxr-rank{r}" for r in range(4)])

    def test_exact_with_the_tcpx_emulator(self):
        rc, text = self.run_main("--one-gpu", "--exact", "--configs", "tcpxr-tcpx", "--exact-counts", "7",
                                 NCCL_TCPXR_TCPX_LIB="/x/libtcpx_emu.so")
        self.assertEqual(rc, 0, text)
        self.assertEqual(FakeProcess.started[0]["env"]["NCCL_TCPXR_TCPX_LIB"], "/x/libtcpx_emu.so")
        self.assertIn("## tcpxr-tcpx", self.read("exact.md"))

    def test_ranks_need_gpus_unless_one_gpu(self):
        rc, text = self.run_main("--ranks", "3", "--configs", "socket", gpus=2)
        self.assertEqual(rc, 1)
        self.assertIn("FAILED setup: need 3 GPU(s), torch sees 2 (--one-gpu runs every rank on one)", text)
        rc, text = self.run_main("--ranks", "3", "--configs", "socket", gpus=3)
        self.assertEqual(rc, 0, text)
        self.assertEqual(sorted(w["hostid"] for w in FakeProcess.started), [f"tcpxr-rank{r}" for r in range(3)])
        self.assertIn("rank r on cuda:r (r = 0..2), one NCCL_HOSTID each", self.read("summary.md"))

    def test_bad_exact_args(self):
        with contextlib.redirect_stderr(io.StringIO()):
            for bad in (["--exact-dtypes", "float16"], ["--exact-ops", "scan"], ["--exact-counts", "0"],
                        ["--exact-counts", "x"], ["--ranks", "1"], ["--exact", "--ranks", "18"],
                        ["--algo", "Ring", "--env", "NCCL_ALGO=Tree"], ["--exact", "--algo", "Tree"]):
                with self.assertRaises(SystemExit):
                    torch_bench.parse_args(["--plugin-dir", "p"] + bad)
        # The tree alone covers all_reduce and the point-to-point checks (NCCL has no other tree).
        tree = torch_bench.parse_args(["--plugin-dir", "p", "--exact", "--algo", "Tree",
                                       "--exact-ops", "all_reduce,all_to_all,sendrecv"])
        self.assertEqual(tree.exact_ops, ["all_reduce", "all_to_all", "sendrecv"])
        a = torch_bench.parse_args(["--plugin-dir", "p", "--exact", "--ranks", "17", "--exact-dtypes", "bfloat16"])
        self.assertEqual(a.configs, torch_bench.EXACT_CONFIGS)

    def test_one_gpu_under_mps(self):
        rc, text = self.run_main("--one-gpu", "--mps", "--configs", "socket-2x2,tcpxr-gpu",
                                 "--env", "CUDA_DEVICE_MAX_CONNECTIONS=1")
        self.assertEqual(rc, 0, text)
        self.assertIn("ALL OK", text)
        with open(self.calls) as fh:
            start, quit_ = [json.loads(line) for line in fh]
        pipe = start["pipe"]
        self.assertEqual(quit_["stdin"], "quit\n")
        self.assertFalse(os.path.exists(pipe))
        self.assertEqual(len(FakeProcess.started), 4)       # 2 configs x 2 ranks
        for w in FakeProcess.started:
            self.assertEqual((w["env"]["CUDA_MPS_PIPE_DIRECTORY"], w["os_environ_mps"]), (pipe, pipe))
            self.assertEqual(w["env"]["CUDA_MPS_LOG_DIRECTORY"], os.path.join(self.out, "mps-log"))
            self.assertEqual(w["env"]["CUDA_DEVICE_MAX_CONNECTIONS"], "1")
            self.assertTrue(w["one_gpu"])
        self.assertNotIn("CUDA_MPS_PIPE_DIRECTORY", os.environ)   # the parent's environment is restored
        with open(os.path.join(self.out, "raw", "torch.tcpxr-gpu.settings.txt")) as fh:
            got = fh.read()
        for line in ("# settings of raw/torch.tcpxr-gpu.json", f"host: {socket.gethostname()}",
                     "  GPU 0: NVIDIA H200", "versions: torch 9.9.9-fake, NCCL 2.28.3",
                     f"MPS: on (CUDA_MPS_PIPE_DIRECTORY={pipe}", "--env extras: CUDA_DEVICE_MAX_CONNECTIONS=1",
                     "ranks: 2 ranks on cuda:0 under MPS, one NCCL_HOSTID each: they run concurrently",
                     "NCCL_HOSTID: all on cuda:0; rank r sets NCCL_HOSTID=tcpxr-one-gpu-rank<r>",
                     "  CUDA_DEVICE_MAX_CONNECTIONS=1", "  NCCL_NET_GDR_LEVEL=SYS", "sizes (size: warm-up+timed "
                     "iterations): 8: 5+20"):
            self.assertIn(line, got)
        with open(os.path.join(self.out, "summary.md")) as fh:
            md = fh.read()
        self.assertIn("--env extras (every run): CUDA_DEVICE_MAX_CONNECTIONS=1", md)
        self.assertIn(f"MPS: on (CUDA_MPS_PIPE_DIRECTORY={pipe}", md)
        self.assertIn("they run concurrently, so the figures are speeds", md)
        self.assertIn("| best Socket | tcpxr-gpu/best |", md)
        with open(os.path.join(self.out, "torch_results.json")) as fh:
            self.assertTrue(json.load(fh)["mps"].startswith("on ("))

    def test_without_mps_and_checks_still_apply(self):
        rc, text = self.run_main("--one-gpu", "--configs", "tcpxr-host")
        self.assertEqual(rc, 0, text)
        with open(os.path.join(self.out, "summary.md")) as fh:
            md = fh.read()
        self.assertIn("MPS: off", md)
        self.assertIn("without MPS, one NCCL_HOSTID each: they take turns on the GPU, so the figures check "
                      "correctness and are not speeds", md)
        self.assertTrue(all("CUDA_MPS_PIPE_DIRECTORY" not in w["env"] for w in FakeProcess.started))
        self.assertFalse(os.path.exists(self.calls))         # MPS never touched

    def test_mps_missing(self):
        with mock.patch.dict(os.environ, {"PATH": self.tmp.name}):
            out = io.StringIO()
            with mock.patch.dict(sys.modules, fake_torch()), contextlib.redirect_stdout(out):
                rc = torch_bench.main(["--plugin-dir", self.plugin, "--out", self.out, "--one-gpu", "--mps"])
        self.assertEqual(rc, 1)
        self.assertIn("FAILED setup: --mps: nvidia-cuda-mps-control not found", out.getvalue())


def _gloo_rank(rank, job, corrupt):
    """A --exact rank on the CPU (torch's gloo backend), through torch_bench._worker itself; with
    `corrupt`, rank 1's all_gather flips one element of its result after the collective."""
    if corrupt and rank == 1:
        import torch.distributed as dist
        real = dist.all_gather_into_tensor

        def all_gather_into_tensor(out, inp, *args, **kw):
            work = real(out, inp, *args, **kw)
            out[5] = out[5] + 1
            return work
        dist.all_gather_into_tensor = all_gather_into_tensor
    with contextlib.redirect_stdout(io.StringIO()):    # the rank's own mismatch line
        torch_bench._worker(rank, job)


class ExactOnCpu(unittest.TestCase):
    """--exact's worker with real torch on the CPU (gloo instead of NCCL): the inputs, the ops'
    arguments (all_to_all_single's splits, batch_isend_irecv's order with 2 ranks) and the bit
    comparison. Skipped where torch is not installed (the CI host); the lead's GPU machine runs
    the same code through NCCL."""

    def setUp(self):
        try:
            import torch  # noqa: F401
            import torch.distributed as dist
            import torch.multiprocessing  # noqa: F401
        except ImportError:
            self.skipTest("torch not installed")
        if not dist.is_available() or not dist.is_gloo_available():
            self.skipTest("torch.distributed with gloo not available")
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def run_ranks(self, world, checks, corrupt=False):
        import torch.multiprocessing as mp
        path = os.path.join(self.tmp.name, "exact.rank{rank}.jsonl")
        job = {"world": world, "port": torch_bench._free_port(), "env": {}, "one_gpu": True, "timeout": 120,
               "ops": [], "steps": [], "result_path": None, "exact": checks, "exact_path": path, "backend": "gloo"}
        with contextlib.redirect_stdout(io.StringIO()):
            mp.spawn(_gloo_rank, args=(job, corrupt), nprocs=world)
        records = [rec for r in range(world) for rec in torch_bench.read_records(path.format(rank=r))]
        return exactness.problems(records, checks, world)

    def test_every_op_and_dtype_exact_at_2_3_4_ranks(self):
        for world in (2, 3, 4):
            checks = exactness.plan(counts=(1, 7, 4097), world=world)
            found, table = self.run_ranks(world, checks)
            self.assertEqual(found, [], world)
            self.assertEqual(len(table), len(checks))
            self.assertTrue(all(len(row["ok"]) == world for row in table))

    def test_a_wrong_element_is_reported_by_the_rank_that_saw_it(self):
        checks = exactness.plan(["all_gather", "all_reduce"], ["bfloat16"], [7], 3)
        found, table = self.run_ranks(3, checks, corrupt=True)
        self.assertEqual(len(found), 1, found)
        self.assertTrue(found[0].startswith("all_gather bfloat16 count 7: rank 1: 1 of 21 elements wrong: [5] "
                                            "(from rank 0, its element 5) got "), found[0])
        self.assertEqual([row["ok"] for row in table], [[0, 2], [0, 1, 2]])


if __name__ == "__main__":
    unittest.main()
