#!/bin/bash
# GPU run X on one GPU: NCCL's traffic class through stock NCCL 2.28.3 and tcpxr, end to end.
# ncclTests/traffic_class/traffic_class.c makes a two-rank communicator with
# ncclCommInitRankConfig(config.trafficClass), runs one all_reduce and counts its process's sockets
# whose IP TOS is the class. Two ranks as two NCCL hosts on GPU 0 (no MPS: correctness only).
# Class 96 (DSCP 24), then none (-1) as the contrast, then NCCL Socket with class 96.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runX; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
nvcc -o $A/traffic_class ncclTests/traffic_class/traffic_class.c -lnccl > $A/build.txt 2>&1; echo "build rc=$?" >> $A/build.txt
pair(){ name=$1; tc=$2; shift 2; rm -f $A/id-$name
  ( env "$@" NCCL_HOSTID=tc-a timeout 60 $A/traffic_class 0 $tc $A/id-$name > $A/$name-0.txt 2>&1; echo "rank 0 rc=$?" >> $A/$name-0.txt ) &
  ( env "$@" NCCL_HOSTID=tc-b timeout 60 $A/traffic_class 1 $tc $A/id-$name > $A/$name-1.txt 2>&1; echo "rank 1 rc=$?" >> $A/$name-1.txt )
  wait; grep -h "^rank" $A/$name-*.txt | sed "s/^/$name: /" | tee -a $A/summary.txt; }
pair tcpxr-96 96 NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/libnccl-net-tcpxr.so
pair tcpxr-none -1 NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/libnccl-net-tcpxr.so
pair socket-96 96 NCCL_NET=Socket
grep -h -E "Using network|Loaded net plugin|trafficClass|traffic class" $A/tcpxr-96-*.txt | sort | uniq -c > $A/evidence.txt
tar czf $R/runX.tgz -C /tmp runX; cat $A/build.txt | tail -3; cat $A/summary.txt; cat $A/evidence.txt
