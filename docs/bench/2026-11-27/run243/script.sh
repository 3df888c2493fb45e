#!/bin/bash
# run243 (one H200, 16 cores; 2026-11-27, twenty-eighth session): does the bounce memory's
# footprint cost GPU buffers' sendrecv? dist/c8 = 51a4acd with the bounce pool's capacity read from
# TCPXR_EXP_BOUNCE_BYTES (experiment only; default 16 MiB a receive comm, cycled through whole,
# where NCCL's host buffers reuse 4 MiB a connection). 2 ranks under MPS, sendrecv 8-512 MiB, 10
# iterations, --repeat 2: host buffers; GPU buffers with 16, 8 and 4 MiB of bounce a comm.
cd "$(dirname "$0")/.."; A=/tmp/run243; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; echo "c8: $(cat dist/c8/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run243.tar.xz -C /tmp run243" EXIT
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ops sendrecv --warmup 3 --timeout 60 --plugin-dir dist/c8 --min 8M --max 512M --iters 10 --repeat 2 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+b8,tcpxr-gpu+b4 --variant b8:TCPXR_EXP_BOUNCE_BYTES=8388608 --variant b4:TCPXR_EXP_BOUNCE_BYTES=4194304 --out $A/cap > $A/cap.txt 2>&1
el "cap rc=$? $(grep -c ' ok, ' $A/cap.txt) ok"
grep -r -h 'stats receive copies' $A/cap/*/logs 2>/dev/null | sort | uniq > $A/copy-counters.txt
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
