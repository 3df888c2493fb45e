#!/bin/bash
# run335 (prepared in session 39, not run; any lent machine): does NCCL's own count of the 8 channels
# tcpxr has it build pay at 4-32 MiB shares now that the ring's Simple runs 256 threads a channel
# over host memory (lo at 10 Gb/s, session 38)? The tuner's below-bulk row caps those shares at 4
# channels (measured before, on 512 threads: 8 paid only from 32 MiB shares). dist/c51 = main +
# dist/exp-built-channels.patch (the BuiltChannels row for host buffers too) against main (dist/c49),
# all_reduce, all_gather, reduce_scatter 4-256 MiB, 20 iterations, -N 2, three passes. Shape by
# argument: mps2 (2 ranks on GPU 0 under MPS: one H200), gpu2 (2 ranks one per GPU), gpu4 (4 ranks
# one per GPU). The pool's 2-channel cap makes 4 ranks on one H200 moot. With gpu2 or gpu4, also
# the small all_gather/reduce_scatter's algorithm (below).
cd "$(dirname "$0")/.."; A=/tmp/run335; source dist/common.sh
start_run; echo "c49: $(cat dist/c49/commit.txt); c51: $(cat dist/c51/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
NEW=b8:NCCL_NET_PLUGIN=$PWD/dist/c51/libnccl-net-tcpxr.so
case ${1:-mps2} in
  mps2) export CUDA_VISIBLE_DEVICES=0; SHAPE=(--one-gpu --mps --ranks 2);;
  gpu2) export CUDA_VISIBLE_DEVICES=0,1; SHAPE=(--mpirun --ranks 2);;
  gpu4) SHAPE=(--mpirun --ranks 4);;
esac
echo "shape: $1 ${SHAPE[*]}" >> $A/machine.txt
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 "${SHAPE[@]}" --ops all_reduce,all_gather,reduce_scatter --min 4M --max 256M --iters 20 --warmup 3 --cycles 2 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+b8 --variant $NEW --out $A/${1:-mps2} > $A/${1:-mps2}.txt 2>&1
el "${1:-mps2} rc=$? $(grep -c ' ok, ' $A/${1:-mps2}.txt) ok, $(grep -c FAILED $A/${1:-mps2}.txt) failed"
# One rank per GPU: all_gather and reduce_scatter of 32-128 B trail Socket at 2 ranks (0.83-0.92,
# run 331) where all_reduce and sendrecv no longer do: NCCL's choice for each transport (TUNING), and
# the time with the ring forced (NCCL_ALGO=Ring, against PAT) for both.
if [ "${1:-mps2}" != mps2 ]; then
  timeout 60 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 "${SHAPE[@]}" --ops all_gather,reduce_scatter --min 8 --max 1K --iters 2 --warmup 1 --timeout 25 \
    --configs tcpxr-host,socket --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/pat-tune > $A/pat-tune.txt 2>&1
  for c in tcpxr-host socket; do grep -h "AllGather:\|ReduceScatter:" $A/pat-tune/logs/*.$c.* | sed 's/^.*NCCL INFO //' | sort | uniq -c > $A/pat-tune-$c.txt; done
  rm -rf $A/pat-tune/logs
  timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c49 "${SHAPE[@]}" --ops all_gather,reduce_scatter --min 8 --max 1K --iters 200 --warmup 20 --cycles 3 --timeout 30 --repeat 2 \
    --configs tcpxr-host,tcpxr-host+ring,socket,socket+ring --variant ring:NCCL_ALGO=Ring --out $A/pat > $A/pat.txt 2>&1
  el "pat rc=$? $(grep -c ' ok, ' $A/pat.txt) ok, $(grep -c FAILED $A/pat.txt) failed"
fi
rm -rf $A/*/r*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
