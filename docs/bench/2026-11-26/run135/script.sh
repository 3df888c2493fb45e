#!/bin/bash
# run135 on one GPU (nvidia-h200, 16 cores): the band change split in two. f047590's library
# (dist/old) and the change (uncommitted on c2405a6, dist: the tuner's 2 channels from a 256 KiB
# share, idle inline auto 32 KiB), each also with the other inline limit, so four variants: old,
# old + NCCL_TCPXR_INLINE_IDLE_BYTES=32K (the inline change alone), new + 64K (the tuner change
# alone), new. all_reduce, all_gather and reduce_scatter 128 KiB - 1 MiB, 100 iterations,
# alternated four times; Socket 1x1 and 2x2 beside for all_reduce.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run135.sh)
R=${OUT:-/tmp/out}; A=/tmp/run135; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ tar czf $R/run135.tgz -C /tmp run135; cat $A/steps.txt; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt dist/old/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
n(){ out=$1; shift; timeout 100 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --iters 100 --warmup 10 --min 128K --max 1M --out $A/$out --timeout 60 "$@" > $A/$out.log 2>&1; el "$out rc=$?"; }
for i in 1 2 3 4; do
  n sock$i --plugin-dir dist --ops all_reduce --configs socket-1x1,socket-2x2
  for v in old old32 new64 new; do
    case $v in old) a="--plugin-dir dist/old";; old32) a="--plugin-dir dist/old --env NCCL_TCPXR_INLINE_IDLE_BYTES=32K";;
      new64) a="--plugin-dir dist --env NCCL_TCPXR_INLINE_IDLE_BYTES=64K";; new) a="--plugin-dir dist";; esac
    n $v$i $a --ops all_reduce,all_gather,reduce_scatter --configs tcpxr-host
  done
done
