#!/bin/bash
# run157 (4-GPU host). Correctness after fcb87ac (connect answered before accept) and the pool rule,
# DESIGN.md's matrix, each lane N ranks on one GPU under MPS, lanes side by side (correctness only,
# no timing): GPU0 4 ranks, GPU1 3 ranks: all_reduce (NCCL's choice, Ring, Tree), all_gather,
# reduce_scatter, sendrecv, host and GPU buffers, -c 1, 8 B-32 MiB. Issue 35: NCCL 2.28.3 (system)
# all_reduce and sendrecv -c 1 8 B-512 MiB at 2 and 3 ranks, host and GPU buffers (GPU3); NCCL
# 2.12.12 (v5) and 2.30.7 (v12) built here from their tags, nccl-tests against each, the same checks
# (2.12 host buffers; 2.30.7 host and GPU buffers) on GPU2.
cd "$(dirname "$0")/.."; A=${OUT:-/tmp}/run157; mkdir -p $A; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
VS="2.12.12 2.30.7"; declare -A J=([2.12.12]=24 [2.30.7]=36)
for t in $VS; do (JOBS=${J[$t]} BUILD_TIMEOUT=380 timeout 390 bash dist/build_nccl.sh dist/nccl-src/v$t-1 /tmp/nccl-$t > $A/nccl-$t-build.txt 2>&1; echo "rc=$?" >> $A/nccl-$t-build.txt) & done
(cd ncclTests/nccl-tests && make -j32 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/usr NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nccl-tests-build.txt 2>&1); el "nccl-tests (2.28.3) build rc=$?"
mps_on
DL=${DEADLINE:-545}
ok(){ [ $(( $(date +%s)-T0 )) -lt $DL ] || { el "$1: skipped (deadline)"; return 1; }; }
matrix(){ local g=$1 np=$2
  for buf in host gpu; do
    for algo in - Ring Tree; do ok m$np-$buf-ar-$algo && nt m$np-$buf-all_reduce-$algo dist $np all_reduce $buf $algo CUDA_VISIBLE_DEVICES=$g; done
    for op in all_gather reduce_scatter sendrecv; do ok m$np-$buf-$op && nt m$np-$buf-$op dist $np $op $buf - CUDA_VISIBLE_DEVICES=$g; done
  done; }
NT_TIMEOUT=200 matrix 0 4 &
NT_TIMEOUT=200 matrix 1 3 &
( for np in 2 3; do for op in all_reduce sendrecv; do for buf in host gpu; do ok v2.28.3-$np-$buf-$op && MAXB=512M NT_TIMEOUT=200 nt v2.28.3-$np-$buf-$op dist $np $op $buf - CUDA_VISIBLE_DEVICES=3; done; done; done ) &
v(){ local name=$1 t=$2 np=$3 op=$4; shift 4; ok $name || return
  timeout 200 mpirun --allow-run-as-root --bind-to none -np $np -x CUDA_VISIBLE_DEVICES=2 -x LD_LIBRARY_PATH=/tmp/nccl-$t/lib:$PWD/dist:$LD_LIBRARY_PATH -x NCCL_NET_PLUGIN=tcpxr -x NCCL_NET=tcpxr -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_TESTS_DEVICE=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET "$@" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-$t/build/${op}_perf -b 8 -e 512M -f 4 -n 3 -w 1 -c 1 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(grep -a -h 'Out of bounds' $A/$name.log | awk '{print $7,$8}') | $(grep -a -m1 -o 'NCCL version [0-9.]*' $A/$name.log) | $(grep -a -m1 -o 'NCCL called ncclNetPlugin_v[0-9]*' $A/$name.log) | $(grep -a -m1 -o 'GPU buffers [a-z]*' $A/$name.log) | GDRDMA $(grep -a -c 'GDRDMA' $A/$name.log) | $(grep -a -m1 -o 'Loaded net plugin [^ ]* *([^)]*)\|Using network [A-Za-z]*' $A/$name.log) | $(grep -a -m1 -o 'tuner (ncclTunerPlugin_v[0-9]*)' $A/$name.log)"; }
lane_c(){ local t=$1; shift
  while [ ! -e $A/nccl-$t-build.txt ] || ! grep -q '^rc=' $A/nccl-$t-build.txt; do sleep 5; done
  el "NCCL $t build $(tail -1 $A/nccl-$t-build.txt) $(ls /tmp/nccl-$t/lib/libnccl.so 2>/dev/null)"
  (rm -rf /tmp/nt-$t && cp -r ncclTests/nccl-tests /tmp/nt-$t && cd /tmp/nt-$t && rm -rf build && make -j16 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/tmp/nccl-$t NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nt-$t-build.txt 2>&1; echo "rc=$?" >> $A/nt-$t-build.txt)
  el "nccl-tests vs $t $(tail -1 $A/nt-$t-build.txt)"
  for np in 2 3; do for op in all_reduce sendrecv; do v $t-$np-host-$op $t $np $op
    [ $t = 2.30.7 ] && v $t-$np-gpu-$op $t $np $op -x NCCL_NET_GDR_LEVEL=SYS -x NCCL_TCPXR_GPU_BUFFERS=1; done; done; }
lane_c 2.12.12 &
lane_c 2.30.7 &
wait
mps_off
el "done"
