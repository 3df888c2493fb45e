#!/usr/bin/env python3
"""run266's probe: memprobe.py's writes from T threads at once (each its own 16 MiB and its own
CUDA stream; ctypes lets go of the GIL in memmove): into cudaHostRegister'd anonymous memory (as
tcpxr's bounce arena) and into cudaHostAlloc'd memory (as NCCL's host buffers), alone and with the
copy engine reading every piece right after it is written. GB/s: all threads' bytes over the
slowest thread's summed memmove time."""
import ctypes, mmap, sys, threading, time
import torch

T = int(sys.argv[1]) if len(sys.argv) > 1 else 8
N, CH, PASSES = 16 << 20, 512 << 10, 20
libc = ctypes.CDLL("libc.so.6")
torch.cuda.set_device(0)
cudart = torch.cuda.cudart()

def registered():
    m = mmap.mmap(-1, N, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    buf = (ctypes.c_char * N).from_buffer(m)
    libc.memset(buf, 1, N)
    assert int(cudart.cudaHostRegister(ctypes.addressof(buf), N, 3)) == 0
    return (m, buf), ctypes.addressof(buf), torch.frombuffer(buf, dtype=torch.uint8)

def allocated():
    t = torch.zeros(N, dtype=torch.uint8).pin_memory()
    return t, t.data_ptr(), t

srcs = [torch.ones(N, dtype=torch.uint8).pin_memory() for _ in range(T)]
gpus = [torch.empty(N, dtype=torch.uint8, device="cuda") for _ in range(T)]
streams = [torch.cuda.Stream() for _ in range(T)]
kinds = {"registered": [registered() for _ in range(T)], "cudaHostAlloc": [allocated() for _ in range(T)]}

def worker(i, dst, dma_from, out):
    torch.cuda.set_device(0)
    s0 = srcs[i].data_ptr(); dt = 0.0
    for _ in range(PASSES):
        for off in range(0, N, CH):
            t0 = time.perf_counter()
            libc.memmove(ctypes.c_void_p(dst + off), ctypes.c_void_p(s0 + off), CH)
            dt += time.perf_counter() - t0
            if dma_from is not None:
                with torch.cuda.stream(streams[i]):
                    gpus[i][off:off + CH].copy_(dma_from[off:off + CH], non_blocking=True)
        streams[i].synchronize()
    out[i] = dt

def run(kind, dma):
    out = [0.0] * T
    ths = [threading.Thread(target=worker, args=(i, kinds[kind][i][1], kinds[kind][i][2] if dma else None, out)) for i in range(T)]
    [t.start() for t in ths]; [t.join() for t in ths]
    label = f"{T} threads into {kind}" + (", copy engine reads each" if dma else "")
    print(f"write {label:58s} {T * PASSES * N / max(out) / 1e9:6.2f} GB/s (per thread {PASSES * N / max(out) / 1e9:5.2f})", flush=True)

for rnd in range(2):
    for kind in ("registered", "cudaHostAlloc"):
        run(kind, False); run(kind, True)
