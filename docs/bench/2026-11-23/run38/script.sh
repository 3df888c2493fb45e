#!/bin/bash
# GPU run D on nvidia-h200-x2 (two GPUs, one rank each): why tcpxr-host all_reduce is slow from
# 32 KiB to 8 MiB (NCCL's protocol choice vs the reported speed) and what sendrecv gains from
# NCCL's p2p chunk size and channels per peer.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runD; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runD.tgz -C /tmp runD; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
el "tuning tables: tcpxr-host at three speeds, Socket default"
for sp in 0 100000 25000 socket; do
  if [ $sp = socket ]; then NET="NCCL_NET=Socket NCCL_NET_PLUGIN=none"; else NET="NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/libnccl-net-tcpxr.so NCCL_TCPXR_SPEED_MBPS=$sp NCCL_TCPXR_TRANSPORT=socket"; fi
  timeout 40 env $NET NCCL_NET_GDR_LEVEL=LOC NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING \
    mpirun --allow-run-as-root --bind-to none -np 2 -x LD_LIBRARY_PATH -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS -x NCCL_NET -x NCCL_NET_PLUGIN -x NCCL_NET_GDR_LEVEL -x NCCL_P2P_DISABLE -x NCCL_SHM_DISABLE -x NCCL_SOCKET_IFNAME -x NCCL_NVLS_ENABLE -x NCCL_TCPXR_SPEED_MBPS -x NCCL_TCPXR_TRANSPORT \
    $NT/all_reduce_perf -b 8 -e 64M -f 4 -n 2 -w 1 -c 0 -g 1 > $A/tuning-$sp.txt 2>&1
  el "tuning $sp rc=$?"
done
el "all_reduce tcpxr-host at reported speeds, Socket 2x2 and 1x1 beside"
run(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --mpirun --nccl-tests $NT --plugin-dir $P --iters 5 --warmup 2 --timeout 60 --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run ar-ref 150 --configs socket-1x1,socket-2x2,tcpxr-host --ops all_reduce --max 1G
d=150; for sp in 100000 50000 25000 10000; do d=$((d+45)); run ar-speed$sp $d --configs tcpxr-host --ops all_reduce --max 1G --env NCCL_TCPXR_SPEED_MBPS=$sp; done
run ar-simple 360 --configs tcpxr-host --ops all_reduce --max 64M --env NCCL_PROTO=Simple
el "sendrecv: NCCL's p2p chunk and channels per peer"
run sr-ref 420 --configs socket-2x2,tcpxr-host --ops sendrecv --min 64K --max 1G
run sr-chunk512k 450 --configs socket-2x2,tcpxr-host --ops sendrecv --min 64K --max 1G --env NCCL_P2P_NET_CHUNKSIZE=524288
run sr-peer4 480 --configs tcpxr-host --ops sendrecv --min 64K --max 1G --env NCCL_NCHANNELS_PER_NET_PEER=4
run sr-both 510 --configs tcpxr-host --ops sendrecv --min 64K --max 1G --env NCCL_NCHANNELS_PER_NET_PEER=4 --env NCCL_P2P_NET_CHUNKSIZE=524288
