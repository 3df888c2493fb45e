#!/bin/bash
# run147: issue 35. NCCL 2.25.1 built here from its tag for sm_90 (ncclTests/build_nccl.sh makes
# the CUDA 13 edits), nccl-tests built against it; tcpxr's v5 table through the v5-only shim and the
# full library (NCCL 2.25 takes v9): all_reduce and sendrecv -c 1, host buffers, 2 and 3 ranks.
cd "$(dirname "$0")/.."; A=/tmp/run147; source dist/common.sh
# dist/build_nccl.sh and dist/v5_shim.c were copies of ncclTests/build_nccl.sh and ncclTests/hazard/v5_shim.c
# (branch nccl35, e97a663), carried with the NCCL v2.25.1-1 source tree in dist/nccl-src/.
fin(){ tar czf $R/run147.tgz -C /tmp run147; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
N=/tmp/nccl-2.25.1
BUILD_TIMEOUT=400 timeout 420 bash dist/build_nccl.sh dist/nccl-src/v2.25.1-1 $N > $A/nccl-build.txt 2>&1; el "NCCL 2.25.1 build rc=$? $(ls $N/lib/libnccl.so* 2>/dev/null | head -1)"
tail -30 $A/nccl-build.txt > $A/nccl-build-tail.txt
[ -e $N/lib/libnccl.so ] || exit 1
rm -rf /tmp/nt225 && cp -r ncclTests/nccl-tests /tmp/nt225 && (cd /tmp/nt225 && make -j16 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=$N NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nt-build.txt 2>&1); el "nccl-tests vs 2.25.1 rc=$?"
cc -O2 -fPIC -shared -o /tmp/libnccl-net-tcpxr-v5.so dist/v5_shim.c -ldl; el "v5 shim rc=$?"
v(){ local name=$1 plugin=$2 np=$3 op=$4; shift 4
  timeout 200 mpirun --allow-run-as-root --bind-to none -np $np -x LD_LIBRARY_PATH=$N/lib:$PWD/dist/new:$LD_LIBRARY_PATH -x NCCL_NET_PLUGIN=$plugin -x TCPXR_SHIM_TARGET=$PWD/dist/new/libnccl-net-tcpxr.so -x NCCL_NET=tcpxr -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x NCCL_NVLS_ENABLE=0 -x NCCL_TESTS_DEVICE=0 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET,TUNING "$@" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt225/build/${op}_perf -b 8 -e ${MAXB:-512M} -f 4 -n ${ITERS:-3} -w 1 -c 1 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(grep -h 'Out of bounds' $A/$name.log | awk '{print $7,$8}') | $(grep -m1 -o 'NCCL version [0-9.]*' $A/$name.log) | $(grep -m1 -o 'Loaded net plugin [^ ]* *([^)]*)\|Using network [A-Za-z]*' $A/$name.log | head -2 | tr '\n' ' ') | tuner: $(grep -m1 -o 'Loaded tuner plugin [^ ]*\|tuner[^,]*v[0-9]' $A/$name.log | head -1)"; }
mps_on
for np in 2 3; do for op in all_reduce sendrecv; do
  v v5-$np-$op /tmp/libnccl-net-tcpxr-v5.so $np $op
  v v9-$np-$op tcpxr $np $op
done; done
v v9-3-gpu-all_reduce tcpxr 3 all_reduce -x NCCL_NET_GDR_LEVEL=SYS -x NCCL_TCPXR_GPU_BUFFERS=1
# the same sweep through v5 and v9 for speed, alternated (issue 35 item 3)
for i in 1 2; do ITERS=20 MAXB=256M v perf$i-v5 /tmp/libnccl-net-tcpxr-v5.so 2 all_reduce; ITERS=20 MAXB=256M v perf$i-v9 tcpxr 2 all_reduce; done
mps_off
