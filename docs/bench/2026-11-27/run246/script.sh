#!/bin/bash
# run246 (one H200, 16 cores; 2026-11-27, twenty-eighth session): run 245 ruled out the copies'
# drain (more streams, merged copies: no gain). Does polling cost NCCL's thread? dist/c11 = 51a4acd +
# dist/run246-query-skip.patch.txt (experiment only): the stats line counts cuEventQuery calls per
# copy, and TCPXR_EXP_QUERY_SKIP=1 queries no copy before its estimated completion (behind the copy
# ahead of it, 4 us + len / 60 GB/s). 2 ranks under MPS, sendrecv 8-512 MiB, 10 iterations, -c 1, --repeat 2.
cd "$(dirname "$0")/.."; A=/tmp/run246; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; echo "c11: $(cat dist/c11/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run246.tar.xz -C /tmp run246" EXIT
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ops sendrecv --warmup 3 --timeout 60 --plugin-dir dist/c11 --min 8M --max 512M --iters 10 --repeat 2 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+q --variant q:TCPXR_EXP_QUERY_SKIP=1 --out $A/sm > $A/sm.txt 2>&1
el "sm rc=$? $(grep -c ' ok, ' $A/sm.txt) ok"
grep -r -h 'stats receive copies' $A/sm/*/logs 2>/dev/null | sort | uniq > $A/copy-counters.txt
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
