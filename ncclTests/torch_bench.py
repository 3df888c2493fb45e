#!/usr/bin/env python3
"""Compare tcpxr with NCCL's Socket transport through torch.distributed.

For hosts without nccl-tests.  For each config it spawns one process per GPU
(rank r on cuda:r, environment set before NCCL starts; with --one-gpu both on
cuda:0, each with its own NCCL_HOSTID so that NCCL accepts them and routes
their traffic over the network: a correctness check), runs all_reduce and
send/recv (rank r -> r+1 and r-1 -> r at once, batch_isend_irecv) from MIN
doubling to MAX in float32, checks every element exactly, and reports time,
algbw and busbw with nccl-tests' formulas (all_reduce busbw = algbw*2(n-1)/n,
sendrecv busbw = algbw).  The NCCL INFO logs must show the expected network.
Any wrong element, crash, timeout or transport mismatch: FAILED, exit status 1.
With --mps a private CUDA MPS daemon runs for all configs (mps.py), so that --one-gpu's ranks
run concurrently.  OUT/raw/torch.<config>.settings.txt records every setting of each run.
"""

import argparse
import csv
import datetime
import glob
import json
import os
import shutil
import socket
import sys
import time

import configs
import mps
import parse
import procs
import plotting
import report
import settings

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = 2                 # one process per GPU on this host
BUDGET = 2 << 30          # timed bytes per (op, size) before iterations scale down
BIG = 64 << 20            # from this size on, at most 2 warm-up iterations
OPS = ("all_reduce", "sendrecv")


# ---------------------------------------------------------------------------
# Plan and formulas (no torch needed)

