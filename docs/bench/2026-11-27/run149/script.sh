#!/bin/bash
# run149: issue 34's "no slowdown": the same nccl-tests command on 63c4898 (dist/old) and on
# 80f370a (dist), alternated twice, all_reduce and sendrecv 8 B-256 MiB, host buffers, 2 ranks
# under MPS, 10 iterations; then issue 29's tools at 4 ranks: hazard check, a short soak.
cd "$(dirname "$0")/.."; A=/tmp/run149; source dist/common.sh
fin(){ tar czf $R/run149.tgz -C /tmp run149; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
build_tests
mkdir -p dist/oldp && cp dist/old/libnccl-net-tcpxr.so dist/oldp/
for i in 1 2; do for which in old new; do d=dist; [ $which = old ] && d=dist/oldp
 timeout 150 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $d --configs tcpxr-host --ops all_reduce,sendrecv --iters 10 --warmup 3 --min 8 --max 256M --timeout 70 --out $A/perf$i-$which > $A/perf$i-$which.log 2>&1; el "perf$i-$which rc=$? $(tail -1 $A/perf$i-$which.log)"
done; done
mps_on
timeout 110 python3 ncclTests/soak.py --one-gpu --mps --ranks 4 --ops all_reduce,sendrecv --configs tcpxr-gpu --nccl-tests $NT --plugin-dir dist --max 32M --duration 60 --warmup-seconds 20 --out $A/soak4 > $A/soak4.log 2>&1; el "soak ranks=4 rc=$? $(tail -1 $A/soak4.log)"
mps_off
timeout 200 python3 ncclTests/hazard_check.py --nccl-tests $NT --plugin-dir dist --ranks 4 --timeout 30 --out $A/hazard4 > $A/hazard4.log 2>&1; el "hazard ranks=4 rc=$? $(tail -6 $A/hazard4.log | tr '\n' ' ')"
