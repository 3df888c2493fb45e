#!/bin/bash
# run204 (a 2-GPU host; prepared 2026-11-27 for the next session): the 2-rank mid band by channel
# count. Run 197 (medians): all_reduce 512 KiB-2 MiB 0.94-0.97 on the tuner's 2 channels (Socket
# 2x2 229 us at 1 MiB against 245, 4x4 353 at 2 MiB against 375). tcpxr at its defaults, and with
# the channels bounded to 4 and to 1 (NCCL_MIN_NCHANNELS=NCCL_MAX_NCHANNELS: the tuner keeps the
# ring in Simple and NCCL's count within the user's bounds), beside all four Socket tunings;
# all_reduce and all_gather 256 KiB-16 MiB, 2 ranks one per GPU, --repeat 3, on dist/new (e4db58c).
cd "$(dirname "$0")/.."; A=/tmp/run204; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run204.tar.xz -C /tmp run204" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/new/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
r(){ local out=$1; shift
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks 2 --ops all_reduce,all_gather --min 256K --max 16M --iters 20 --warmup 5 --timeout 30 --repeat 3 --out $A/$out "$@" > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok, $(grep -c FAILED $A/$out.txt) failed"; }
r base --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host
r ch4 --configs tcpxr-host --env NCCL_MIN_NCHANNELS=4 --env NCCL_MAX_NCHANNELS=4
r ch1 --configs tcpxr-host --env NCCL_MIN_NCHANNELS=1 --env NCCL_MAX_NCHANNELS=1
el done
