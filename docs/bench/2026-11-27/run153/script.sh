#!/bin/bash
# run153: issue 35. NCCL 2.12.12 (loads only ncclNetPlugin_v5), 2.19.4 (v7..v5) and 2.23.4 (v8..v5)
# built here from their tags for sm_90 (ncclTests/build_nccl.sh, 5 jobs each, in parallel), nccl-tests
# built against each from a clean tree; all_reduce and sendrecv -c 1 8 B-512 MiB at 2 and 3 ranks on
# GPU 0 under MPS, host buffers; GPU buffers (NCCL's device unpack) on 2.19 and 2.23. The built
# libraries come back (stripped, xz) for later runs.
cd "$(dirname "$0")/.."; A=/tmp/run153; source dist/common.sh
fin(){ tar czf $R/run153.tgz -C /tmp run153; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
VS="2.12.12 2.19.4 2.23.4"
for t in $VS; do (JOBS=5 BUILD_TIMEOUT=380 timeout 390 bash dist/build_nccl.sh dist/nccl-src/v$t-1 /tmp/nccl-$t > $A/nccl-$t-build.txt 2>&1; echo "rc=$?" >> $A/nccl-$t-build.txt) & done; wait
for t in $VS; do el "NCCL $t build $(tail -1 $A/nccl-$t-build.txt) $(ls -la /tmp/nccl-$t/lib/libnccl.so.* 2>/dev/null | awk '{print $5, $9}' | head -1)"; done
for t in $VS; do (rm -rf /tmp/nt-$t && cp -r ncclTests/nccl-tests /tmp/nt-$t && cd /tmp/nt-$t && rm -rf build && make -j5 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/tmp/nccl-$t NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nt-$t-build.txt 2>&1; echo "rc=$?" >> $A/nt-$t-build.txt) & done; wait
for t in $VS; do el "nccl-tests vs $t $(tail -1 $A/nt-$t-build.txt) $(grep -m1 -o 'nccl.h.*' $A/nt-$t-build.txt | head -1)"; done
v(){ local name=$1 t=$2 np=$3 op=$4; shift 4
  timeout 120 mpirun --allow-run-as-root --bind-to none -np $np -x LD_LIBRARY_PATH=/tmp/nccl-$t/lib:$PWD/dist:$LD_LIBRARY_PATH -x NCCL_NET_PLUGIN=tcpxr -x NCCL_NET=tcpxr -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_TESTS_DEVICE=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET,TUNING "$@" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-$t/build/${op}_perf -b 8 -e 512M -f 4 -n 3 -w 1 -c 1 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(grep -a -h 'Out of bounds' $A/$name.log | awk '{print $7,$8}') | $(grep -a -m1 -o 'NCCL version [0-9.]*' $A/$name.log) | $(grep -a -m1 -o 'NCCL called ncclNetPlugin_v[0-9]*' $A/$name.log) | $(grep -a -m1 -o 'GPU buffers [a-z]*' $A/$name.log) | GDRDMA lines $(grep -a -c 'GDRDMA' $A/$name.log) | $(grep -a -m1 -o 'Loaded net plugin [^ ]* *([^)]*)\|Using network [A-Za-z]*' $A/$name.log) | $(grep -a -m1 -o 'Tuner: plugin load[^,]*\|Loaded tuner plugin [^ ]*\|TUNER/Plugin[^,]*' $A/$name.log)"; }
mps_on
for t in $VS; do for np in 2 3; do for op in all_reduce sendrecv; do v $t-$np-$op $t $np $op; done; done; done
for t in 2.19.4 2.23.4; do for np in 2 3; do for op in all_reduce sendrecv; do v $t-$np-gpu-$op $t $np $op -x NCCL_NET_GDR_LEVEL=SYS -x NCCL_TCPXR_GPU_BUFFERS=1; done; done; done
mps_off
mkdir -p /tmp/libs && for t in $VS; do cp /tmp/nccl-$t/lib/libnccl.so.*.*.* /tmp/libs/ 2>/dev/null; done; strip --strip-unneeded /tmp/libs/*; ls -la /tmp/libs > $A/libs.txt
(cd /tmp && tar cf - libs | xz -T16 -6 > /tmp/libs.tar.xz); ls -la /tmp/libs.tar.xz >> $A/libs.txt; split -b 15M /tmp/libs.tar.xz $R/libs.tar.xz.part-; el "libs: $(ls $R | tr '\n' ' ')"
