#!/bin/bash
# run266 (one H200, 16 cores; 2026-11-27, thirtieth session): item 4, the loaded case of run 265:
# dist/memprobe_mt.py with 4 and 8 writer threads (registered memory as the bounce arena,
# cudaHostAlloc'd as NCCL's buffers, each with and without the copy engine reading every piece
# right after it is written), two rounds each.
cd "$(dirname "$0")/.."; A=/tmp/run266; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run266.tar.xz -C /tmp run266" EXIT
for t in 4 8; do timeout 150 python3 dist/memprobe_mt.py $t > $A/memprobe-$t.txt 2>&1; el "memprobe $t threads rc=$?"; cat $A/memprobe-$t.txt >> $A/steps.txt; done
