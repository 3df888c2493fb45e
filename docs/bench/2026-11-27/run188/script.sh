#!/bin/bash
# run188 (a 2-GPU host; 2026-11-27, twenty-first session), issue 31 item 1 at 8 B: run 187 had
# all_reduce 8-128 B at 0.75-0.88 of Socket's best at 20 iterations, while run 129 (20,000
# iterations) had them level. Which part differs: an isolated all_reduce after a barrier (-n 1,
# 100 cycles: each cycle is one timed op), a burst of 20 (-n 20, 20 cycles) or the steady state
# (-n 1000, 3 cycles)? 2 ranks, one per GPU, host buffers, -c 0; tcpxr (dist/new = d406002),
# Socket default and 2x2 (run 187's best at 8-128 B); alternated twice. Then sendrecv the same way.
cd "$(dirname "$0")/.."; A=/tmp/run188; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run188.tar.xz -C /tmp run188" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/new/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
one(){ local name=$1 op=$2 net=$3 n=$4 cycles=$5; shift 5
  local env=(CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $net in tcpxr) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/new:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0);;
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 8 -e 8 -n $n -w 5 -N $cycles -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{print $6}' $A/$name.log | sort -n | awk '{a[NR]=$1} END{printf "n=%d min %s median %s max %s", NR, a[1], a[int((NR+1)/2)], a[NR]}')"; }
for i in 1 2; do for op in all_reduce sendrecv; do
  for shape in "1 100" "20 20" "1000 3"; do set -- $shape
    one r$i-$op-n$1-tcpxr $op tcpxr $1 $2; one r$i-$op-n$1-socket $op socket $1 $2
    one r$i-$op-n$1-socket2x2 $op socket $1 $2 NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2
  done; done; done
el done
