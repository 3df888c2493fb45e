#!/bin/bash
# run152: (a) the pool rules of 5b1a1e4 at 4 and 8 ranks on GPU 0 under MPS (host buffers, NCCL
# 2.28.3): the pool block each rank logs, and the times to set beside run151's P (old defaults) and
# F (few-cores values). (b) issue 35: NCCL 2.12.12 (loads only ncclNetPlugin_v5) and 2.19.4 (v7..v5)
# built here from their tags for sm_90 (ncclTests/build_nccl.sh), nccl-tests built against each;
# all_reduce and sendrecv -c 1 8 B-512 MiB at 2 and 3 ranks, host buffers; GPU buffers on 2.19 (v7,
# NCCL's device unpack).
cd "$(dirname "$0")/.."; A=/tmp/run152; source dist/common.sh
fin(){ tar czf $R/run152.tgz -C /tmp run152; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
build_tests
mps_on
export MINB=8 MAXB=256M STEP=4 ITERS=10
for np in 4 8; do for op in all_reduce sendrecv; do nt rules-$np-$op dist $np $op host - NCCL_TCPXR_STATS=0; done; done
grep -h -A5 "I/O pool, fixed" $A/rules-4-all_reduce.log | head -6 > $A/rules-4-pool.txt
grep -h -A5 "I/O pool, fixed" $A/rules-8-all_reduce.log | head -6 > $A/rules-8-pool.txt
mps_off
# (b) builds, in parallel, 8 jobs each
for t in 2.12.12 2.19.4; do (JOBS=8 BUILD_TIMEOUT=330 timeout 340 bash dist/build_nccl.sh dist/nccl-src/v$t-1 /tmp/nccl-$t > $A/nccl-$t-build.txt 2>&1; echo "rc=$?" >> $A/nccl-$t-build.txt) & done; wait
for t in 2.12.12 2.19.4; do el "NCCL $t build $(tail -1 $A/nccl-$t-build.txt) $(ls /tmp/nccl-$t/lib/libnccl.so 2>/dev/null)"; done
for t in 2.12.12 2.19.4; do (rm -rf /tmp/nt-$t && cp -r ncclTests/nccl-tests /tmp/nt-$t && cd /tmp/nt-$t && make -j8 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/tmp/nccl-$t NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nt-$t-build.txt 2>&1; echo "rc=$?" >> $A/nt-$t-build.txt) & done; wait
for t in 2.12.12 2.19.4; do el "nccl-tests vs $t $(tail -1 $A/nt-$t-build.txt)"; done
v(){ local name=$1 t=$2 np=$3 op=$4; shift 4
  timeout 120 mpirun --allow-run-as-root --bind-to none -np $np -x LD_LIBRARY_PATH=/tmp/nccl-$t/lib:$PWD/dist:$LD_LIBRARY_PATH -x NCCL_NET_PLUGIN=tcpxr -x NCCL_NET=tcpxr -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_TESTS_DEVICE=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET,TUNING "$@" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-$t/build/${op}_perf -b 8 -e ${MAXB2:-512M} -f 4 -n 3 -w 1 -c 1 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(grep -h 'Out of bounds' $A/$name.log | awk '{print $7,$8}') | $(grep -m1 -o 'NCCL version [0-9.]*' $A/$name.log) | $(grep -m1 -o 'Loaded net plugin [^ ]* *([^)]*)\|Using network [A-Za-z]*\|NET/Plugin[^,]*' $A/$name.log | head -3 | tr '\n' ' ') | tuner: $(grep -m1 -o 'Loaded tuner plugin [^ ]*\|TUNER/Plugin[^,]*' $A/$name.log | head -1) | $(grep -m1 -o 'transport [a-z]*' $A/$name.log) $(grep -m1 -o 'NCCL called ncclNetPlugin_v[0-9]*' $A/$name.log)"; }
mps_on
for t in 2.12.12 2.19.4; do for np in 2 3; do for op in all_reduce sendrecv; do v $t-$np-$op $t $np $op; done; done; done
for np in 2 3; do v 2.19.4-$np-gpu-all_reduce 2.19.4 $np all_reduce -x NCCL_NET_GDR_LEVEL=SYS -x NCCL_TCPXR_GPU_BUFFERS=1; v 2.19.4-$np-gpu-sendrecv 2.19.4 $np sendrecv -x NCCL_NET_GDR_LEVEL=SYS -x NCCL_TCPXR_GPU_BUFFERS=1; done
mps_off