def schedule(size, iters=20, warmup=5):
    """(warmup, iters) for one size: big sizes get fewer timed iterations, so a
    size moves at most ~BUDGET bytes, but never fewer than min(iters, 5)."""
    timed = max(min(iters, 5), min(iters, BUDGET // size))
    return max(1, warmup if size < BIG else min(warmup, 2)), timed


def plan(min_bytes, max_bytes, iters=20, warmup=5):
    return [(s, *schedule(s, iters, warmup)) for s in report.doubling(max(min_bytes, 8), max_bytes)]


def bus_factor(op, nranks):
    return 2 * (nranks - 1) / nranks if op == "all_reduce" else 1.0


def bandwidths(op, size, seconds, nranks):
    """(algbw, busbw) in GB/s (1e9 bytes), as nccl-tests computes them."""
    algbw = size / 1e9 / seconds
    return algbw, algbw * bus_factor(op, nranks)


def block_len(world, cap=64):
    """All-reduces per timed block, refilling the buffer before each block.
    Ranks start from integers <= 250, so after b in-place all-reduces every
    element is S * world**(b-1) with S <= 250*world: exact in float32 while it
    stays below 2**24, or (world a power of two: only the exponent grows) 2**120."""
    limit = 2.0 ** 120 if world & (world - 1) == 0 else 2.0 ** 24
    b = 1
    while b < cap and 250.0 * world ** (b + 1) < limit:
        b += 1
    return b


def estimate_seconds(steps, algbw_gbs, latency_us=30.0, ops=OPS):
    """Rough run time of one config (without process start and NCCL setup)."""
    total = 0.0
    for size, warmup, iters in steps:
        total += len(ops) * (warmup + iters + 1) * (latency_us * 1e-6 + size / (algbw_gbs * 1e9))
    return total


# ---------------------------------------------------------------------------
# Child process (one per GPU)

class _Bench:
    def __init__(self, torch, dist, rank, world, device):
        self.t, self.dist, self.rank, self.world, self.dev = torch, dist, rank, world, device
        self.one = torch.ones(1, device=device)
        self.block = block_len(world)

    def pattern(self, count, salt):
        idx = self.t.arange(count, device=self.dev, dtype=self.t.int64)
        return ((idx * 7 + salt) % 251).to(self.t.float32)

    def wrong(self, got, expected):
        return int((got != expected).sum().item())

    def timed(self, fn, n):
        self.dist.all_reduce(self.one)       # line the ranks up
        self.t.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(n):
            fn()
        self.t.cuda.synchronize()
        return time.perf_counter() - start

    def all_reduce(self, count, warmup, iters):
        dist, world = self.dist, self.world
        src = self.pattern(count, 17 * self.rank)
        exact = sum(self.pattern(count, 17 * r) for r in range(world))
        buf = src.clone()
        dist.all_reduce(buf)                 # first warm-up iteration, checked
        wrong = self.wrong(buf, exact)
        for _ in range(warmup - 1):
            dist.all_reduce(buf)
        elapsed, done = 0.0, 0
        while done < iters:                  # timed blocks, each checked
            b = min(self.block, iters - done)
            buf.copy_(src)
            elapsed += self.timed(lambda: dist.all_reduce(buf), b)
            wrong += self.wrong(buf, exact * float(world ** (b - 1)))
            done += b
        return elapsed, wrong

    def sendrecv(self, count, warmup, iters):
        dist = self.dist
        nxt, prv = (self.rank + 1) % self.world, (self.rank - 1) % self.world
        send = self.pattern(count, 101 * self.rank + 3)
        expected = self.pattern(count, 101 * prv + 3)
        recv = self.t.empty_like(send)
        ops = [dist.P2POp(dist.isend, send, nxt), dist.P2POp(dist.irecv, recv, prv)]

        def once():
            for req in dist.batch_isend_irecv(ops):
                req.wait()

        recv.fill_(-1)
        once()                               # first warm-up iteration, checked
        self.t.cuda.synchronize()
        wrong = self.wrong(recv, expected)
        for _ in range(warmup - 1):
            once()
        recv.fill_(-1)
        elapsed = self.timed(once, iters)
        return elapsed, wrong + self.wrong(recv, expected)

    def run(self, op, size, warmup, iters):
        elapsed, wrong = getattr(self, op)(size // 4, warmup, iters)
        stats = self.t.tensor([elapsed / iters, float(wrong)], dtype=self.t.float64, device=self.dev)
        self.dist.all_reduce(stats)          # time: mean over ranks; wrong: sum
        seconds, wrong = stats[0].item() / self.world, int(stats[1].item())
        algbw, busbw = bandwidths(op, size, seconds, self.world)
        return {"op": op, "size": size, "count": size // 4, "dtype": "float32", "warmup": warmup,
                "iters": iters, "time_us": seconds * 1e6, "algbw": algbw, "busbw": busbw, "wrong": wrong}


def one_gpu_env(rank):
    """--one-gpu: NCCL refuses two ranks of one host on one GPU, but compares GPUs only within a
    host, and NCCL_HOSTID names the host."""
    return {"NCCL_HOSTID": f"tcpxr-one-gpu-rank{rank}"}


def _worker(rank, world, port, env, ops, steps, result_path, timeout_s, one_gpu=False):
    os.environ.update(env)                   # before torch initialises NCCL
    if one_gpu:
        os.environ.update(one_gpu_env(rank))
    import torch
    import torch.distributed as dist
    gpu = 0 if one_gpu else rank
    torch.cuda.set_device(gpu)
    device = torch.device("cuda", gpu)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=timeout_s), device_id=device)
    bench, rows = _Bench(torch, dist, rank, world, device), []
    for op in ops:
        for size, warmup, iters in steps:
            row = bench.run(op, size, warmup, iters)
            rows.append(row)
            if rank == 0:
                print(f"    {op:10} {report.human_size(size):>8}  {row['time_us']:10.1f} us  "
                      f"busbw {row['busbw']:7.3f} GB/s  wrong {row['wrong']}", flush=True)
    if rank == 0:
        with open(result_path, "w") as fh:
            json.dump(rows, fh)
    dist.destroy_process_group()


# ---------------------------------------------------------------------------
# Parent

def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def placement(a):
    """Where the ranks run, and what that makes of the figures."""
    if a.one_gpu and a.mps:
        return (f"{WORLD} ranks on cuda:0 under MPS, one NCCL_HOSTID each: they run concurrently, so the figures "
                "are speeds (of two ranks sharing one GPU, not of two GPUs)")
    if a.one_gpu:
        return (f"{WORLD} ranks on cuda:0 without MPS, one NCCL_HOSTID each: they take turns on the GPU, so the "
                "figures check correctness and are not speeds")
    return f"rank r on cuda:r (r = 0..{WORLD - 1})" + (", under MPS" if a.mps else "")


def run_facts(a, steps, daemon, versions):
    facts = [("versions", versions), ("ranks", placement(a)), ("MPS", daemon.describe()),
             ("--env extras", settings.extras_text(a.extra_env)),
             ("ops", ",".join(a.ops)), ("sizes (size: warm-up+timed iterations)",
                                        ", ".join(f"{s}: {w}+{n}" for s, w, n in steps))]
    if a.one_gpu:
        facts.append(("--one-gpu", "both ranks on cuda:0; rank r sets NCCL_HOSTID="
                                   f"{one_gpu_env('<r>')['NCCL_HOSTID']} before NCCL starts"))
    return facts


def run_config(a, config, out_dir, steps, daemon=None, machine_info=None, versions=""):
    import torch.multiprocessing as mp
    daemon = daemon or mps.Daemon(False, "")
    log_prefix = os.path.join(out_dir, "logs", f"torch.{config}.nccl")
    for old in glob.glob(log_prefix + ".*"):
        os.remove(old)
    over = configs.overrides(config, a.plugin_dir, log_prefix, base_env=os.environ, extra=a.extra_env)
    over.update(daemon.env)
    settings.write(os.path.join(out_dir, "raw", f"torch.{config}.settings.txt"), output=f"raw/torch.{config}.json",
                   machine_info=machine_info or settings.machine(), facts=run_facts(a, steps, daemon, versions),
                   command=f"{WORLD} workers started by torch.multiprocessing (spawn), torch_bench._worker, "
                           "rendezvous on tcp://127.0.0.1",
                   overrides=over, base_env=os.environ)
    result_path = os.path.join(out_dir, "raw", f"torch.{config}.json")
    if os.path.exists(result_path):
        os.remove(result_path)
    ctx, port, start = mp.get_context("spawn"), _free_port(), time.monotonic()
    procs = [ctx.Process(target=_worker, args=(r, WORLD, port, over, a.ops, steps, result_path, a.timeout, a.one_gpu))
             for r in range(WORLD)]
    saved = {k: os.environ.get(k) for k in over}
    os.environ.update(over)                  # children start with it (LD_LIBRARY_PATH is read at exec)
    try:
        for p in procs:
            p.start()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    deadline = start + a.timeout
    try:
        while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
            if any(p.exitcode not in (None, 0) for p in procs):
                break                        # one rank died: do not wait for the other to time out
            time.sleep(0.2)
        timed_out = time.monotonic() >= deadline and any(p.is_alive() for p in procs)
    finally:                                 # also on Ctrl-C or SIGTERM (with --mps)
        for p in procs:                      # only our own children
            if p.is_alive():
                p.terminate()
                p.join(10)
                if p.is_alive():
                    p.kill()
                    p.join()

    problems = []
    if timed_out:
        problems.append(f"timed out after {a.timeout} s (killed)")
    if any(p.exitcode != 0 for p in procs):
        problems.append(f"worker exit codes {[p.exitcode for p in procs]} (see the traceback above)")
    rows = []
    if os.path.exists(result_path):
        with open(result_path) as fh:
            rows = json.load(fh)
    done = {(r["op"], r["size"]) for r in rows}
    missing = [(op, s) for op in a.ops for s, _, _ in steps if (op, s) not in done]
    if missing:
        problems.append(f"missing results: {len(missing)} of {len(a.ops) * len(steps)} (op, size)")
    bad = [r for r in rows if r["wrong"]]
    if bad:
        problems.append("wrong elements: " + ", ".join(f"{r['op']} {report.human_size(r['size'])} {r['wrong']}"
                                                       for r in bad[:6]))
    logs = sorted(glob.glob(log_prefix + ".*"))
    log_text = ""
    for path in logs:
        with open(path, errors="replace") as fh:
            log_text += fh.read()
    evidence = ""
    if not logs:
        problems.append("no NCCL debug log written (NCCL_DEBUG_FILE)")
    else:
        ok, evidence = parse.check_transport(log_text, **configs.expectations(config))
        if not ok:
            problems.append("transport: " + evidence)
    return {"config": config, "rows": rows, "problems": problems, "evidence": evidence, "env": over,
            "seconds": round(time.monotonic() - start, 1), "nccl_version": parse.nccl_version(log_text),
            "logs": logs, "warnings": [ln.strip() for ln in log_text.splitlines() if "NCCL WARN" in ln][:5]}


def table(rows, ops):
    by = {(r["op"], r["size"]): r for r in rows}
    sizes = sorted({r["size"] for r in rows})
    head = f"{'size':>8}" + "".join(f" | {op + ' us':>14} {'algbw':>7} {'busbw':>7} {'wrong':>5}" for op in ops)
    lines = [head, "-" * len(head)]
    for s in sizes:
        line = f"{report.human_size(s):>8}"
        for op in ops:
            r = by.get((op, s))
            line += (f" | {r['time_us']:14.1f} {r['algbw']:7.3f} {r['busbw']:7.3f} {r['wrong']:5d}" if r
                     else f" | {'-':>14} {'-':>7} {'-':>7} {'-':>5}")
        lines.append(line)
    return "\n".join(lines)


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  %(prog)s --configs socket-4x4,tcpxr-host,tcpxr-gpu --plugin-dir target/release\n"
               "configs: " + "; ".join(f"{n}: {d}" for n, d in configs.DESCRIPTIONS.items()))
    which = p.add_mutually_exclusive_group()
    which.add_argument("--config", help="one config")
    which.add_argument("--configs", help=f"comma-separated configs run one after the other "
                                         f"(default: {','.join(configs.DEFAULT_CONFIGS)})")
    p.add_argument("--plugin-dir", required=True, metavar="DIR", help=f"directory holding {configs.PLUGIN_FILE}")
    p.add_argument("--ops", default=",".join(OPS), help="all_reduce and/or sendrecv (default: %(default)s)")
    p.add_argument("--min", default="8", help="smallest size in bytes, K/M/G binary (default: %(default)s)")
    p.add_argument("--max", default="512M", help="largest size (default: %(default)s)")
    p.add_argument("--iters", type=int, default=20,
                   help="timed iterations for small sizes; sizes over 64 MiB use fewer, down to min(ITERS, 5),"
                        " so each size moves at most ~2 GiB (default: %(default)s)")
    p.add_argument("--warmup", type=int, default=5, help="warm-up iterations, the first one checked (default: %(default)s)")
    p.add_argument("--out", help="output directory (default: ncclTests/out/torch-<date>)")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra variable for every run (repeatable), e.g. CUDA_DEVICE_MAX_CONNECTIONS=1")
    p.add_argument("--timeout", type=int, default=600, help="seconds per config before it is killed (default: %(default)s)")
    p.add_argument("--one-gpu", action="store_true",
                   help="both ranks on cuda:0, each its own NCCL host (NCCL_HOSTID); with --mps they run "
                        "concurrently (speeds), without it they take turns on the GPU (correctness only)")
    p.add_argument("--mps", action="store_true",
                   help="run a private CUDA MPS daemon (nvidia-cuda-mps-control -d, own pipe and log directories) "
                        "for all configs; stopped at the end")
    a = p.parse_args(argv)
    a.configs = [c for c in (a.config or a.configs or ",".join(configs.DEFAULT_CONFIGS)).split(",") if c]
    a.ops = [o for o in a.ops.split(",") if o]
    try:
        configs.check_names(a.configs)
        if set(a.ops) - set(OPS) or not a.ops:
            raise ValueError(f"--ops: choose from {','.join(OPS)}")
        a.min_bytes, a.max_bytes = report.parse_size(a.min), report.parse_size(a.max)
        report.doubling(a.min_bytes, a.max_bytes)
        if a.iters < 1 or a.warmup < 1:
            raise ValueError("--iters and --warmup must be >= 1")
        a.extra_env = configs.parse_env(a.env)
    except ValueError as e:
        p.error(str(e))
    return a


