#!/bin/bash
# GPU run H on nvidia-h200-x2 (two GPUs): what bounds tcpxr-host at 128 MiB-1 GiB below 20 GB/s:
# NCCL's channels (connections) and its bytes in flight per connection (NCCL_BUFFSIZE), and the
# transport's own ceiling without NCCL (tcpxr-bench nccl).
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runH; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runH.tgz -C /tmp runH; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
B=$!
( for c in 4 8 16; do echo "== comms $c"; timeout 20 dist/tcpxr-bench nccl --comms $c --sizes 512K --seconds 1; done ) > $A/bench-nccl.txt 2>&1
wait $B; el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --mpirun --nccl-tests $NT --plugin-dir $P --iters 5 --warmup 2 --timeout 40 --min 64M --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run ref 90 --configs socket-2x2,tcpxr-host --max 1G
run minch8 110 --configs tcpxr-host --ops all_reduce --max 1G --env NCCL_MIN_NCHANNELS=8
run buff8m 130 --configs tcpxr-host --max 1G --env NCCL_BUFFSIZE=8388608
run minch8-buff8m 150 --configs tcpxr-host --ops all_reduce --max 1G --env NCCL_MIN_NCHANNELS=8 --env NCCL_BUFFSIZE=8388608
run peer4 170 --configs tcpxr-host --ops sendrecv --max 1G --env NCCL_NCHANNELS_PER_NET_PEER=4
