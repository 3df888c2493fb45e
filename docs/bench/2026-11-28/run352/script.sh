#!/bin/bash
# run352 (a 4-GPU host, 4 ranks one per GPU; session 42): the all_reduce of 8-64 B at 4 ranks, where
# run 334 found tcpxr 48-50 us against Socket default's 41-42, yet 45.7-47.5 with NCCL_ALGO=Tree.
# First NCCL's choices (TUNING log, 8 B-4 KiB, -c 1) for tcpxr, tcpxr with the tree forced, tcpxr
# without its tuner, Socket and Socket with the tree forced; then their times, 8 B-1 KiB, 200
# iterations, -N 3, three passes alternated (main's head, dist/c53).
cd "$(dirname "$0")/.."; A=/tmp/run352; source dist/common.sh
start_run; echo "c53: $(cat dist/c53/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
CF=tcpxr-host,tcpxr-host+tree,tcpxr-host+notuner,socket,socket+tree
VS=(--variant tree:NCCL_ALGO=Tree --variant notuner:NCCL_TCPXR_TUNER=0)
timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --mpirun --ranks 4 --ops all_reduce --min 8 --max 4K --iters 2 --warmup 1 --timeout 40 \
  --configs $CF "${VS[@]}" --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $A/tune > $A/tune.txt 2>&1
el "tune rc=$? $(grep -c ' ok, ' $A/tune.txt) ok, $(grep -c FAILED $A/tune.txt) failed"
for c in ${CF//,/ }; do
  grep -h "AllReduce:" $A/tune/logs/all_reduce.$c.* 2>/dev/null | sed 's/^.*NCCL INFO //; s/opCount [0-9a-f]* //' | sort | uniq -c > $A/tune-$c.txt
  el "tune $c: $(awk '{$1=""; print}' $A/tune-$c.txt | sort -u | head -12 | paste -sd';')"
done
rm -rf $A/tune/logs
timeout 330 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 --mpirun --ranks 4 --ops all_reduce --min 8 --max 1K --iters 200 --warmup 20 --cycles 3 --timeout 40 --repeat 3 \
  --configs $CF "${VS[@]}" --out $A/t4 > $A/t4.txt 2>&1
el "t4 rc=$? $(grep -c ' ok, ' $A/t4.txt) ok, $(grep -c FAILED $A/t4.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
