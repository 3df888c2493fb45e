#!/bin/bash
# run219 (a 4-GPU host, 64 cores; 2026-11-27, twenty-fourth session): run 218's 256 KiB socket
# buffers (tcpxr's ring 1.2x faster at 2 ranks, 1.4-1.5x at 4) in NCCL: all_reduce 256 KiB-256 MiB
# (x4), -n 10 -w 3 -c 1, tcpxr (dist/new, a2215065) at its defaults (A) and with
# NCCL_TCPXR_SOCKET_SNDBUF=RCVBUF=256K (B), A B B A, 4 ranks one per GPU, then 2 ranks on GPUs 0-1.
# Written straight into $OUT, so that a run cut short still returns what it did.
cd "$(dirname "$0")/.."; A=${OUT:-/tmp}/run219; source dist/common.sh
start_run; trap - EXIT
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 48
p(){ local name=$1 np=$2; shift 2; local gpus=0,1,2,3; [ $np = 2 ] && gpus=0,1
  local env=(CUDA_VISIBLE_DEVICES=$gpus NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/new:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0 "$@")
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 40 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 256K -e 256M -f 4 -n 10 -w 3 -c 1 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s/%s ", $1, $6, $9}' $A/$name.log)$(grep -h 'Out of bounds' $A/$name.log | tr -s ' ')"; }
S=(NCCL_TCPXR_SOCKET_SNDBUF=256K NCCL_TCPXR_SOCKET_RCVBUF=256K)
for np in 4 2; do p a1-$np $np; p b1-$np $np "${S[@]}"; p b2-$np $np "${S[@]}"; p a2-$np $np; done
el done
