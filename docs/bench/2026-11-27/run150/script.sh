#!/bin/bash
# run150: the 4-rank table on today's defaults: 4 ranks on GPU 0 as 4 NCCL hosts under MPS, NCCL
# Socket's four tunings and tcpxr (host buffers), all_reduce and sendrecv 8 B-256 MiB, 10 iterations.
cd "$(dirname "$0")/.."; A=/tmp/run150; source dist/common.sh
fin(){ tar czf $R/run150.tgz -C /tmp run150; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
build_tests
timeout 330 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --ranks 4 --nccl-tests $NT --plugin-dir dist --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host --ops all_reduce,sendrecv --iters 10 --warmup 3 --min 8 --max 256M --timeout 60 --out $A/table4 > $A/table4.log 2>&1; el "table4 rc=$? $(tail -1 $A/table4.log)"
rm -rf $A/table4/logs
