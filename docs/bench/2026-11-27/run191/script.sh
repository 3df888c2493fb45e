#!/bin/bash
# run191 (a 4-GPU host; 2026-11-27, twenty-first session), issue 31's band: NCCL_TCPXR_IDLE_CHUNK_BYTES
# (auto 64 KiB where stripes move in parallel): a host message striped while its connection is
# nearly idle (at most one other in flight) is cut into 64 KiB chunks, so its chunks move over the
# stripes at once, where a 512 KiB chunk went whole to one I/O thread (run 190: one 512 KiB message
# one way 55-59 us in 64 KiB chunks against 88-102). dist/new = d406002, dist/split = d406002 +
# the idle chunk (uncommitted tree, 11:37 UTC). 1. tcpxr-bench latency 64 KiB, 512 KiB, 2 MiB, both,
# twice. 2. 4 ranks one per GPU: all_reduce, all_gather 128 KiB-64 MiB, -n 20 -c 0, alternated twice.
# 3. 2 ranks on GPUs 0-1: all_reduce, all_gather, reduce_scatter, sendrecv, the same. 4. dist/split's
# correctness: 3 and 4 ranks one per GPU, host and GPU buffers, NCCL's choice, Ring, Tree,
# all_reduce 8 B-32 MiB -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run191; source dist/common.sh
start_run; cat dist/new/commit.txt dist/split/commit.txt >> $A/machine.txt
{ nvidia-smi topo -m; for n in /sys/devices/system/node/node*; do echo "$n $(cat $n/cpulist)"; done; } >> $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 48
for i in 1 2; do for lib in new split; do for s in 65536 524288 2097152; do
  n=3000; [ $s -gt 65536 ] && n=1000
  timeout 60 dist/$lib/tcpxr-bench latency --size $s --iters $n > $A/lat-r$i-$lib-s$s.txt 2>&1
  el "latency r$i $lib size $s: $(grep -a 'one-way' $A/lat-r$i-$lib-s$s.txt | sed -E 's/.*(tcpxr|plain TCP): one-way.*median ([0-9.]+) us, p99 ([0-9.]+).*/\1 \2 (p99 \3)/' | tr '\n' ' ')"
done; done; done
one(){ local name=$1 np=$2 op=$3 lib=$4; shift 4
  local gpus=0,1,2,3; [ $np = 2 ] && gpus=0,1
  local env=(CUDA_VISIBLE_DEVICES=$gpus NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/$lib:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0)
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 128K -e 64M -f 2 -n 20 -w 5 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
for i in 1 2; do for op in all_reduce all_gather; do for lib in new split; do one r$i-4-$op-$lib 4 $op $lib; done; done; done
for i in 1 2; do for op in all_reduce all_gather reduce_scatter sendrecv; do for lib in new split; do one r$i-2-$op-$lib 2 $op $lib; done; done; done
c(){ local name=$1 np=$2 buf=$3; shift 3
  local env=(CUDA_VISIBLE_DEVICES=0,1,2,3 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/split:$LD_LIBRARY_PATH NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET)
  case $buf in gpu) env+=(NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1);; host) env+=(NCCL_TCPXR_GPU_BUFFERS=0);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 8 -e 32M -f 4 -n 3 -w 1 -c 1 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? #wrong: $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s/%s ", $9, $13}' $A/$name.log) | oob: $(grep -a -h 'Out of bounds' $A/$name.log | awk '{print $7,$8}') | $(grep -a -m1 -o 'IDLE_CHUNK_BYTES = [^ ]*' $A/$name.log)"; }
for np in 3 4; do for buf in host gpu; do
  c check-$np-$buf-nccl $np $buf; c check-$np-$buf-ring $np $buf NCCL_ALGO=Ring; c check-$np-$buf-tree $np $buf NCCL_ALGO=Tree
done; done
{ uptime; } >> $A/machine.txt 2>&1
el done
