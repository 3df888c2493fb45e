#!/usr/bin/env python3
"""Compare tcpxr with NCCL's Socket transport through torch.distributed, and check exact results.

For hosts without nccl-tests.  For each config it spawns N processes (--ranks, 2 by default;
rank r on cuda:r, or with --one-gpu all on cuda:0; each rank its own NCCL host, NCCL_HOSTID,
set before NCCL starts, so that NCCL routes all traffic over the network), then either

  the speed sweep (default): all_reduce and send/recv (rank r -> r+1 and r-1 -> r at once,
  batch_isend_irecv) from MIN doubling to MAX in float32, every element checked exactly, with
  time, algbw and busbw by nccl-tests' formulas (all_reduce busbw = algbw*2(n-1)/n, sendrecv
  busbw = algbw); or
  --exact: all_reduce, all_gather, reduce_scatter, broadcast (from every root), all_to_all_single
  with uneven splits and batch_isend_irecv in both ring directions, at odd element counts up to
  several MiB, in float32, bfloat16 and int32, every output compared bit for bit with its
  expected value (exactness.py), each rank reporting what it saw.

The NCCL INFO logs must show the expected network.  Any wrong element, crash, timeout or
transport mismatch: FAILED, exit status 1.  With --mps a private CUDA MPS daemon runs for all
configs (mps.py), so that --one-gpu's ranks run concurrently.  --algo sets NCCL_ALGO.
OUT/raw/torch.<config>.settings.txt records every setting of each run.
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
import exactness
import mps
import parse
import procs
import plotting
import report
import settings

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_RANKS = 2
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
    """nccl-tests' busbw / algbw of each op."""
    if op == "all_reduce":
        return 2 * (nranks - 1) / nranks
    if op in ("all_gather", "reduce_scatter", "all_to_all", "alltoall"):
        return (nranks - 1) / nranks
    return 1.0


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


class _Exact:
    """--exact on one rank: builds every input and expected output from exactness.py's segments on
    the GPU, runs the op, compares bit for bit and writes one record per check."""

    INT_VIEW = {16: "int16", 32: "int32"}

    def __init__(self, torch, dist, rank, world, device):
        self.t, self.dist, self.rank, self.world, self.dev = torch, dist, rank, world, device

    def fill(self, segments, dtype):
        """The tensor of `segments` in `dtype`: each segment's values computed on the device."""
        t, pieces = self.t, []
        for seg in segments:
            idx = t.arange(seg.offset, seg.offset + seg.length, device=self.dev, dtype=t.int64)
            if seg.src == exactness.SUM:
                vals = sum(exactness.value(idx, r, seg.salt) for r in range(self.world))
            else:
                vals = exactness.value(idx, seg.src, seg.salt)
            pieces.append(vals)
        out = t.cat(pieces) if pieces else t.empty(0, device=self.dev, dtype=t.int64)
        return out.to(getattr(t, dtype))

    def blank(self, n, dtype):
        return self.t.full((n,), exactness.SENTINEL, device=self.dev, dtype=getattr(self.t, dtype))

    def compare(self, got, segments, dtype, check):
        want = self.fill(segments, dtype)
        view = getattr(self.t, self.INT_VIEW[exactness.BITS[dtype]])
        rec = dict(check, rank=self.rank, elements=int(want.numel()), wrong=0, first=[])
        if got.numel() != want.numel():
            rec.update(wrong=max(got.numel(), want.numel()), first=[{
                "index": 0, "where": "whole buffer", "got": f"{got.numel()} elements",
                "expected": f"{want.numel()} elements"}])
            return rec
        bad = got.view(view) != want.view(view)
        rec["wrong"] = int(bad.sum().item())
        if rec["wrong"]:
            for i in bad.nonzero().flatten()[:3].tolist():
                rec["first"].append({"index": i, "where": exactness.locate(segments, i),
                                     "got": _scalar(got[i]), "expected": _scalar(want[i])})
        return rec

    def run(self, check):
        op, dtype, count, part, salt = check["op"], check["dtype"], check["count"], check["part"], check["salt"]
        dist, rank, world = self.dist, self.rank, self.world
        ins = exactness.inputs(op, rank, world, count, salt, part)
        want = exactness.expected(op, rank, world, count, salt, part)
        if op == "sendrecv":
            prv, nxt = exactness.ring(rank, world)
            to_next, to_prev = self.fill(ins["to next"], dtype), self.fill(ins["to prev"], dtype)
            from_prev, from_next = self.blank(count, dtype), self.blank(count, dtype)
            # Sends in the order (next, prev) and receives in the order (prev, next): with 2 ranks
            # next == prev, and the k-th send to a peer meets the k-th receive from it.
            ops = [dist.P2POp(dist.isend, to_next, nxt), dist.P2POp(dist.isend, to_prev, prv),
                   dist.P2POp(dist.irecv, from_prev, prv), dist.P2POp(dist.irecv, from_next, nxt)]
            for req in dist.batch_isend_irecv(ops):
                req.wait()
            got = from_prev if part == "from prev" else from_next
        elif op == "broadcast":
            root = int(part.split()[1])
            got = self.fill(ins["send"], dtype) if rank == root else self.blank(count, dtype)
            dist.broadcast(got, src=root)
        elif op == "all_reduce":
            got = self.fill(ins["send"], dtype)
            dist.all_reduce(got)
        else:
            send = self.fill(ins["send"], dtype)
            got = self.blank(exactness.length(want), dtype)
            if op == "all_gather":
                dist.all_gather_into_tensor(got, send)
            elif op == "reduce_scatter":
                dist.reduce_scatter_tensor(got, send)
            elif op == "all_to_all":
                table = exactness.splits(count, world)
                dist.all_to_all_single(got, send, output_split_sizes=[table[src][rank] for src in range(world)],
                                       input_split_sizes=table[rank])
            else:
                raise ValueError(f"unknown op {op}")
        if self.dev.type == "cuda":
            self.t.cuda.synchronize()
        return self.compare(got, want, dtype, check)


