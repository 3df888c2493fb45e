#!/bin/bash
# run371 (4x H200, session 46):
#  1. rma's GPU tests on main's head (dist/c69 = 3c7bcfeb: its two held-stream tests now share
#     helpers; not yet run on a GPU), GPU 0, default (28 tests).
#  2. Where run 370's spread rule cuts: dist/c70 = 3c7bcfeb + dist/exp-recent-stats.patch (the rule
#     on, 128 KiB pieces; NCCL_TCPXR_STATS=1 adds "spread cut X of Y, moving comms avg M max N" to
#     each send comm's line). One launch per op and size, 20 iterations, host buffers, -c 1:
#     4 ranks one per GPU: all_reduce 1-16 MiB, all_gather and reduce_scatter 4-16 MiB;
#     2 ranks on GPUs 0-1: all_reduce 2-8 MiB.
#  3. Issue 31 item 4 at 4 ranks one per GPU on main (c69; last measured at 4 ranks in run 298):
#     GPU buffers against host buffers, sendrecv and all_reduce 8-128 MiB, 20 iterations, three
#     passes alternated (as run 339 at 2 ranks).
cd "$(dirname "$0")/.."; A=/tmp/run371; source dist/common.sh
start_run; for c in c69 c70; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; ( [ -x $NT/sendrecv_perf ] || tests_228 ) & BUILD=$!
CUDA_VISIBLE_DEVICES=0 TCPXR_REQUIRE_GPU=1 timeout 150 dist/c69/deps/rma --include-ignored --test-threads=1 > $A/rma-default.txt 2>&1
el "rma default rc=$? $(grep -h '^test result' $A/rma-default.txt)"; grep -h 'FAILED\|panicked' $A/rma-default.txt | head -5 | tee -a $A/steps.txt
wait $BUILD; NT=/tmp/nt-2.28.3/build; el "nccl-tests ready: $(ls $NT | wc -l) files"
one(){ local np=$1 op=$2 size=$3 gpus=$4
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,TUNING CUDA_VISIBLE_DEVICES=$gpus
    NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c70/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0 NCCL_TCPXR_STATS=1)
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b $size -e $size -n 20 -w 5 -c 1 -g 1 > $A/r$np-$op-$size.log 2>&1
  local rc=$?
  grep -h "stats send:\|Bytes -> Algo" $A/r$np-$op-$size.log | sed 's/^.*NCCL INFO //' | sort | uniq -c > $A/r$np-$op-$size-stats.txt
  el "r$np $op $size rc=$rc $(awk '/^ +[0-9]+ +[0-9]+ /{print $6 " us, #wrong " $9}' $A/r$np-$op-$size.log | head -1); $(grep -o 'spread cut [0-9]* of [0-9]*, moving comms avg [0-9.]* max [0-9]*' $A/r$np-$op-$size.log | awk '{c+=$3; y+=$5} END{print "cut " c " of " y}')"; }
for s in 1M 2M 4M 8M 16M; do one 4 all_reduce $s 0,1,2,3; done
for op in all_gather reduce_scatter; do for s in 4M 8M 16M; do one 4 $op $s 0,1,2,3; done; done
for s in 2M 4M 8M; do one 2 all_reduce $s 0,1; done
CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 280 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c69 --mpirun --ranks 4 --ops sendrecv,all_reduce --min 8M --max 128M --iters 20 --warmup 3 --cycles 2 --timeout 60 --repeat 3 \
  --configs tcpxr-host,tcpxr-gpu --out $A/item4 > $A/item4.txt 2>&1
el "item4 rc=$? $(grep -c ' ok, ' $A/item4.txt) ok, $(grep -c FAILED $A/item4.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
