#!/bin/bash
# run244 (one H200, 16 cores; 2026-11-27, twenty-eighth session): a timeline of every copy into GPU
# memory (dist/c9 = 51a4acd + dist/run244-copy-trace.patch.txt, experiment only: per copy the host
# time it was queued, its GPU execution time and idle gap from timing events, its GPU completion on
# the host's clock (elapsed from a reference event recorded at the first copy), and when NCCL's
# test first saw it done). 2 ranks under MPS, sendrecv 512 MiB and 32 MiB, 20 iterations, GPU buffers.
cd "$(dirname "$0")/.."; A=/tmp/run244; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; echo "c9: $(cat dist/c9/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run244.tar.xz -C /tmp run244" EXIT
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
for sz in 512M 32M; do
  mkdir -p $A/trace-$sz
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ops sendrecv --warmup 3 --timeout 60 --plugin-dir dist/c9 --min $sz --max $sz --iters 20 \
    --configs tcpxr-host,tcpxr-gpu,tcpxr-gpu+tr --variant tr:TCPXR_EXP_COPY_TRACE=$A/trace-$sz --out $A/t$sz > $A/t$sz.txt 2>&1
  el "t$sz rc=$? $(grep -c ' ok, ' $A/t$sz.txt) ok $(ls $A/trace-$sz | wc -l) traces"
done
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