def _scalar(x):
    v = x.item()
    return int(v) if float(v).is_integer() else v


def rank_env(rank, one_gpu):
    """Each rank its own NCCL host: NCCL refuses two ranks of one host on one GPU, but compares
    GPUs only within a host, and NCCL_HOSTID names the host; one rank per GPU, it makes NCCL see
    N one-GPU hosts (tree, PAT and grouped receives across hosts) and use the network."""
    return {"NCCL_HOSTID": f"tcpxr-{'one-gpu-' if one_gpu else ''}rank{rank}"}


def one_gpu_env(rank):
    """--one-gpu's rank_env()."""
    return rank_env(rank, True)


def _worker(rank, job):
    """One rank. job: {"world", "port", "env", "one_gpu", "timeout", "ops", "steps", "result_path",
    "exact": checks or None, "exact_path": this rank's JSON-lines file}; the unit tests add
    "backend": "gloo" to run --exact's whole rank on the CPU."""
    world = job["world"]
    os.environ.update(job["env"])            # before torch initialises NCCL
    os.environ.update(rank_env(rank, job["one_gpu"]))
    import torch
    import torch.distributed as dist
    timeout = datetime.timedelta(seconds=job["timeout"])
    if job.get("backend", "nccl") == "nccl":
        gpu = 0 if job["one_gpu"] else rank
        torch.cuda.set_device(gpu)
        device = torch.device("cuda", gpu)
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{job['port']}", rank=rank, world_size=world,
                                timeout=timeout, device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group(job["backend"], init_method=f"tcp://127.0.0.1:{job['port']}", rank=rank,
                                world_size=world, timeout=timeout)
    if job["exact"] is not None:
        checker = _Exact(torch, dist, rank, world, device)
        with open(job["exact_path"].format(rank=rank), "w") as fh:
            for check in job["exact"]:
                rec = checker.run(check)
                fh.write(json.dumps(rec) + "\n")
                fh.flush()                   # what was checked survives a hang or a crash
                if rec["wrong"]:
                    print(f"    rank {rank}: {check['op']} {check['dtype']} count {check['count']} {check['part']}: "
                          f"{exactness.mismatch_text(rec)}", flush=True)
        dist.destroy_process_group()
        return
    bench, rows = _Bench(torch, dist, rank, world, device), []
    for op in job["ops"]:
        for size, warmup, iters in job["steps"]:
            row = bench.run(op, size, warmup, iters)
            rows.append(row)
            if rank == 0:
                print(f"    {op:10} {report.human_size(size):>8}  {row['time_us']:10.1f} us  "
                      f"busbw {row['busbw']:7.3f} GB/s  wrong {row['wrong']}", flush=True)
    if rank == 0:
        with open(job["result_path"], "w") as fh:
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
    n = a.ranks
    if a.one_gpu and a.mps:
        return (f"{n} ranks on cuda:0 under MPS, one NCCL_HOSTID each: they run concurrently, so the figures "
                f"are speeds (of {n} ranks sharing one GPU, not of {n} GPUs)")
    if a.one_gpu:
        return (f"{n} ranks on cuda:0 without MPS, one NCCL_HOSTID each: they take turns on the GPU, so the "
                "figures check correctness and are not speeds")
    return f"rank r on cuda:r (r = 0..{n - 1}), one NCCL_HOSTID each" + (", under MPS" if a.mps else "")


