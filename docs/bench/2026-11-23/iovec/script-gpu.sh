#!/bin/bash
# run60a: does a small first iovec slow loopback sendmsg on the GPU host too?
cd "$(dirname "$0")/.."
lscpu | grep -E 'Model name|^CPU\(s\)|Thread|Socket'; uname -r
gcc -O2 -pthread -o /tmp/pp dist/pp/pp.c
for s in 65536 131072 524288; do for m in 0 3 5; do /tmp/pp $s $m; done; done
for hl in 8 16 24 32 64; do echo -n "HL=$hl "; HL=$hl /tmp/pp 131072 3; done
for s in 64K 128K 512K; do
  for e in "X=1" "NCCL_TCPXR_INLINE_IDLE_BYTES=0" "NCCL_TCPXR_INLINE_IDLE_BYTES=0 NCCL_TCPXR_IO_THREADS=0" "NCCL_TCPXR_INLINE_IDLE_BYTES=1M"; do
    echo "== $s $e"; env $e timeout 60 dist/tcpxr-bench latency --size $s --iters 5000 2>&1 | grep -v INFO
  done
done
