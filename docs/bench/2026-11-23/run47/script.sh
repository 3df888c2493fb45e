#!/bin/bash
# GPU run L on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: the mid
# band (16 KiB - 16 MiB all_reduce) with 40 iterations per size, since 5 left Socket's own figures
# varying 1.5x between runs: tcpxr with its tuner, without it, and with NCCL_MAX_NCHANNELS=2 (2
# channels at every size), Socket's tunings before and after.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runL; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runL.tgz -C /tmp runL; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem|exact|mismatch" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; CUDA_VISIBLE_DEVICES=0 timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 40 --warmup 10 --timeout 100 --ops all_reduce --min 16K --max 16M --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run ref 120 --configs socket-1x1,socket-2x2,socket-4x4,tcpxr-host
run off 150 --configs tcpxr-host --env NCCL_TCPXR_TUNER=0
run max2 180 --configs tcpxr-host --env NCCL_MAX_NCHANNELS=2
run ref2 250 --configs socket-1x1,socket-2x2,socket-4x4,tcpxr-host