def algo_text(a):
    """Which algorithm NCCL was told to use, in words."""
    if "NCCL_ALGO" in a.extra_env:
        return f"NCCL_ALGO={a.extra_env['NCCL_ALGO']} (forced by {'--algo' if a.algo else '--env'})"
    if os.environ.get("NCCL_ALGO"):
        return f"NCCL_ALGO={os.environ['NCCL_ALGO']} (from your environment)"
    return "NCCL's own choice (NCCL_ALGO unset)"


def what_runs(a, steps):
    """(name, value) facts of the work itself: the exactness matrix or the speed sweep."""
    if a.exact:
        return [("check", "--exact: bit-exact results"), ("ops", ",".join(a.exact_ops)),
                ("dtypes", ",".join(a.exact_dtypes)), ("counts (elements)", ",".join(map(str, a.exact_counts)))]
    return [("ops", ",".join(a.ops)), ("sizes (size: warm-up+timed iterations)",
                                       ", ".join(f"{s}: {w}+{n}" for s, w, n in steps))]


def run_facts(a, steps, daemon, versions):
    facts = [("versions", versions), ("ranks", placement(a)), ("NCCL algorithm", algo_text(a)),
             ("MPS", daemon.describe()), ("--env extras", settings.extras_text(a.extra_env))] + what_runs(a, steps)
    where = "all on cuda:0" if a.one_gpu else "rank r on cuda:r"
    facts.append(("NCCL_HOSTID", f"{where}; rank r sets NCCL_HOSTID={rank_env('<r>', a.one_gpu)['NCCL_HOSTID']} "
                                 "before NCCL starts"))
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
                   command=f"{a.ranks} workers started by torch.multiprocessing (spawn), torch_bench._worker, "
                           "rendezvous on tcp://127.0.0.1",
                   overrides=over, base_env=os.environ)
    result_path = os.path.join(out_dir, "raw", f"torch.{config}.json")
    exact_path = os.path.join(out_dir, "raw", f"torch.{config}.exact.rank{{rank}}.jsonl")
    for old in [result_path] + [exact_path.format(rank=r) for r in range(a.ranks)]:
        if os.path.exists(old):
            os.remove(old)
    checks = exact_checks(a) if a.exact else None
    ctx, port, start = mp.get_context("spawn"), _free_port(), time.monotonic()
    job = {"world": a.ranks, "port": port, "env": over, "one_gpu": a.one_gpu, "timeout": a.timeout, "ops": a.ops,
           "steps": steps, "result_path": result_path, "exact": checks, "exact_path": exact_path}
    procs = [ctx.Process(target=_worker, args=(r, job)) for r in range(a.ranks)]
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
    rows, exact_records, exact_table = [], [], []
    if checks is not None:
        for r in range(a.ranks):
            exact_records += read_records(exact_path.format(rank=r))
        found, exact_table = exactness.problems(exact_records, checks, a.ranks)
        problems += [f"exact: {p}" for p in found]
    else:
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
    return {"config": config, "rows": rows, "exact": exact_records, "exact_table": exact_table,
            "problems": problems, "evidence": evidence, "env": over,
            "seconds": round(time.monotonic() - start, 1), "nccl_version": parse.nccl_version(log_text),
            "logs": logs, "warnings": [ln.strip() for ln in log_text.splitlines() if "NCCL WARN" in ln][:5]}


def read_records(path):
    """The JSON lines one rank wrote (a line cut short by a kill is dropped)."""
    out = []
    try:
        with open(path) as fh:
            for line in fh:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def exact_checks(a):
    return exactness.plan(a.exact_ops, a.exact_dtypes, a.exact_counts, a.ranks)


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


EXACT_CONFIGS = ["socket", "tcpxr-host", "tcpxr-gpu", "tcpxr-tcpx"]


