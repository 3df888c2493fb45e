#!/usr/bin/env python3
"""Issue 13's hazard, checked through NCCL itself: GPU buffers must never deadlock.

NCCL's kernel waits for the data the net plugin delivers. If the plugin places received GPU
pages with GPU work of its own, that work can queue behind NCCL's kernel whenever the two share a
hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1, or CUDA MPS): a hang. tcpxr's v7+ tables avoid it
(NCCL's device unpack places the pages); its v5/v6 tables, with NCCL_TCPXR_GPU_BUFFERS=1, still
use tcpxr's own unpack kernel.

This runs N ranks on one GPU (--one-gpu --ranks N, 2 by default), each its own NCCL host,
all_reduce and sendrecv with GPU buffers (tcpxr-gpu), once with one hardware queue and once under
MPS, through:

  v7+  tcpxr as NCCL loads it (the newest table): must complete, #wrong 0;
  v6   a shim exporting only tcpxr's v6 table (hazard/v6_shim.c), so NCCL runs tcpxr's own unpack
       kernel: the contrast, expected to hang (the runner kills it after --timeout). It shows the
       check can fail; if it does not hang, the check is inconclusive on this machine.

Exit status: 0 when every v7+ run passed and every v6 run hung; 1 when a v7+ run failed; 2 when
v7+ passed but a v6 run did not hang (inconclusive: the check could not have caught the hazard).

  python3 ncclTests/hazard_check.py --nccl-tests ~/nccl-tests/build --plugin-dir target/release
  python3 ncclTests/hazard_check.py --nccl-tests ~/nccl-tests/build --plugin-dir target/release --ranks 4 --algo Tree
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import configs  # noqa: E402
import run_nccl_tests  # noqa: E402

SETTINGS = {  # name: runner arguments
    "1queue": ["--env", "CUDA_DEVICE_MAX_CONNECTIONS=1"],
    "mps": ["--mps"],
}


def build_shim(out_dir, cc="cc"):
    """Compiles hazard/v6_shim.c into out_dir; returns the library's path."""
    lib = os.path.join(out_dir, "libnccl-net-tcpxr-v6.so")
    subprocess.run([cc, "-O2", "-fPIC", "-shared", "-o", lib, os.path.join(HERE, "hazard", "v6_shim.c"), "-ldl"],
                   check=True)
    return lib


def runner_argv(a, table, setting, out, shim):
    """The run_nccl_tests.py arguments of one run."""
    argv = ["--one-gpu", "--ranks", str(a.ranks), "--nccl-tests", a.nccl_tests, "--plugin-dir", a.plugin_dir,
            "--configs", "tcpxr-gpu", "--ops", a.ops, "--max", a.max, "--iters", "3", "--warmup", "1",
            "--timeout", str(a.timeout), "--out", out] + SETTINGS[setting]
    if a.algo:
        argv += ["--algo", a.algo]
    if table == "v6":
        argv += ["--env", f"NCCL_NET_PLUGIN={shim}",
                 "--env", f"TCPXR_SHIM_TARGET={configs.plugin_path(a.plugin_dir)}"]
    return argv


def outcome(failures):
    """What one run's failure list says: 'passed', 'hung' (killed at the timeout) or 'failed'."""
    if not failures:
        return "passed"
    if any("timed out" in f for f in failures):
        return "hung"
    return "failed"


def verdict(outcomes):
    """outcomes: {(table, setting): outcome} -> (exit status, one line per run and a conclusion)."""
    lines = [f"{t:4} {s:7} {o}" for (t, s), o in sorted(outcomes.items())]
    newest = [o for (t, _), o in outcomes.items() if t == "v7+"]
    contrast = [o for (t, _), o in outcomes.items() if t == "v6"]
    if any(o != "passed" for o in newest):
        return 1, lines + ["FAILED: GPU buffers through NCCL's device unpack did not complete"]
    if any(o != "hung" for o in contrast):
        return 2, lines + ["INCONCLUSIVE: tcpxr's own unpack kernel did not hang here, so this machine cannot show "
                           "the hazard"]
    return 0, lines + ["PASSED: device unpack completes where tcpxr's own GPU work hangs"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nccl-tests", required=True, metavar="DIR")
    p.add_argument("--plugin-dir", required=True, metavar="DIR")
    p.add_argument("--ops", default="all_reduce,sendrecv")
    p.add_argument("--ranks", type=int, default=2, metavar="N",
                   help="ranks on GPU 0, each its own NCCL host (default: %(default)s)")
    p.add_argument("--algo", metavar="NAME", help="NCCL_ALGO for every run (default: NCCL's own choice)")
    p.add_argument("--max", default="8M")
    p.add_argument("--timeout", type=int, default=40, help="seconds before a run counts as hung (default: %(default)s)")
    p.add_argument("--out", default=os.path.join(HERE, "out", "hazard"))
    a = p.parse_args(argv)
    if a.ranks < 2:
        p.error("--ranks: at least 2")
    os.makedirs(a.out, exist_ok=True)
    shim = build_shim(a.out)
    outcomes = {}
    for table in ("v7+", "v6"):
        for setting in SETTINGS:
            out = os.path.join(a.out, f"{table.strip('+')}-{setting}")
            run_nccl_tests.main(runner_argv(a, table, setting, out, shim))
            with open(os.path.join(out, "run.json")) as fh:
                outcomes[(table, setting)] = outcome(json.load(fh)["failures"])
    status, lines = verdict(outcomes)
    print(f"{a.ranks} ranks on GPU 0, NCCL_ALGO={a.algo}" if a.algo else f"{a.ranks} ranks on GPU 0, NCCL's own algorithm")
    print("\n".join(lines))
    return status


if __name__ == "__main__":
    sys.exit(main())
