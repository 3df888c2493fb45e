#!/usr/bin/env python3
"""Background host-to-GPU copies, for run264: 16 MiB from pinned host memory (never written by the
CPU after its allocation) to GPU DEV on a stream of its own, a pause of PAUSE_MS after each, until
SECONDS pass; prints the copies' average rate."""
import sys, time
import torch
dev, pause_ms, secs = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
torch.set_num_threads(1)
torch.cuda.set_device(dev)
h = torch.zeros(16 << 20, dtype=torch.uint8).pin_memory()
d = torch.empty(16 << 20, dtype=torch.uint8, device="cuda")
s = torch.cuda.Stream()
t0 = time.time(); n = 0
while time.time() - t0 < secs:
    with torch.cuda.stream(s):
        d.copy_(h, non_blocking=True)
    s.synchronize(); n += 1
    if pause_ms > 0:
        time.sleep(pause_ms / 1e3)
dt = time.time() - t0
print(f"bg dev {dev} pause {pause_ms} ms: {n} copies of 16 MiB in {dt:.1f} s = {n * 16 / 1024 / dt:.1f} GiB/s", flush=True)
