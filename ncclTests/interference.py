#!/usr/bin/env python3
"""How much a running transfer slows concurrent compute on the same GPU.

For each configuration, two processes (one per GPU) time a bf16 GEMM on the default stream,
alone, then while a second thread keeps all_reduces of SIZE bytes in flight (two at a time)
from a side stream, so that the traffic never queues behind the GEMMs, on NCCL's high-priority
stream, so that NCCL's kernels get SMs while the GEMMs fill the GPU: compute and communication
overlapped the way training overlaps them. Both ranks issue the same number of all_reduces, sized
to last as long as the GEMMs (from each one's time alone). With tcpxr and GPU buffers that traffic
includes tcpxr's staging copies and unpack kernels; with NCCL's Socket it is NCCL's own kernels.
The GEMM is timed alone once more afterwards and "alone" is the mean of both: a GPU that has been
busy a while runs a GEMM a few percent slower than a fresh one (docs/BENCHMARKS.md section 10), and
timing alone only before the traffic would blame that on the traffic.

Reported per size: GEMM TFLOP/s alone and with traffic, their ratio (1.0 = no slowdown; the
project's goal is >= 0.99), and the all_reduce busbw alone and meanwhile (the traffic must run near
its full rate for the ratio to mean anything). Seed 004's "relative GEMM throughput" figure is the
model.

  python3 ncclTests/interference.py --plugin-dir DIR [--configs tcpxr-host,socket-4x4]
                                    [--sizes 1M,16M,256M] [--seconds 2] [--out DIR]
"""

import argparse
import csv
import datetime
import json
import math
import os
import sys
import threading
import time

import configs
import report

HERE = os.path.dirname(os.path.abspath(__file__))
GEMM_N = 8192


def _traffic(torch, dist, x, count, side, depth=2):
    """Issues `count` all_reduces of x from stream `side`, `depth` in flight; returns the seconds
    until the last one completed."""
    start = time.perf_counter()
    pending = []
    with torch.cuda.stream(side):
        for _ in range(count):
            while len(pending) >= depth:
                pending = [w for w in pending if not w.is_completed()]
                if len(pending) >= depth:
                    time.sleep(0.0001)
            pending.append(dist.all_reduce(x, async_op=True))
    while pending:
        pending = [w for w in pending if not w.is_completed()]
        time.sleep(0.0001)
    return time.perf_counter() - start


