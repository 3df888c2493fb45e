#!/bin/bash
# run195 (a 2-GPU host; prepared 2026-11-27 for the next session): the 8 B all_reduce gap at one rank
# per GPU without run 189's flaw (NCCL's TUNING log, a line per operation, slowed every variant).
# Run 188: steady state (-n 1000) 23.3-25.4 us over tcpxr against the better Socket tuning's
# 20.7-22.5; sendrecv level. Variants: tcpxr at its defaults (dist/head = 8c46bbd's library),
# without its tuner (NCCL_TCPXR_TUNER=0: NCCL's own choice and 4 channels), without its I/O pool
# (NCCL_TCPXR_IO_THREADS=0), with a pool that does not spin (NCCL_TCPXR_IO_SPIN_THREADS=0), with NCCL_TCPXR_STATS=1 (counts per comm); Socket default, 2x2 and
# default on 8 channels. all_reduce 8 B -n 1000 -w 50 -N 3 -c 0, then sendrecv 8 B the same,
# alternated three times; NCCL_DEBUG=WARN except the stats variant. Then the checks owed since
# 03fcac7: all_reduce and sendrecv, 3 and 4 ranks on GPU 0 under MPS, host and GPU buffers, NCCL's
# choice, Ring, Tree; 4 ranks, GPU buffers, CUDA_DEVICE_MAX_CONNECTIONS=1; 8 B-32 MiB -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run195; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run195.tar.xz -C /tmp run195" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/head/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
one(){ local name=$1 op=$2 net=$3; shift 3
  local env=(CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $net in tcpxr) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/head:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0);;
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 8 -e 8 -n 1000 -w 50 -N 3 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(grep -a -E '^ +8 +[0-9]+ +float' $A/$name.log | awk '{printf "%s ", $6}')"; }
for i in 1 2 3; do for op in all_reduce sendrecv; do
  one r$i-$op-tcpxr $op tcpxr; one r$i-$op-tcpxr-notuner $op tcpxr NCCL_TCPXR_TUNER=0
  one r$i-$op-tcpxr-nopool $op tcpxr NCCL_TCPXR_IO_THREADS=0; one r$i-$op-tcpxr-nospin $op tcpxr NCCL_TCPXR_IO_SPIN_THREADS=0
  one r$i-$op-socket $op socket; one r$i-$op-socket2x2 $op socket NCCL_SOCKET_NTHREADS=2 NCCL_NSOCKS_PERTHREAD=2
  one r$i-$op-socket-8ch $op socket NCCL_MIN_NCHANNELS=8
done; done
one stats-all_reduce all_reduce tcpxr NCCL_TCPXR_STATS=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
# The checks owed since 03fcac7 (the idle chunk): GPU work under MPS and on one hardware queue, on 8c46bbd.
export CUDA_VISIBLE_DEVICES=0
for np in 3 4; do for algo in NCCL Ring Tree; do
  al=(); [ $algo != NCCL ] && al=(--algo $algo)
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/head --one-gpu --mps --ranks $np "${al[@]}" --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-$np-$algo > $A/check-$np-$algo.txt 2>&1
  el "check $np ranks $algo rc=$? $(grep -c ' ok, ' $A/check-$np-$algo.txt) ok, $(grep -c FAILED $A/check-$np-$algo.txt) failed"
done; done
timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/head --one-gpu --ranks 4 --ops all_reduce,sendrecv --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 --max 32M --iters 2 --warmup 1 --timeout 90 --out $A/check-4-cdmc1 > $A/check-4-cdmc1.txt 2>&1
el "check 4 ranks CUDA_DEVICE_MAX_CONNECTIONS=1 rc=$? $(grep -c ' ok, ' $A/check-4-cdmc1.txt) ok, $(grep -c FAILED $A/check-4-cdmc1.txt) failed"
el done
