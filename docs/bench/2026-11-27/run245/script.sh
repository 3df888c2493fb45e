#!/bin/bash
# run245 (one H200, 16 cores; 2026-11-27, twenty-eighth session): run 244's timeline showed copies
# queued in bursts (a median 11-13 us apart, up to 7 waiting) and each 16-19 us on the GPU, so a
# burst drains one copy at a time. dist/c10 = 51a4acd + dist/run245-streams-merge.patch.txt
# (experiment only): TCPXR_EXP_COPY_STREAMS=n deals a comm's copies round-robin over n streams;
# TCPXR_EXP_COPY_MERGE=1 makes one copy of each run of due receives contiguous in bounce memory and
# in NCCL's buffer. 2 ranks under MPS, sendrecv 8-512 MiB, 10 iterations, -c 1, --repeat 2.
cd "$(dirname "$0")/.."; A=/tmp/run245; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; echo "c10: $(cat dist/c10/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run245.tar.xz -C /tmp run245" EXIT
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ops sendrecv --warmup 3 --timeout 60 --plugin-dir dist/c10 --min 8M --max 512M --iters 10 --repeat 2 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+s2,tcpxr-gpu+s4,tcpxr-gpu+m --variant s2:TCPXR_EXP_COPY_STREAMS=2 --variant s4:TCPXR_EXP_COPY_STREAMS=4 --variant m:TCPXR_EXP_COPY_MERGE=1 --out $A/sm > $A/sm.txt 2>&1
el "sm rc=$? $(grep -c ' ok, ' $A/sm.txt) ok"
grep -r -h 'stats receive copies' $A/sm/*/logs 2>/dev/null | sort | uniq > $A/copy-counters.txt
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
