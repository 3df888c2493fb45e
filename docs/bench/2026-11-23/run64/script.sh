#!/bin/bash
# run64 on one GPU (nvidia-h200): tcpxr under NCCL 2.30.7, built here from NVIDIA/nccl's v2.30.7-1
# release (sources carried in the ignored dist/nccl; only sm_90), with nccl-tests built against it.
# Issue 17's 2.30 items: NCCL loads the v12 table; v12 railId/planeId (NCCL_TCPXR_RAILS) reach
# NCCL's topology (NCCL_TOPO_DUMP_FILE); NCCL_MULTI_RANK_GPU_ENABLE=1 instead of --one-gpu's
# NCCL_HOSTID trick. Host and GPU buffers (device unpack), correctness runs of 8 B - 64 MiB.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/run64; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run64.tgz -C /tmp run64; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem|Out of bounds|wrong" $A/*.log | sort | uniq -c | head; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
NB=/tmp/nccl230
# (here the script built NCCL 2.30.7 from NVIDIA/nccl tag v2.30.7-1 into $NB, sm_90 only, logging to
# nccl-build.txt: 199 s on the 16 cores; left out of this copy, as is the nccl-tests build below.)
ls $NB/lib >> $A/steps.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "nccl-tests $(tail -1 $A/nccl-tests-build.txt)"
export LD_LIBRARY_PATH=$NB/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# A) the runner's --one-gpu (NCCL_HOSTID per rank) under MPS, host and GPU buffers, rail 3 plane 1.
timeout $(left 540) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests /tmp/nt230 --plugin-dir dist --iters 5 --warmup 2 --max 64M --timeout 60 \
  --configs tcpxr-host,tcpxr-gpu --env NCCL_TCPXR_RAILS=3:1 --env NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH --env NCCL_TOPO_DUMP_FILE=$A/topo-dump.xml --out $A/hostid > $A/hostid.log 2>&1; el "hostid rc=$?"
# B) NCCL_MULTI_RANK_GPU_ENABLE=1: two ranks of one host on GPU 0, no NCCL_HOSTID, no MPS.
mr(){ out=$1; lim=$2; shift 2; mkdir -p $A/$out; timeout $(left $lim) mpirun --allow-run-as-root --bind-to none -np 2 \
  -x LD_LIBRARY_PATH=$PWD/dist:$LD_LIBRARY_PATH -x NCCL_MULTI_RANK_GPU_ENABLE=1 -x NCCL_NVLS_ENABLE=0 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 \
  -x NCCL_SOCKET_IFNAME=lo -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET -x NCCL_DEBUG_FILE=$A/$out/nccl.%h.%p -x NCCL_TESTS_DEVICE=0 "$@" \
  /tmp/nt230/all_reduce_perf -b 8 -e 64M -f 4 -n 5 -w 2 -c 1 -g 1 > $A/$out.log 2>&1; el "$out rc=$?"; }
mr mr-host 580 -x NCCL_NET=tcpxr -x NCCL_NET_PLUGIN=$PWD/dist/libnccl-net-tcpxr.so -x NCCL_NET_GDR_LEVEL=LOC -x NCCL_TCPXR_TRANSPORT=socket
mr mr-socket 595 -x NCCL_NET=Socket
grep -h -E "net plugin|NET/Plugin|Using network|via NET|MULTI_RANK|Duplicate|rail|NET/tcpxr (device|fused|init)" $A/hostid/logs/* $A/mr-host/* 2>/dev/null | sed 's/^[^ ]* //' | sort | uniq -c | sort -rn | head -40 > $A/evidence.txt
grep -o '<net [^>]*>' $A/topo-dump.xml >> $A/evidence.txt 2>/dev/null
