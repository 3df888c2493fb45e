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
import fakes
import mps
import torch_bench


class FakeProcess:
    """torch.multiprocessing's Process, done at once: rank 0 writes every row, each rank a log."""
    started = []

    def __init__(self, target, args):
        self.rank, _, _, self.env, self.ops, self.steps, self.result_path = args[:7]
        self.one_gpu = args[8]
        self.exitcode = None

    def start(self):
        FakeProcess.started.append({"rank": self.rank, "env": dict(self.env), "one_gpu": self.one_gpu,
                                    "os_environ_mps": os.environ.get("CUDA_MPS_PIPE_DIRECTORY")})
        if self.rank == 0:
            rows = [{"op": op, "size": s, "count": s // 4, "dtype": "float32", "warmup": w, "iters": n,
                     "time_us": 20.0 + s / 1e3, "algbw": 1.0, "busbw": 1.0, "wrong": 0}
                    for op in self.ops for s, w, n in self.steps]
            with open(self.result_path, "w") as fh:
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


def fake_torch():
    torch = types.ModuleType("torch")
    torch.__version__ = "9.9.9-fake"
    torch.cuda = types.SimpleNamespace(device_count=lambda: 1,
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

    def run_main(self, *args):
        env = {"PATH": self.bin + os.pathsep + os.environ.get("PATH", ""), "FAKE_CALLS": self.calls}
        out = io.StringIO()
        with mock.patch.dict(sys.modules, fake_torch()), mock.patch.dict(os.environ, env), \
                contextlib.redirect_stdout(out):
            rc = torch_bench.main(["--plugin-dir", self.plugin, "--out", self.out, "--max", "64K", *args])
        return rc, out.getvalue()

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
                     "--one-gpu: both ranks on cuda:0; rank r sets NCCL_HOSTID=tcpxr-one-gpu-rank<r>",
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


if __name__ == "__main__":
    unittest.main()
