#!/bin/bash
# run238 (a 4-GPU host, 64 cores; 2026-11-27, twenty-seventh session): 623727a (copies into GPU
# memory on point-to-point connections only, auto). One rank per GPU: host and GPU buffers,
# sendrecv and all_reduce 1-512 MiB, 10 iterations, --repeat 2, at 2 ranks (GPUs 0-1) and 4; the
# logs' copy counters say which connections copied. Then correctness: 4 ranks one per GPU,
# all_reduce and sendrecv 8 B-32 MiB -c 1, host and GPU buffers, NCCL's choice, Ring, Tree; 3 ranks
# (GPUs 0-2) with NCCL's choice, all_gather and reduce_scatter too.
cd "$(dirname "$0")/.."; A=/tmp/run238; source dist/common.sh
L=dist/c4
start_run
{ echo "new: $(cat $L/commit.txt)"; } >> $A/machine.txt
tests_228
for np in 2 4; do
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks $np --ops sendrecv,all_reduce --min 1M --max 512M --iters 10 --warmup 3 --repeat 2 --timeout 60 --configs tcpxr-host,tcpxr-gpu --out $A/speed-$np > $A/speed-$np.txt 2>&1
  el "speed $np ranks rc=$? $(grep -c ' ok, ' $A/speed-$np.txt) ok; copying comms in logs: $(for o in sendrecv all_reduce; do echo -n "$o $(cat $A/speed-$np/logs/$o.tcpxr-gpu.* 2>/dev/null | grep -c 'stats receive copies') "; done)"
done
for algo in NCCL Ring Tree; do
  al=(); [ $algo != NCCL ] && al=(--algo $algo)
  timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 4 "${al[@]}" --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-4-$algo > $A/check-4-$algo.txt 2>&1
  el "check 4 ranks $algo rc=$? $(grep -c ' ok, ' $A/check-4-$algo.txt) ok, $(grep -c FAILED $A/check-4-$algo.txt) failed"
done
timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 3 --ops all_reduce,sendrecv,all_gather,reduce_scatter --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-3-NCCL > $A/check-3-NCCL.txt 2>&1
el "check 3 ranks NCCL rc=$? $(grep -c ' ok, ' $A/check-3-NCCL.txt) ok, $(grep -c FAILED $A/check-3-NCCL.txt) failed"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
