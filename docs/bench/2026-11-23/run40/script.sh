#!/bin/bash
# GPU run F on nvidia-h200-x2 (two GPUs): with the inline-when-idle limit at 64 KiB, the chunk size
# (a 512 KiB NCCL message over 1 or several stripes) and speeds that keep 4 channels.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runF; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runF.tgz -C /tmp runF; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --mpirun --nccl-tests $NT --plugin-dir $P --iters 5 --warmup 2 --timeout 60 --env NCCL_TCPXR_INLINE_IDLE_BYTES=65536 --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run ar-idle64k 60 --configs socket-2x2,tcpxr-host --ops all_reduce --max 1G
run ar-chunk128k 80 --configs tcpxr-host --ops all_reduce --max 1G --env NCCL_TCPXR_CHUNK_BYTES=131072
run ar-chunk256k 100 --configs tcpxr-host --ops all_reduce --max 1G --env NCCL_TCPXR_CHUNK_BYTES=262144
run ar-300g 120 --configs tcpxr-host --ops all_reduce --max 1G --env NCCL_TCPXR_SPEED_MBPS=300000
run ar-300g-chunk128k 140 --configs tcpxr-host --ops all_reduce --max 1G --env NCCL_TCPXR_SPEED_MBPS=300000 --env NCCL_TCPXR_CHUNK_BYTES=131072
run sr-p2p512k 165 --configs tcpxr-host --ops sendrecv --max 1G --env NCCL_P2P_NET_CHUNKSIZE=524288
run sr-p2p512k-chunk128k 190 --configs tcpxr-host --ops sendrecv --max 1G --env NCCL_P2P_NET_CHUNKSIZE=524288 --env NCCL_TCPXR_CHUNK_BYTES=131072
run ar-chunk128k-stripes8 210 --configs tcpxr-host --ops all_reduce --min 64K --max 1G --env NCCL_TCPXR_CHUNK_BYTES=131072 --env NCCL_TCPXR_STRIPES=8
