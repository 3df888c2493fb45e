#!/bin/bash
# run192 (a 2-GPU host: 3 and 4 ranks share the GPUs, rank r on GPU r mod 2, correctness only; 2026-11-27, twenty-first session): the idle chunk as it lands (dist/split2):
# a host message striped while its connection is nearly idle is cut into one piece per stripe, none
# below NCCL_TCPXR_IDLE_CHUNK_BYTES, and auto sets that (64 KiB) only on connections NCCL names
# point-to-point (run 191: cut finer, sendrecv 256 KiB-1 MiB 8-23 % faster, all_gather and
# reduce_scatter of 2-4 MiB 5-15 % slower). dist/new = d406002. 1. tcpxr-bench latency (its
# connections carry no hints: the variable set to 64K), 64 KiB-2 MiB, twice. 2. sendrecv 128 KiB-64 MiB
# at 2 ranks (GPUs 0-1), new against split2, alternated three times. 3. split2's
# correctness where it acts: sendrecv at 3 and 4 ranks and alltoall at 4, host and GPU buffers, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run192; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0,1; cat dist/new/commit.txt dist/split2/commit.txt >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 48
for i in 1 2; do for lib in new split2; do for s in 65536 262144 524288 2097152; do
  n=3000; [ $s -gt 65536 ] && n=1000
  NCCL_TCPXR_IDLE_CHUNK_BYTES=65536 timeout 60 dist/$lib/tcpxr-bench latency --size $s --iters $n > $A/lat-r$i-$lib-s$s.txt 2>&1
  el "latency r$i $lib size $s: $(grep -a 'one-way' $A/lat-r$i-$lib-s$s.txt | sed -E 's/.*(tcpxr|plain TCP): one-way.*median ([0-9.]+) us, p99 ([0-9.]+).*/\1 \2 (p99 \3)/' | tr '\n' ' ')"
done; done; done
one(){ local name=$1 np=$2 op=$3 lib=$4 check=$5; shift 5
  local env=(NCCL_TESTS_DEVICE=0 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/$lib:$LD_LIBRARY_PATH)
  local args=(-b 128K -e 64M -f 2 -n 20 -w 5 -c 0)
  [ $check = 1 ] && args=(-b 8 -e 32M -f 4 -n 3 -w 1 -c 1)
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'export CUDA_VISIBLE_DEVICES=$((OMPI_COMM_WORLD_RANK % 2)); NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf "${args[@]}" -g 1 > $A/$name.log 2>&1
  local rc=$?
  if [ $check = 1 ]; then el "$name rc=$rc #wrong: $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s/%s ", $9, $13}' $A/$name.log) | oob: $(grep -a -h 'Out of bounds' $A/$name.log | awk '{print $7,$8}') | $(grep -a -m1 -o 'IDLE_CHUNK_BYTES (point-to-point) = [^ ]*' $A/$name.log)"
  else el "$name rc=$rc $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; fi; }
for i in 1 2 3; do for np in 2; do for lib in new split2; do one r$i-$np-sendrecv-$lib $np sendrecv $lib 0 NCCL_TCPXR_GPU_BUFFERS=0; done; done; done
for op in all_reduce all_gather; do for lib in new split2; do one r1-2-$op-$lib 2 $op $lib 0 NCCL_TCPXR_GPU_BUFFERS=0; done; done
for buf in host gpu; do
  g=(NCCL_TCPXR_GPU_BUFFERS=0); [ $buf = gpu ] && g=(NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1)
  one check-3-sendrecv-$buf 3 sendrecv split2 1 "${g[@]}"; one check-4-sendrecv-$buf 4 sendrecv split2 1 "${g[@]}"
  one check-4-alltoall-$buf 4 alltoall split2 1 "${g[@]}"
done
el done
