#!/bin/bash
# run287 (a 2-GPU host): the demote default (19fce73d, dist/c33: demote on by default, only the
# receives the copy engine places) where main (dist/cM, e9d26084) has it off:
#  1. GPU tests gpu_demote and gpu_copy_in of c33: default, CUDA_DEVICE_MAX_CONNECTIONS=1, MPS.
#  2. The default acts: 2 ranks one per GPU, GPU buffers, sendrecv 8-64 MiB, c33 against main
#     through NCCL_NET_PLUGIN, no NCCL_TCPXR_BOUNCE_DEMOTE set, two passes; the copy counters.
#  3. Item 1 at 2 ranks by medians in the runner's alternating order (run 282's shape, on c33,
#     host buffers: 8 B-2 MiB, 200 iterations, the four Socket tunings, three passes).
cd "$(dirname "$0")/.."; A=/tmp/run287; source dist/common.sh
start_run; echo "cM: $(cat dist/cM/commit.txt); c33: $(cat dist/c33/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
export TCPXR_REQUIRE_GPU=1
for t in gpu_demote gpu_copy_in; do
  CUDA_VISIBLE_DEVICES=0 timeout 60 dist/c33/deps/$t --include-ignored --test-threads=1 > $A/$t-default.txt 2>&1; el "$t default rc=$? $(grep -h '^test result' $A/$t-default.txt)"
  CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1 timeout 60 dist/c33/deps/$t --include-ignored --test-threads=1 > $A/$t-1queue.txt 2>&1; el "$t one queue rc=$? $(grep -h '^test result' $A/$t-1queue.txt)"
  mps_on; CUDA_VISIBLE_DEVICES=0 timeout 60 dist/c33/deps/$t --include-ignored --test-threads=1 > $A/$t-mps.txt 2>&1; el "$t MPS rc=$? $(grep -h '^test result' $A/$t-mps.txt)"; mps_off
done
unset TCPXR_REQUIRE_GPU NCCL_TCPXR_BOUNCE_DEMOTE
NEW=new:NCCL_NET_PLUGIN=$PWD/dist/c33/libnccl-net-tcpxr.so
CUDA_VISIBLE_DEVICES=0,1 timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/cM --mpirun --ranks 2 --ops sendrecv --min 8M --max 64M --iters 10 --warmup 3 --timeout 60 --repeat 2 \
  --configs tcpxr-gpu,tcpxr-gpu+new --variant $NEW --out $A/d > $A/d.txt 2>&1
el "d rc=$? $(grep -c ' ok, ' $A/d.txt) ok"
for f in $A/d/r*/logs/*; do echo "$(echo $f | sed "s#$A/##"): $(grep -ho 'copies into GPU memory.*' $f | head -1) $(grep -ho '[0-9.]* MB demoted' $f | head -1) $(grep -ho 'NCCL_TCPXR_BOUNCE_DEMOTE[^,;]*' $f | head -1)"; done > $A/copy-counters.txt 2>&1
el "demoted in $(grep -c 'MB demoted' $A/copy-counters.txt) of $(wc -l < $A/copy-counters.txt) logs"
CUDA_VISIBLE_DEVICES=0,1 timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c33 --mpirun --ranks 2 --ops all_reduce,sendrecv,all_gather,reduce_scatter --min 8 --max 2M --iters 200 --warmup 20 --timeout 60 --repeat 3 \
  --configs tcpxr-host,socket,socket-1x1,socket-2x2,socket-4x4 --out $A/t2 > $A/t2.txt 2>&1
el "t2 rc=$? $(grep -c ' ok, ' $A/t2.txt) ok, $(grep -c FAILED $A/t2.txt) failed"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
