#!/bin/bash
# run437 (one H200, session 54): EXPERIMENT, an inline message written at its first test instead of
# inside isend, as NCCL's Socket does (dist/c102 with NCCL_TCPXR_EXP_DEFER_WRITE=1: NCCL's proxy
# posts the send, tests its receives, and writes on its next pass over the send), against c102 as
# main and Socket default. 12 rounds of sendrecv -b 8 -e 8 -n 3000 (2 ranks), then 6 rounds of
# 8 B-2 KiB x4 -n 1000: 2 ranks all_reduce and all_gather, 4 ranks all_reduce and sendrecv; each
# round one launch of each in rotated order; GPU 0 under MPS, host buffers. Then the correctness
# set's shapes with the deferral on.
cd "$(dirname "$0")/.."; A=/tmp/run437; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c102: $(cat dist/c102/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3; shift 3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    c102d) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c102/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0 NCCL_TCPXR_EXP_DEFER_WRITE=1);;
    *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -g 1 -c 1 "$@"; }
one(){ local tag=$1; shift; launch "$@" > $A/$tag.log 2>&1
  el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"; }
order(){ case $(($1 % 3)) in 1) echo c102 c102d socket;; 2) echo socket c102 c102d;; 0) echo c102d socket c102;; esac; }
for round in $(seq 1 12); do for v in $(order $round); do
  one 2-sendrecv-$v-r$round $v 2 sendrecv -b 8 -e 8 -n 3000 -w 300; done; done
for round in $(seq 1 6); do for shape in 2:all_reduce 2:all_gather 4:all_reduce 4:sendrecv; do for v in $(order $round); do
  np=${shape%%:*}; op=${shape#*:}; one $np-$op-$v-s$round $v $np $op -b 8 -e 2K -f 4 -n 1000 -w 200; done; done; done
mps_off
W=(--env NCCL_TCPXR_EXP_DEFER_WRITE=1)
for np in 3 4; do for algo in NCCL Ring Tree; do
  al=(); [ $algo != NCCL ] && al=(--algo $algo)
  timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c102 --one-gpu --mps --ranks $np "${al[@]}" "${W[@]}" --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-$np-$algo > $A/check-$np-$algo.txt 2>&1
  el "check $np ranks $algo rc=$? $(grep -c ' ok, ' $A/check-$np-$algo.txt) ok, $(grep -c FAILED $A/check-$np-$algo.txt) failed"
done; done
rm -rf $A/check-*/logs $A/check-*/mps-log
el done
