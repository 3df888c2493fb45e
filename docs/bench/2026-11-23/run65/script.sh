#!/bin/bash
# run65 on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: channels against
# stripes (issue 14's bulk target, issue 17's "size stripes by NCCL's flows"). NCCL builds 4
# channels for tcpxr; run 11 (two H200s, 32 cores) found 8 channels of 2 stripes fastest at bulk.
# Bulk 64 MiB - 1 GiB, 10 iterations: default (4 channels x 4 stripes), NCCL_MIN_NCHANNELS=8 with
# 4, 2 and 1 stripes, 2 stripes on 4 channels; Socket 1x1, 2x2, and 2x2 with 8 channels. Then the
# mid band 8 B - 16 MiB, 50 iterations, default against 8 channels x 2 stripes, alternated twice.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/run65; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run65.tgz -C /tmp run65; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
bulk(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 10 --warmup 3 --min 64M --max 1G --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
m(){ out=$1; lim=$2; shift 2; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 50 --warmup 10 --min 8 --max 16M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
bulk bd 70 --configs tcpxr-host
bulk c8s4 110 --configs tcpxr-host --env NCCL_MIN_NCHANNELS=8
bulk c8s2 150 --configs tcpxr-host --env NCCL_MIN_NCHANNELS=8 --env NCCL_TCPXR_STRIPES=2
bulk c8s1 190 --configs tcpxr-host --env NCCL_MIN_NCHANNELS=8 --env NCCL_TCPXR_STRIPES=1
bulk c4s2 230 --configs tcpxr-host --env NCCL_TCPXR_STRIPES=2
bulk s 310 --configs socket-1x1,socket-2x2
bulk s8 360 --configs socket-2x2 --env NCCL_MIN_NCHANNELS=8
bulk bd2 400 --configs tcpxr-host
bulk c8s2b 440 --configs tcpxr-host --env NCCL_MIN_NCHANNELS=8 --env NCCL_TCPXR_STRIPES=2
for i in 1 2; do
  m md$i $((440 + 30 * i - 15)) --configs tcpxr-host
  m mc8s2$i $((440 + 30 * i)) --configs tcpxr-host --env NCCL_MIN_NCHANNELS=8 --env NCCL_TCPXR_STRIPES=2
done
