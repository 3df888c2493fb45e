#!/bin/bash
# run154 (4-GPU host, 64 cores), issues 35 and 32.
# 35: NCCL 2.12.12 (net v5 only), 2.23.4 (v8..v5; tuner v3), 2.25.1 (v9..v5; tuner v4) built here from
#   their tags for sm_90 (ncclTests/build_nccl.sh, in parallel), nccl-tests built against each from a
#   clean tree. One rank per GPU, each its own NCCL host: all_reduce and sendrecv -c 1 8 B-512 MiB
#   at 2 and 3 ranks, host buffers; GPU buffers on 2.23. 2.25.1: all_reduce 8 B-256 MiB, 20 iters,
#   2 ranks, through tcpxr's v5 table (v5-only shim, tcpxr's tuner through NCCL_TUNER_PLUGIN) and
#   through v9, alternated twice.
# 32: NCCL 2.30.7 built here (for run155, on the same machine); then, in run155, tests/rma.rs's GPU tests (default connections; CUDA_DEVICE_MAX_CONNECTIONS=1;
#   under MPS), then ncclPutSignal/ncclWaitSignal (ncclTests/gin/put_signal.c) and alltoall_perf -R 2 -D 3
#   at 2 ranks, one per GPU, through tcpxr's RMA (NCCL_TCPXR_RMA=1).
cd "$(dirname "$0")/.."; A=/tmp/run154; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
fin(){ tar czf $R/run154.tgz -C /tmp run154; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
VS="2.12.12 2.23.4 2.25.1 2.30.7"
declare -A J=([2.12.12]=10 [2.23.4]=14 [2.25.1]=14 [2.30.7]=26)
for t in $VS; do (JOBS=${J[$t]} BUILD_TIMEOUT=290 timeout 300 bash dist/build_nccl.sh dist/nccl-src/v$t-1 /tmp/nccl-$t > $A/nccl-$t-build.txt 2>&1; echo "rc=$?" >> $A/nccl-$t-build.txt) & done; wait
for t in $VS; do el "NCCL $t build $(tail -1 $A/nccl-$t-build.txt) $(ls /tmp/nccl-$t/lib/libnccl.so 2>/dev/null)"; done
for t in $VS; do (rm -rf /tmp/nt-$t && cp -r ncclTests/nccl-tests /tmp/nt-$t && cd /tmp/nt-$t && rm -rf build && make -j16 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/tmp/nccl-$t NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nt-$t-build.txt 2>&1; echo "rc=$?" >> $A/nt-$t-build.txt) & done; wait
for t in $VS; do el "nccl-tests vs $t $(tail -1 $A/nt-$t-build.txt)"; done
mkdir -p /tmp/shim && cc -O2 -fPIC -shared -o /tmp/shim/libnccl-net-tcpxr-v5.so dist/v5_shim.c -ldl; el "v5 shim rc=$?"
gcc -O2 -o /tmp/put_signal ncclTests/gin/put_signal.c -I/tmp/nccl-2.30.7/include -I/usr/local/cuda/include -L/tmp/nccl-2.30.7/lib -L/usr/local/cuda/lib64 -lnccl -lcudart; el "put_signal build rc=$?"
LIB=$PWD/dist/libnccl-net-tcpxr.so
v(){ local name=$1 t=$2 np=$3 op=$4 plugin=$5; shift 5
  timeout 150 mpirun --allow-run-as-root --bind-to none -np $np -x CUDA_VISIBLE_DEVICES -x LD_LIBRARY_PATH=/tmp/nccl-$t/lib:$PWD/dist:/tmp/shim:$LD_LIBRARY_PATH -x NCCL_NET_PLUGIN=$plugin -x TCPXR_SHIM_TARGET=$LIB -x NCCL_NET=tcpxr -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET,TUNING "$@" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-$t/build/${op}_perf -b 8 -e ${MAXB:-512M} -f ${STEP:-4} -n ${ITERS:-3} -w 1 -c 1 -g 1 ${XARGS:-} > $A/$name.log 2>&1
  el "$name rc=$? $(grep -a -h 'Out of bounds' $A/$name.log | awk '{print $7,$8}') | $(grep -a -m1 -o 'NCCL version [0-9.]*' $A/$name.log) | $(grep -a -m1 -o 'NCCL called ncclNetPlugin_v[0-9]*' $A/$name.log) | $(grep -a -m1 -o 'GPU buffers [a-z]*' $A/$name.log) | GDRDMA $(grep -a -c 'GDRDMA' $A/$name.log) | $(grep -a -m1 -o 'Loaded net plugin [^ ]* *([^)]*)\|Using network [A-Za-z]*' $A/$name.log) | $(grep -a -m1 -o 'Tuner: plugin load[^,]*\|TUNER/Plugin: [^,]*\|Loaded tuner plugin[^,]*' $A/$name.log)"; }
for t in 2.12.12 2.23.4; do for np in 2 3; do for op in all_reduce sendrecv; do v $t-$np-$op $t $np $op tcpxr; done; done; done
for np in 2 3; do for op in all_reduce sendrecv; do v 2.23.4-$np-gpu-$op 2.23.4 $np $op tcpxr -x NCCL_NET_GDR_LEVEL=SYS -x NCCL_TCPXR_GPU_BUFFERS=1; done; done
for np in 2 3; do v 2.25.1-$np-v5-sendrecv 2.25.1 $np sendrecv tcpxr-v5 -x NCCL_TUNER_PLUGIN=$LIB; done
for i in 1 2; do ITERS=20 MAXB=256M STEP=2 v perf$i-v5 2.25.1 2 all_reduce tcpxr-v5 -x NCCL_TUNER_PLUGIN=$LIB; ITERS=20 MAXB=256M STEP=2 v perf$i-v9 2.25.1 2 all_reduce tcpxr; done
