#!/bin/bash
# run265 (one H200; 2026-11-27, thirtieth session): item 4. Runs 262-264: with GPU buffers the I/O
# threads' kernel copies cost 1.2-1.7x the CPU a byte, and neither huge bounce pages nor the copy
# engine's traffic as such explain it. Is it the memory itself? dist/memprobe.py: one thread's
# memmove of 512 KiB pieces into anonymous memory, into the same once cudaHostRegister'd (tcpxr's
# bounce arena), into cudaHostAlloc'd memory (NCCL's host buffers), alone and with the copy
# engine reading each piece right after; and out of each. Two rounds.
cd "$(dirname "$0")/.."; A=/tmp/run265; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; uptime; lscpu | grep -E '^(Model name|NUMA node\(s\)|L2|L3)'; } > $A/machine.txt 2>&1
trap "tar cJf $R/run265.tar.xz -C /tmp run265" EXIT
timeout 200 taskset -c 2 python3 dist/memprobe.py > $A/memprobe.txt 2>&1; el "memprobe rc=$?"
cat $A/memprobe.txt >> $A/steps.txt