def main(argv=None):
    a = parse_args(argv)
    import torch
    need = 1 if a.one_gpu else WORLD
    if torch.cuda.device_count() < need:
        print(f"FAILED setup: need {need} GPU(s), torch sees {torch.cuda.device_count()}"
              + ("" if a.one_gpu else " (--one-gpu runs both ranks on one)"))
        return 1
    if any(configs.uses_plugin(c) for c in a.configs) and not os.path.isfile(configs.plugin_path(a.plugin_dir)):
        print(f"FAILED setup: {configs.plugin_path(a.plugin_dir)} not found (cargo build --release)")
        return 1
    if a.mps and not shutil.which(mps.CONTROL):
        print(f"FAILED setup: --mps: {mps.CONTROL} not found on PATH (it comes with the NVIDIA driver's utilities)")
        return 1
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = os.path.abspath(a.out or os.path.join(HERE, "out", f"torch-{stamp}"))
    for sub in ("logs", "raw"):
        os.makedirs(os.path.join(out_dir, sub), exist_ok=True)
    steps = plan(a.min_bytes, a.max_bytes, a.iters, a.warmup)
    try:
        nccl = ".".join(map(str, torch.cuda.nccl.version()))
    except Exception:  # version query is informational only
        nccl = "?"
    versions = f"torch {torch.__version__}, NCCL {nccl}"
    print(f"output: {out_dir}\n{versions}, {placement(a)}")
    machine_info = settings.machine()

    runs = []
    daemon = mps.Daemon(a.mps, os.path.join(out_dir, "mps-log"))
    try:
        with procs.interrupt_on_sigterm(), daemon:
            if a.mps:
                print(f"MPS daemon started: {daemon.describe()}")
            for c in a.configs:
                try:
                    print(f"[{c}] {configs.DESCRIPTIONS[c]}", flush=True)
                    run = run_config(a, c, out_dir, steps, daemon, machine_info, versions)
                except configs.ConfigUnavailable as e:
                    print(f"SKIPPED {e}")
                    continue
                runs.append(run)
                print(table(run["rows"], a.ops))
                status = "FAILED: " + "; ".join(run["problems"]) if run["problems"] else f"ok, {run['evidence']}"
                print(f"    {status} ({run['seconds']} s)")
                for w in run["warnings"]:
                    print(f"    {w}")
    except mps.MpsError as e:
        print(f"FAILED setup: {e}")
        return 1
    if a.mps:
        print("MPS daemon stopped" if not daemon.problems else "MPS daemon: " + "; ".join(daemon.problems))

    names = [r["config"] for r in runs]
    results = {op: {} for op in a.ops}
    for r in runs:
        if not r["problems"]:
            for row in r["rows"]:
                results[row["op"]].setdefault(r["config"], {})[row["size"]] = row
    failures = [f"{r['config']}: {p}" for r in runs for p in r["problems"]]
    failures += [f"MPS: {p}" for p in daemon.problems]
    with open(os.path.join(out_dir, "torch_results.json"), "w") as fh:
        json.dump({"argv": sys.argv, "torch": torch.__version__, "nccl": nccl, "world": WORLD,
                   "machine": machine_info, "mps": daemon.describe(), "extra_env": a.extra_env,
                   "runs": runs, "failures": failures}, fh, indent=1)
    fields = ["config", "op", "size", "count", "dtype", "warmup", "iters", "time_us", "algbw", "busbw", "wrong"]
    with open(os.path.join(out_dir, "torch_results.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fields)
        w.writeheader()
        for r in runs:
            for row in r["rows"]:
                w.writerow(dict(row, config=r["config"]))

    forcing = dict(configs.COMMON_ENV, **configs.SINGLE_HOST_ENV)
    notes = [f"{versions}, {WORLD} processes, float32: {placement(a)}",
             "iterations per size: " + ", ".join(f"{report.human_size(s)}: {w}+{n}" for s, w, n in steps
                                                if s in (steps[0][0], 64 << 20, steps[-1][0])) + " (warm-up+timed)",
             "env of every run: " + " ".join(f"{k}={v}" for k, v in forcing.items()),
             f"--env extras (every run): {settings.extras_text(a.extra_env)}",
             f"MPS: {daemon.describe()}",
             "every setting of each run (environment, host, GPUs): raw/torch.<config>.settings.txt"]
    notes += [f"{c}: {configs.DESCRIPTIONS[c]}" for c in names]
    if failures:
        notes.append("failed configs are left out of the tables")
    title = f"tcpxr vs NCCL Socket, torch.distributed on {socket.gethostname()}, {stamp}"
    text = report.write_summary(out_dir, results, names, title, notes, failures)
    plot, note = plotting.plot_busbw(results, names, os.path.join(out_dir, "busbw.png"), title)
    if len(names) > 1:
        print("\n" + text)
    print(f"plot: {plot} ({note})" if plot else f"plot: none ({note})")
    print(f"results: {out_dir}/torch_results.csv, torch_results.json, summary.md")
    for f in failures:
        print(f"FAILED {f}")
    print(f"{len(failures)} problem(s)" if failures else "ALL OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
