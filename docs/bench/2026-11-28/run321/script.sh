#!/bin/bash
# run321 (a 4-GPU host, 4 ranks one per GPU): the 1-4 MiB band trails Socket's best at 4 ranks
# (all_reduce 0.77-0.99 in run 320) with 1, 2 or 4 channels and every chunk size tried (runs 313-314,
# 319-320). Socket 1x1 moves each connection over one socket; tcpxr over NCCL_TCPXR_STRIPES (4),
# and one stripe came closer in run 169 (before the pool's hand-off queue). dist/c46 (main) at 1, 2
# and 4 (default) stripes, and in Socket's NCCL-side shape (lo reported at 10 Gb/s, NCCL's channels
# bounded to 2 as NCCL builds Socket's), against Socket 1x1 and 2x2: all_reduce and all_gather 512
# KiB-4 MiB, 100 iterations, --cycles 3, --repeat 3, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run321; source dist/common.sh
start_run; echo "c46: $(cat dist/c46/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c46 --mpirun --ranks 4 --ops all_reduce,all_gather --min 512K --max 4M --iters 100 --warmup 10 --timeout 60 --repeat 3 --cycles 3 \
  --configs tcpxr-host,tcpxr-host+s1,tcpxr-host+s2,tcpxr-host+sh,socket-1x1,socket-2x2 \
  --variant s1:NCCL_TCPXR_STRIPES=1 --variant s2:NCCL_TCPXR_STRIPES=2 --variant sh:NCCL_TCPXR_SPEED_MBPS=10000 --variant sh:NCCL_MIN_NCHANNELS=2 --variant sh:NCCL_MAX_NCHANNELS=2 --out $A/r4 > $A/r4.txt 2>&1
el "r4 rc=$? $(grep -c ' ok, ' $A/r4.txt) ok, $(grep -c FAILED $A/r4.txt) failed"
rm -rf $A/r4/r*/logs
# 2. The 4-rank 8 B-1 KiB all_reduce in Socket's NCCL-side shape: tcpxr reports lo at 400 Gb/s and
# has NCCL build 8 channels, Socket 10 Gb/s and 2. c46 as is, and with NCCL_TCPXR_SPEED_MBPS=10000
# NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2, against Socket; -n 200 -N 5, two passes alternated.
run4(){ local name=$1 v=$2; shift 2
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 90 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/all_reduce_perf -b 8 -e 1K -f 4 -n 200 -w 20 -N 5 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log | cut -c1-300)"; }
for pass in 1 2; do
  run4 s-c46-$pass c46
  run4 s-shape-$pass c46 NCCL_TCPXR_SPEED_MBPS=10000 NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2
  run4 s-socket-$pass socket
done
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
