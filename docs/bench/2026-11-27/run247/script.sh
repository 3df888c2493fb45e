#!/bin/bash
# run247 (one H200, 16 cores; 2026-11-27, twenty-eighth session): run 246: polling is not it (10-15
# queries a copy, skipping early ones changed nothing). Split the host-to-GPU work between the copy
# engine and NCCL's kernel: dist/c12 = 51a4acd + dist/run247-copy-frac.patch.txt (experiment only):
# TCPXR_EXP_COPY_FRAC=p copies the first p % of a copied receive (4 KiB multiples) and publishes
# records for the rest, which NCCL's unpack places. 2 ranks under MPS, sendrecv 8-512 MiB, 10
# iterations, -c 1, --repeat 2.
cd "$(dirname "$0")/.."; A=/tmp/run247; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; echo "c12: $(cat dist/c12/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run247.tar.xz -C /tmp run247" EXIT
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ops sendrecv --warmup 3 --timeout 60 --plugin-dir dist/c12 --min 8M --max 512M --iters 10 --repeat 2 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+f90,tcpxr-gpu+f75,tcpxr-gpu+f50 --variant f90:TCPXR_EXP_COPY_FRAC=90 --variant f75:TCPXR_EXP_COPY_FRAC=75 --variant f50:TCPXR_EXP_COPY_FRAC=50 --out $A/sm > $A/sm.txt 2>&1
el "sm rc=$? $(grep -c ' ok, ' $A/sm.txt) ok"
grep -r -h 'stats receive copies' $A/sm/*/logs 2>/dev/null | sort | uniq > $A/copy-counters.txt
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
