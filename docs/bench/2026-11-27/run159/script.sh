#!/bin/bash
# run159 (4-GPU host). Issue 32: NCCL 2.30.7 built here; ncclTests/gin/put_signal.c (window now
#   cleared before a barrier) at 2 and 4 ranks, one per GPU, no MPS, tcpxr logging each RMA window's
#   registration, NCCL's REG/ALLOC log too; alltoall_perf -R 2 -D 3 at 4 ranks again.
# Issue 31 diagnostics, one rank per GPU, -c 0, 10 iterations: (a) 4 ranks, 8 B-64 KiB, all_reduce
#   and sendrecv, tcpxr as is (it sets NCCL_MIN_NCHANNELS=8) against NCCL_MIN_NCHANNELS=4 and
#   against Socket default, alternated twice; (b) 2 ranks, sendrecv 1-512 MiB with GPU buffers:
#   as is, P2P chunk 128 KiB and 2 MiB, 4 channels per net peer, NCCL_TCPXR_STATS=1; host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run159; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
fin(){ tar cJf $R/run159.tar.xz -C /tmp run159; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
(JOBS=56 timeout 300 bash dist/build_nccl.sh dist/nccl-src/v2.30.7-1 /tmp/nccl-2.30.7 > $A/nccl-build.txt 2>&1; echo "rc=$?" >> $A/nccl-build.txt) &
(cd ncclTests/nccl-tests && make -j8 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/usr NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nccl-tests-build.txt 2>&1); el "nccl-tests (2.28.3) build rc=$?"
wait; el "NCCL 2.30.7 build $(tail -1 $A/nccl-build.txt)"
(rm -rf /tmp/nt-2.30.7 && cp -r ncclTests/nccl-tests /tmp/nt-2.30.7 && cd /tmp/nt-2.30.7 && rm -rf build && make -j32 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/tmp/nccl-2.30.7 NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nt-2.30.7-build.txt 2>&1) &
NTB=$!
gcc -O2 -o /tmp/put_signal ncclTests/gin/put_signal.c -I/tmp/nccl-2.30.7/include -I/usr/local/cuda/include -L/tmp/nccl-2.30.7/lib -L/usr/local/cuda/lib64 -lnccl -lcudart; el "put_signal build rc=$?"
LIB=$PWD/dist/libnccl-net-tcpxr.so
GENV=(NCCL_NET_PLUGIN=$LIB NCCL_RMA_PLUGIN=$LIB NCCL_TCPXR_RMA=1 NCCL_GIN_TYPE=2 NCCL_SOCKET_IFNAME=lo NCCL_TCPXR_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV,REG,ALLOC LD_LIBRARY_PATH=/tmp/nccl-2.30.7/lib:$LD_LIBRARY_PATH)
ps(){ local np=$1; rm -f /tmp/ps.id; local pids=()
  for r in $(seq 0 $((np-1))); do env "${GENV[@]}" CUDA_VISIBLE_DEVICES=$r NCCL_HOSTID=g$r timeout 60 stdbuf -oL /tmp/put_signal $r $np /tmp/ps.id $((256<<20)) 5 > $A/put_signal-$np.$r.log 2>&1 & pids+=($!); done; wait ${pids[@]}
  el "put_signal $np ranks: $(grep -a -h '^rank .*PASS\|FAIL' $A/put_signal-$np.*.log | cut -c1-200 | tr '\n' ' ') | $(grep -a -h 'WARN' $A/put_signal-$np.*.log | head -3 | cut -c1-300)"; }
ps 2; ps 4
tar cJf $R/nccl-2.30.7-lib.tar.xz -C /tmp/nccl-2.30.7 lib/libnccl.so.2.30.7 include 2>/dev/null; ls -la $R/nccl-2.30.7-lib.tar.xz >> $A/steps.txt
wait $NTB; el "nccl-tests vs 2.30.7 rc=$?"
XS=(); for kv in "${GENV[@]}"; do XS+=(-x "$kv"); done
timeout 100 mpirun --allow-run-as-root --bind-to none -np 4 -x CUDA_VISIBLE_DEVICES "${XS[@]}" sh -c 'NCCL_HOSTID="g${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.30.7/build/alltoall_perf -b 8 -e 256M -f 4 -R 2 -D 3 -c 1 -n 5 -w 2 -g 1 > $A/alltoall_gin-4.log 2>&1
el "alltoall GIN 4 ranks rc=$? $(grep -a -h 'Out of bounds' $A/alltoall_gin-4.log | awk '{print $7,$8}') | $(grep -a -c 'RMA window' $A/alltoall_gin-4.log) window lines"
# pg NAME NP OP host|gpu|socket MIN MAX [K=V...]: one rank per GPU, -c 0, 10 iterations
pg(){ local name=$1 np=$2 op=$3 buf=$4 lo=$5 hi=$6; shift 6
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET CUDA_VISIBLE_DEVICES=0,1,2,3)
  case $buf in
    gpu) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist:$LD_LIBRARY_PATH NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1);;
    host) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0);;
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
  esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b $lo -e $hi -f 2 -n 10 -w 3 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
for i in 1 2; do for op in all_reduce sendrecv; do
  pg a$i-tcpxr-$op 4 $op host 8 64K; pg a$i-ch4-$op 4 $op host 8 64K NCCL_MIN_NCHANNELS=4; pg a$i-socket-$op 4 $op socket 8 64K; done; done
pg b-host 2 sendrecv host 1M 512M; pg b-gpu 2 sendrecv gpu 1M 512M; pg b-gpu-c128k 2 sendrecv gpu 1M 512M NCCL_P2P_NET_CHUNKSIZE=131072
pg b-gpu-c2m 2 sendrecv gpu 1M 512M NCCL_P2P_NET_CHUNKSIZE=2097152; pg b-gpu-ch4 2 sendrecv gpu 1M 512M NCCL_NCHANNELS_PER_NET_PEER=4
pg b-gpu-stats 2 sendrecv gpu 1M 512M NCCL_TCPXR_STATS=1; pg b-host2 2 sendrecv host 1M 512M; pg b-gpu2 2 sendrecv gpu 1M 512M
el done
