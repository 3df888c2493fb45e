#!/bin/bash
# run190 (a 2-GPU host; 2026-11-27, twenty-first session), issue 31's band: run 187 measured one
# message of 64 KiB 8 us and of 512 KiB 18 us slower one way through tcpxr than over one plain TCP
# connection (tcpxr-bench latency), and NCCL Socket cuts each message into 64 KiB pieces over its
# 2x2 threads and sockets, where tcpxr moves a message of up to NCCL_TCPXR_CHUNK_BYTES (512 KiB: every
# NCCL message) on one stripe by one thread. Smaller chunks were slower before the pool's spinners
# and hand-off queue (runs 40, 58, 72); again on today's pool: 512 KiB (default), 128 KiB, 64 KiB.
# 1. tcpxr-bench latency 64 KiB, 512 KiB, 2 MiB (dist/new = d406002), each chunk size, twice.
# 2. 2 ranks one per GPU, host buffers, all_reduce, all_gather, sendrecv 128 KiB-64 MiB, -n 20 -c 0,
#    each chunk size, Socket 2x2 and 1x1 beside, alternated twice.
cd "$(dirname "$0")/.."; A=/tmp/run190; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run190.tar.xz -C /tmp run190" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/new/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
for i in 1 2; do for c in 524288 131072 65536; do for s in 65536 524288 2097152; do
  n=3000; [ $s -gt 65536 ] && n=1000
  NCCL_TCPXR_CHUNK_BYTES=$c timeout 60 dist/new/tcpxr-bench latency --size $s --iters $n > $A/lat-r$i-c$c-s$s.txt 2>&1
  el "latency r$i chunk $c size $s: $(grep -a 'one-way' $A/lat-r$i-c$c-s$s.txt | sed -E 's/.*(tcpxr|plain TCP): one-way.*median ([0-9.]+) us, p99 ([0-9.]+).*/\1 \2 (p99 \3)/' | tr '\n' ' ')"
done; done; done
one(){ local name=$1 op=$2 net=$3; shift 3
  local env=(CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $net in tcpxr) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/new:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0);;
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 128K -e 64M -f 2 -n 20 -w 5 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
for i in 1 2; do for op in all_reduce all_gather sendrecv; do
  for c in 524288 131072 65536; do one r$i-$op-c$c $op tcpxr NCCL_TCPXR_CHUNK_BYTES=$c; done
  one r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2; one r$i-$op-socket1x1 $op socket NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1
done; done
el done
