#!/usr/bin/env python3
"""How much a running transfer slows concurrent compute on the same GPU.

For each configuration, two processes (one per GPU) time a bf16 GEMM on the default stream,
first alone, then while all_reduces of SIZE bytes keep NCCL's stream busy (two in flight at any
time). With tcpxr and GPU buffers that traffic includes tcpxr's staging copies and unpack kernels;
with NCCL's Socket it is NCCL's own kernels only. Reported per size: GEMM TFLOP/s alone, with
traffic, their ratio (1.0 = no slowdown; the project's goal is >= 0.99) and the all_reduce busbw
reached meanwhile. Seed 004's "relative attention/GEMM throughput" figure is the model.

  python3 ncclTests/interference.py --plugin-dir DIR [--configs tcpxr-host,socket-4x4]
                                    [--sizes 1M,16M,256M] [--seconds 2] [--out DIR]
"""

import argparse
import csv
import datetime
import json
import os
import sys
import time

import configs
import report

HERE = os.path.dirname(os.path.abspath(__file__))
GEMM_N = 8192


def _measure(torch, dist, device, size, seconds):
    a = torch.randn(GEMM_N, GEMM_N, device=device, dtype=torch.bfloat16)
    b = torch.randn(GEMM_N, GEMM_N, device=device, dtype=torch.bfloat16)
    x = torch.ones(max(1, size // 4), device=device, dtype=torch.float32)
    flops = 2.0 * GEMM_N ** 3

    def gemms(n, traffic):
        pending, moved = [], 0
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(n):
            if traffic:
                pending = [w for w in pending if not w.is_completed()]
                while len(pending) < 2:
                    pending.append(dist.all_reduce(x, async_op=True))
                    moved += x.numel() * 4
            torch.matmul(a, b)
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end)
        for w in pending:
            w.wait()
        torch.cuda.synchronize()
        return ms, moved

    gemms(5, False)
    probe_ms, _ = gemms(10, False)
    n = max(20, int(seconds * 1000 / (probe_ms / 10)))
    alone_ms, _ = gemms(n, False)
    dist.barrier()
    gemms(3, True)
    with_ms, moved = gemms(n, True)
    dist.barrier()
    return {
        "size": size,
        "gemms": n,
        "tflops_alone": flops * n / (alone_ms / 1e3) / 1e12,
        "tflops_with": flops * n / (with_ms / 1e3) / 1e12,
        "ratio": alone_ms / with_ms,
        # all_reduce busbw with 2 ranks equals algbw: bytes reduced per second
        "comm_busbw": moved / (with_ms / 1e3) / 1e9,
    }


def _worker(rank, world, port, env, sizes, seconds, result_path):
    os.environ.update(env)
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    device = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=300), device_id=device)
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
    print(f"{'config':>12} {'size':>8} {'GEMM alone':>11} {'with traffic':>13} {'ratio':>6} {'comm busbw':>11}")
    with open(os.path.join(a.out, "interference.csv"), "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["config", "size_bytes", "tflops_alone", "tflops_with", "ratio", "comm_busbw_gbs"])
        for name, rows in results.items():
            for r in rows:
                print(f"{name:>12} {report.human_size(r['size']):>8} {r['tflops_alone']:8.1f} TF {r['tflops_with']:10.1f} TF "
                      f"{r['ratio']:6.3f} {r['comm_busbw']:8.2f} GB/s")
                w.writerow([name, r["size"], f"{r['tflops_alone']:.1f}", f"{r['tflops_with']:.1f}",
                            f"{r['ratio']:.4f}", f"{r['comm_busbw']:.3f}"])
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