def _agree_max(torch, dist, device, value):
    """The largest of the ranks' values (so both issue the same number of collectives)."""
    t = torch.tensor([float(value)], device=device, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def _measure(torch, dist, device, size, seconds):
    a = torch.randn(GEMM_N, GEMM_N, device=device, dtype=torch.bfloat16)
    b = torch.randn(GEMM_N, GEMM_N, device=device, dtype=torch.bfloat16)
    x = torch.ones(max(1, size // 4), device=device, dtype=torch.float32)
    side = torch.cuda.Stream(device=device)
    flops = 2.0 * GEMM_N ** 3

    def gemms(n):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(n):
            torch.matmul(a, b)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    # Alone: the GEMM, then the traffic.
    torch.cuda.synchronize()
    gemms(5)
    n = max(20, int(seconds / (gemms(10) / 10)))
    alone_s = gemms(n)
    dist.barrier()
    _traffic(torch, dist, x, 4, side)
    probe = 20
    op_s = _agree_max(torch, dist, device, _traffic(torch, dist, x, probe, side) / probe)
    # Together: enough all_reduces to cover the GEMMs' time alone, the same count on both ranks.
    count = int(_agree_max(torch, dist, device, math.ceil(alone_s / op_s)))
    dist.barrier()
    torch.cuda.synchronize()
    traffic_s = [0.0]
    t = threading.Thread(target=lambda: traffic_s.__setitem__(0, _traffic(torch, dist, x, count, side)))
    t.start()
    with_s = gemms(n)
    t.join()
    torch.cuda.synchronize()
    dist.barrier()
    # Alone again, once the GPU has been as busy as during the traffic: the two bracket it.
    alone_after_s = gemms(n)
    alone_s = (alone_s + alone_after_s) / 2
    # all_reduce busbw with 2 ranks equals algbw: bytes reduced per second.
    return {
        "size": size,
        "gemms": n,
        "all_reduces": count,
        "tflops_alone": flops * n / alone_s / 1e12,
        "tflops_alone_after": flops * n / alone_after_s / 1e12,
        "tflops_with": flops * n / with_s / 1e12,
        "ratio": alone_s / with_s,
        "comm_busbw_alone": x.numel() * 4 / op_s / 1e9,
        "comm_busbw": x.numel() * 4 * count / traffic_s[0] / 1e9,
    }


def _worker(rank, world, port, env, sizes, seconds, result_path):
    os.environ.update(env)
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    # NCCL on a high-priority stream: its kernels take SMs as GEMM blocks retire.
    options = dist.ProcessGroupNCCL.Options()
    options.is_high_priority_stream = True
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=300), device_id=device, pg_options=options)
    rows = [_measure(torch, dist, device, s, seconds) for s in sizes]
    if rank == 0:
        with open(result_path, "w") as fh:
            json.dump(rows, fh)
    dist.destroy_process_group()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--plugin-dir", required=True)
    p.add_argument("--configs", default="tcpxr-host,socket-4x4")
    p.add_argument("--sizes", default="1M,16M,256M")
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--out", default=os.path.join(HERE, "out", "interference-" + time.strftime("%Y%m%d-%H%M%S")))
    a = p.parse_args(argv)
    names = a.configs.split(",")
    configs.check_names(names)
    sizes = [report.parse_size(s) for s in a.sizes.split(",")]
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    import socket
    import torch.multiprocessing as mp
    results, failed = {}, []
    for name in names:
        log_prefix = os.path.join(a.out, "logs", f"interference.{name}.nccl")
        env = configs.overrides(name, a.plugin_dir, log_prefix)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        result_path = os.path.join(a.out, f"{name}.json")
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        ctx = mp.get_context("spawn")
        procs = [ctx.Process(target=_worker, args=(r, 2, port, env, sizes, a.seconds, result_path)) for r in range(2)]
        for pr in procs:
            pr.start()
        for pr in procs:
            pr.join(600)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if any(pr.exitcode != 0 for pr in procs) or not os.path.exists(result_path):
            failed.append(name)
            print(f"FAILED {name}: worker exit codes {[pr.exitcode for pr in procs]}")
            continue
        with open(result_path) as fh:
            results[name] = json.load(fh)
    print(f"{'config':>12} {'size':>8} {'GEMM alone':>11} {'with traffic':>13} {'ratio':>6} "
          f"{'busbw alone':>12} {'busbw meanwhile':>16}")
    with open(os.path.join(a.out, "interference.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["config", "size_bytes", "tflops_alone", "tflops_with", "ratio", "comm_busbw_alone_gbs",
                    "comm_busbw_gbs"])
        for name, rows in results.items():
            for r in rows:
                print(f"{name:>12} {report.human_size(r['size']):>8} {r['tflops_alone']:8.1f} TF {r['tflops_with']:10.1f} TF "
                      f"{r['ratio']:6.3f} {r['comm_busbw_alone']:7.2f} GB/s {r['comm_busbw']:11.2f} GB/s")
                w.writerow([name, r["size"], f"{r['tflops_alone']:.1f}", f"{r['tflops_with']:.1f}",
                            f"{r['ratio']:.4f}", f"{r['comm_busbw_alone']:.3f}", f"{r['comm_busbw']:.3f}"])
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 4))
        for name, rows in results.items():
            ax.plot([r["size"] for r in rows], [r["ratio"] for r in rows], marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("all_reduce message size (bytes)")
        ax.set_ylabel("GEMM throughput, relative to alone")
        ax.axhline(0.99, color="grey", linestyle="--", linewidth=1, label="goal 0.99")
        ax.set_title("bf16 GEMM 8192^3 beside NCCL traffic, same GPU")
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(a.out, "interference.png"), dpi=120)
    except ImportError:
        print("matplotlib not available: no plot")
    print(f"results: {a.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    sys.exit(main())
