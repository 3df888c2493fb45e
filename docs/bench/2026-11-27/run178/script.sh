#!/bin/bash
# run178 (one H200, 16 cores: the one-GPU setup), 6afb4c4 (dist/new: the hand-off queue, and the
# spinner rule, which gives 1 spinner here: 6 I/O threads on 8 cores a rank) against 5177c73 (dist:
# 1 spinner on epoll), the shape run 176c could not take (there each rank's affinity made it take
# all 16 cores). Two ranks on GPU 0 as two NCCL hosts under MPS, host buffers, all_reduce and
# sendrecv 8 B-1 GiB, 10 iterations, alternated twice; then the new build's per-chunk times over
# 500 all_reduces of 1 MiB (NCCL_TCPXR_STATS=1).
cd "$(dirname "$0")/.."; A=/tmp/run178; source dist/common.sh
trap "tar cJf $R/run178.tar.xz -C /tmp run178" EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt dist/new/commit.txt; uptime; } > $A/machine.txt 2>&1
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
export CUDA_VISIBLE_DEVICES=0
mps_on
po(){ local name=$1 lib=$2 op=$3; shift 3
  local xs=(); for kv in NCCL_TESTS_DEVICE=0 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET "$@"; do xs+=(-x "$kv"); done
  timeout 150 mpirun --allow-run-as-root --bind-to none -np 2 -x CUDA_VISIBLE_DEVICES=0 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b ${MINB:-8} -e ${MAXB:-1G} -f 4 -n ${ITERS:-10} -w 3 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log) | $(grep -a -m1 -o 'SPIN_THREADS = [^(]*([^:]*' $A/$name.log)"; }
for i in 1 2; do for op in all_reduce sendrecv; do po r$i-$op-old dist $op; po r$i-$op-new dist/new $op; done; done
MINB=1M MAXB=1M ITERS=500 po stats-1m dist/new all_reduce NCCL_TCPXR_STATS=1
mps_off
el done
