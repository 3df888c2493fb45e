#!/bin/bash
# run187 (a 2-GPU host; 2026-11-27, twenty-first session). PART=1: issue 31 item 1 at 2 ranks, one
# per GPU: the four collectives 8 B-512 MiB against all four Socket tunings in one run (run186's
# plan), then run185's one-way latency (blocking / spinning / io_uring against tcpxr-bench latency).
# PART=2: d406002's library (stripe timing only under NCCL_TCPXR_STATS, the pool's counters), not yet
# checked on a GPU: 3 and 4 ranks on GPU 0 under MPS, host and GPU buffers, NCCL's choice, Ring and
# Tree, all_reduce 8 B-32 MiB -c 1 (run_nccl_tests.py --one-gpu --mps); and 4 ranks, GPU buffers,
# CUDA_DEVICE_MAX_CONNECTIONS=1 without MPS; then the pool's counters at 1 MiB, 2 ranks on GPUs 0-1.
cd "$(dirname "$0")/.."; A=/tmp/run187-$PART; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run187-$PART.tar.xz -C /tmp run187-$PART" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/new/commit.txt; uptime; lscpu | grep -E '^(Model name|Thread|Core|Socket|NUMA node\(s\)|Hypervisor)'; nvidia-smi topo -m; for n in /sys/devices/system/node/node*; do echo "$n $(cat $n/cpulist)"; done; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
if [ "$PART" = 1 ]; then
  timeout 420 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter,sendrecv --max 512M --iters 20 --warmup 5 --timeout 100 --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host --out $A/table2 > $A/table2.txt 2>&1
  el "table2 rc=$? $(grep -c ' ok, ' $A/table2.txt) ok, $(grep -c FAILED $A/table2.txt) failed"
  gcc -O2 -Wall -pthread -o /tmp/pp dist/uring/pp.c > $A/pp-build.txt 2>&1; el "pp build rc=$?"
  for s in 8 65536 524288; do
    n=20000; [ $s -gt 8 ] && n=5000; [ $s -gt 65536 ] && n=2000
    for m in block spin uring wait sqpoll; do timeout 30 /tmp/pp $m $s $n >> $A/pp.txt 2>&1; done
    timeout 30 dist/new/tcpxr-bench latency --size $s --iters $n >> $A/tcpxr-latency.txt 2>&1
  done
  el "$(awk '{printf "%s %s: %s us | ", $1, $2, $6}' $A/pp.txt)"
  el "$(grep -a 'one-way' $A/tcpxr-latency.txt | sed 's/^ *//' | tr '\n' '|')"
else
  for np in 3 4; do for algo in NCCL Ring Tree; do
    al=(); [ $algo != NCCL ] && al=(--algo $algo)
    timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --one-gpu --mps --ranks $np "${al[@]}" --ops all_reduce --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-$np-$algo > $A/check-$np-$algo.txt 2>&1
    el "check $np ranks $algo rc=$? $(grep -c ' ok, ' $A/check-$np-$algo.txt) ok, $(grep -c FAILED $A/check-$np-$algo.txt) failed"
  done; done
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --one-gpu --ranks 4 --ops all_reduce --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 --max 32M --iters 2 --warmup 1 --timeout 90 --out $A/check-4-cdmc1 > $A/check-4-cdmc1.txt 2>&1
  el "check 4 ranks CUDA_DEVICE_MAX_CONNECTIONS=1 rc=$? $(grep -c ' ok, ' $A/check-4-cdmc1.txt) ok, $(grep -c FAILED $A/check-4-cdmc1.txt) failed"
  p2(){ local name=$1; shift
    local xs=(); for kv in CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/new:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET NCCL_TCPXR_STATS=1 "$@"; do xs+=(-x "$kv"); done
    timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/all_reduce_perf -b 1M -e 1M -n 500 -w 20 -c 0 -g 1 > $A/$name.log 2>&1
    el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
  p2 stats-main; p2 stats-t12s12 NCCL_TCPXR_IO_THREADS=12 NCCL_TCPXR_IO_SPIN_THREADS=12
fi
el done
