#!/bin/bash
# run438 (one H200, session 54): an inline message on a point-to-point connection written at its
# first test instead of inside isend (dist/c103, the commit after 2b1f8ad8) against main
# (dist/c102 with its experiment off, 2b1f8ad8) and Socket default. Sendrecv 8 B-128 KiB (x4),
# -n 1000 -w 200 -c 1: 10 rounds at 2 ranks, 6 at 4 ranks, then all_reduce at 2 ranks 2 rounds
# (collectives' connections are untouched); each round one launch of each in rotated order; GPU 0
# under MPS, host buffers. Then the correctness set on c103 (3 and 4 ranks, host and GPU buffers,
# NCCL's choice, Ring, Tree; 4 ranks GPU buffers with CUDA_DEVICE_MAX_CONNECTIONS=1).
cd "$(dirname "$0")/.."; A=/tmp/run438; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for v in c102 c103; do echo "$v: $(cat dist/$v/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3; shift 3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -g 1 -c 1 "$@"; }
one(){ local tag=$1; shift; launch "$@" > $A/$tag.log 2>&1
  el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"; }
order(){ case $(($1 % 3)) in 1) echo c102 c103 socket;; 2) echo socket c102 c103;; 0) echo c103 socket c102;; esac; }
for round in $(seq 1 10); do for v in $(order $round); do
  one 2-sendrecv-$v-r$round $v 2 sendrecv -b 8 -e 128K -f 4 -n 1000 -w 200; done; done
for round in $(seq 1 6); do for v in $(order $round); do
  one 4-sendrecv-$v-r$round $v 4 sendrecv -b 8 -e 128K -f 4 -n 1000 -w 200; done; done
for round in 1 2; do for v in $(order $round); do
  one 2-all_reduce-$v-r$round $v 2 all_reduce -b 8 -e 128K -f 4 -n 1000 -w 200; done; done
mps_off
for np in 3 4; do for algo in NCCL Ring Tree; do
  al=(); [ $algo != NCCL ] && al=(--algo $algo)
  timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c103 --one-gpu --mps --ranks $np "${al[@]}" --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-$np-$algo > $A/check-$np-$algo.txt 2>&1
  el "check $np ranks $algo rc=$? $(grep -c ' ok, ' $A/check-$np-$algo.txt) ok, $(grep -c FAILED $A/check-$np-$algo.txt) failed"
done; done
timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c103 --one-gpu --ranks 4 --ops all_reduce,sendrecv --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 --max 32M --iters 2 --warmup 1 --timeout 90 --out $A/check-4-cdmc1 > $A/check-4-cdmc1.txt 2>&1
el "check 4 ranks CUDA_DEVICE_MAX_CONNECTIONS=1 rc=$? $(grep -c ' ok, ' $A/check-4-cdmc1.txt) ok, $(grep -c FAILED $A/check-4-cdmc1.txt) failed"
rm -rf $A/check-*/logs $A/check-*/mps-log
el done