def _names(text, known, what):
    names = [n for n in text.split(",") if n]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise ValueError(f"{what}: choose from {','.join(known)}")
    return names


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  %(prog)s --configs socket-4x4,tcpxr-host,tcpxr-gpu --plugin-dir target/release\n"
               "  %(prog)s --one-gpu --mps --ranks 3 --exact --plugin-dir target/release\n"
               "  %(prog)s --ranks 4 --exact --algo Tree --exact-ops all_reduce,all_to_all,sendrecv "
               "--plugin-dir target/release   (4 GPUs)\n"
               "configs: " + "; ".join(f"{n}: {d}" for n, d in configs.DESCRIPTIONS.items()))
    which = p.add_mutually_exclusive_group()
    which.add_argument("--config", help="one config")
    which.add_argument("--configs", help=f"comma-separated configs run one after the other (default: "
                                         f"{','.join(configs.DEFAULT_CONFIGS)}; with --exact "
                                         f"{','.join(EXACT_CONFIGS)}, tcpxr-tcpx skipped unless NCCL_TCPXR_TCPX_LIB "
                                         "is set)")
    p.add_argument("--plugin-dir", required=True, metavar="DIR", help=f"directory holding {configs.PLUGIN_FILE}")
    p.add_argument("--ranks", type=int, default=DEFAULT_RANKS, metavar="N",
                   help="ranks, each its own NCCL host: rank r on cuda:r, or all on cuda:0 with --one-gpu "
                        "(default: %(default)s)")
    p.add_argument("--algo", metavar="NAME",
                   help="force NCCL's algorithm: NCCL_ALGO=NAME for every run (Ring, Tree, ...; default: NCCL's choice)")
    p.add_argument("--exact", action="store_true",
                   help="instead of the speed sweep: every op, dtype and count of --exact-ops/-dtypes/-counts, "
                        "each output compared bit for bit, a line per rank and mismatch; writes exact.md")
    p.add_argument("--exact-ops", default=",".join(exactness.OPS), help="(default: %(default)s)")
    p.add_argument("--exact-dtypes", default=",".join(exactness.DTYPES), help="(default: %(default)s)")
    p.add_argument("--exact-counts", default=",".join(map(str, exactness.COUNTS)),
                   help="elements per rank/unit of each op (default: %(default)s)")
    p.add_argument("--ops", default=",".join(OPS), help="speed sweep: all_reduce and/or sendrecv (default: %(default)s)")
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
                   help="all ranks on cuda:0, each its own NCCL host (NCCL_HOSTID); with --mps they run "
                        "concurrently (speeds), without it they take turns on the GPU (correctness only)")
    p.add_argument("--mps", action="store_true",
                   help="run a private CUDA MPS daemon (nvidia-cuda-mps-control -d, own pipe and log directories) "
                        "for all configs; stopped at the end")
    a = p.parse_args(argv)
    default_configs = EXACT_CONFIGS if a.exact else configs.DEFAULT_CONFIGS
    a.configs = [c for c in (a.config or a.configs or ",".join(default_configs)).split(",") if c]
    a.ops = [o for o in a.ops.split(",") if o]
    try:
        configs.check_names(a.configs)
        if set(a.ops) - set(OPS) or not a.ops:
            raise ValueError(f"--ops: choose from {','.join(OPS)}")
        a.min_bytes, a.max_bytes = report.parse_size(a.min), report.parse_size(a.max)
        report.doubling(a.min_bytes, a.max_bytes)
        if a.iters < 1 or a.warmup < 1:
            raise ValueError("--iters and --warmup must be >= 1")
        if a.ranks < 2:
            raise ValueError("--ranks: at least 2")
        a.exact_ops = _names(a.exact_ops, exactness.OPS, "--exact-ops")
        a.exact_dtypes = _names(a.exact_dtypes, exactness.DTYPES, "--exact-dtypes")
        try:
            a.exact_counts = [int(c) for c in a.exact_counts.split(",") if c]
        except ValueError:
            raise ValueError("--exact-counts: whole numbers of elements, e.g. 1,7,4097") from None
        if not a.exact_counts or min(a.exact_counts) < 1:
            raise ValueError("--exact-counts: at least one count, each >= 1")
        for dtype in a.exact_dtypes if a.exact else ():
            if a.ranks > exactness.max_ranks(dtype):
                raise ValueError(f"--exact: {dtype} sums are exact up to {exactness.max_ranks(dtype)} ranks")
        a.extra_env = configs.parse_env(a.env)
        if a.algo is not None:
            if not a.algo.strip():
                raise ValueError("--algo: name an algorithm (Ring, Tree, ...)")
            if a.extra_env.get("NCCL_ALGO", a.algo) != a.algo:
                raise ValueError(f"--algo {a.algo} and --env NCCL_ALGO={a.extra_env['NCCL_ALGO']} disagree: give one")
            a.extra_env["NCCL_ALGO"] = a.algo
        ops, option = (a.exact_ops, "--exact-ops") if a.exact else (a.ops, "--ops")
        refusal = configs.tree_refusal(a.extra_env.get("NCCL_ALGO"), ops, option)
        if refusal:
            raise ValueError(refusal)
    except ValueError as e:
        p.error(str(e))
    return a


