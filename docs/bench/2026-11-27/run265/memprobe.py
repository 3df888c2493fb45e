#!/usr/bin/env python3
"""run265's probe: how fast one CPU thread copies 512 KiB pieces into 16 MiB of (a) anonymous
mmap'd memory, (b) the same once cudaHostRegister'd (DEVICEMAP|PORTABLE, as tcpxr's bounce
arena), (c) cudaHostAlloc'd pinned memory (as NCCL's host buffers), each alone and with the copy
engine reading every piece into the GPU right after it is written (as tcpxr's copies into GPU
memory do); then reading pieces out of each kind into plain memory."""
import ctypes, mmap, time, sys
import torch

N, CH, PASSES = 16 << 20, 512 << 10, 40
libc = ctypes.CDLL("libc.so.6")
torch.cuda.set_device(0)
cudart = torch.cuda.cudart()

def anon():
    m = mmap.mmap(-1, N, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    buf = (ctypes.c_char * N).from_buffer(m)
    libc.memset(buf, 1, N)
    return m, ctypes.addressof(buf), buf

def addr_of(t):
    return t.data_ptr()

src_t = torch.ones(N, dtype=torch.uint8).pin_memory()  # source: hot, read many times
src = (ctypes.c_char * N).from_address(addr_of(src_t))
plain_m, plain, plain_keep = anon()
reg_m, reg, reg_keep = anon()
rc = cudart.cudaHostRegister(reg, N, 3)  # Portable | Mapped
print(f"cudaHostRegister rc={rc}")
alloc_t = torch.zeros(N, dtype=torch.uint8).pin_memory()
alloc = addr_of(alloc_t)
gpu = torch.empty(N, dtype=torch.uint8, device="cuda")
stream = torch.cuda.Stream()

def write(dst, dma_from=None, label=""):
    # Only the CPU's copies are timed: each memmove alone, summed.
    torch.cuda.synchronize()
    s0 = addr_of(src_t); dt = 0.0
    for _ in range(PASSES):
        for off in range(0, N, CH):
            t0 = time.perf_counter()
            libc.memmove(ctypes.c_void_p(dst + off), ctypes.c_void_p(s0 + off), CH)
            dt += time.perf_counter() - t0
            if dma_from is not None:
                with torch.cuda.stream(stream):
                    gpu[off:off + CH].copy_(dma_from[off:off + CH], non_blocking=True)
        stream.synchronize()
    print(f"write {label:38s} {PASSES * N / dt / 1e9:6.2f} GB/s")

def read(srcaddr, label):
    t0 = time.perf_counter()
    for _ in range(PASSES):
        for off in range(0, N, CH):
            libc.memmove(ctypes.c_void_p(plain + off), ctypes.c_void_p(srcaddr + off), CH)
    dt = time.perf_counter() - t0
    print(f"read  {label:38s} {PASSES * N / dt / 1e9:6.2f} GB/s")

reg_t = torch.frombuffer(reg_keep, dtype=torch.uint8)  # CPU tensor over the registered pages
print(f"registered tensor is_pinned={reg_t.is_pinned()}")
for rnd in range(2):
    write(plain, None, "anonymous mmap")
    write(reg, None, "mmap + cudaHostRegister")
    write(alloc, None, "cudaHostAlloc")
    write(reg, reg_t, "registered, copy engine reads each")
    write(alloc, alloc_t, "cudaHostAlloc, copy engine reads each")
    read(reg, "from registered")
    read(alloc, "from cudaHostAlloc")