def main(argv=None):
    a = parse_args(argv)
    import torch
    need = 1 if a.one_gpu else a.ranks
    if torch.cuda.device_count() < need:
        print(f"FAILED setup: need {need} GPU(s), torch sees {torch.cuda.device_count()}"
              + ("" if a.one_gpu else " (--one-gpu runs every rank on one)"))
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
    print(f"output: {out_dir}\n{versions}, {placement(a)}; algorithm: {algo_text(a)}")
    if a.exact:
        print(f"--exact: {len(exact_checks(a))} checks a rank ({','.join(a.exact_ops)} x {','.join(a.exact_dtypes)} "
              f"x counts {','.join(map(str, a.exact_counts))})")
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
                if a.exact:
                    ok = sum(1 for row in run["exact_table"] if len(row["ok"]) == a.ranks)
                    print(f"    {ok} of {len(run['exact_table'])} checks exact on all {a.ranks} ranks")
                else:
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
        json.dump({"argv": sys.argv, "torch": torch.__version__, "nccl": nccl, "world": a.ranks,
                   "placement": placement(a), "algo": algo_text(a), "exact": a.exact,
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
    what = (f"--exact, {','.join(a.exact_dtypes)}" if a.exact else "float32")
    notes = [f"{versions}, {a.ranks} processes, {what}: {placement(a)}",
             f"NCCL algorithm: {algo_text(a)}",
             "env of every run: " + " ".join(f"{k}={v}" for k, v in forcing.items()),
             f"--env extras (every run): {settings.extras_text(a.extra_env)}",
             f"MPS: {daemon.describe()}",
             "every setting of each run (environment, host, GPUs): raw/torch.<config>.settings.txt"]
    if not a.exact:
        notes.insert(1, "iterations per size: " + ", ".join(f"{report.human_size(s)}: {w}+{n}" for s, w, n in steps
                                                           if s in (steps[0][0], 64 << 20, steps[-1][0]))
                     + " (warm-up+timed)")
    notes += [f"{c}: {configs.DESCRIPTIONS[c]}" for c in names]
    title = (f"tcpxr vs NCCL Socket, torch.distributed on {socket.gethostname()}, {stamp}, {a.ranks} ranks"
             + (f", NCCL_ALGO={a.extra_env['NCCL_ALGO']}" if "NCCL_ALGO" in a.extra_env else ""))
    if a.exact:
        text = write_exact(out_dir, title.replace("tcpxr vs NCCL Socket", "exact results"), notes + [
            f"checks: {','.join(a.exact_ops)} x {','.join(a.exact_dtypes)} x counts "
            f"{','.join(map(str, a.exact_counts))} (elements); values (7i + 13 rank + 5 salt) % 31 - 15, so every "
            f"result is an integer of at most 15 x {a.ranks} in magnitude, exact in every dtype; compared bit for bit",
            "broadcast runs from every root; sendrecv sends to next and prev at once (batch_isend_irecv); "
            "all_to_all_single's splits differ per pair (exactness.splits)"], runs, failures)
        print("\n" + text)
        print(f"results: {out_dir}/exact.md, torch_results.json, raw/torch.<config>.exact.rank<r>.jsonl")
    else:
        if failures:
            notes.append("failed configs are left out of the tables")
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


def write_exact(out_dir, title, notes, runs, failures):
    """exact.md: the notes, each config's table of checks and every mismatch, the failures."""
    lines = [f"# {title}", ""] + [f"{n}  " for n in notes] + [""]
    for r in runs:
        lines.append(exactness.markdown(r["config"], r["exact_table"]) if r["exact_table"]
                     else f"## {r['config']}\n\nno checks reported\n")
        lines.append(f"transport: {r['evidence'] or '-'}\n")
    if failures:
        lines += ["## FAILED", ""] + [f"- {f}" for f in failures] + [""]
    text = "\n".join(lines)
    with open(os.path.join(out_dir, "exact.md"), "w") as fh:
        fh.write(text)
    return text


if __name__ == "__main__":
    sys.exit(main())
