#!/bin/bash
# run226 (a 4-GPU host, 64 cores; 2026-11-27, twenty-fifth session): which default for the
# stripes' window. Run 224 (same host type): 256 KiB made the 4-rank ring 1.3-1.9x faster at 512
# KiB and 1.4x at 4 MiB, all_gather 0.67-0.98x the old time, but sendrecv 1.13-1.59x slower. Here
# old (a2215065, dist/new) against dist/w (2cb6ea3) with NCCL_TCPXR_UNREAD_BYTES=1M and at its
# 256 KiB default: tcpxr-bench ring 4 ranks 512 KiB, then nccl-tests all four collectives 256 KiB-
# 512 MiB at 4 ranks one per GPU, 20 iterations, order old 1M 256K 256K 1M old; then sendrecv and
# all_reduce at 2 ranks (GPUs 0-1), old 1M 1M old.
cd "$(dirname "$0")/.."; A=/tmp/run226; source dist/common.sh
start_run
{ echo "new: $(cat dist/w/commit.txt)"; echo "old: $(cat dist/new/commit.txt)"; } >> $A/machine.txt
tests_228
ring(){ local name=$1 dir=$2 envs=$3
  timeout 60 env $envs $dir/tcpxr-bench ring --ranks 4 --channels 8 --size 512K --seconds 3 --no-baseline > $A/$name.txt 2>&1
  el "$name rc=$? $(grep -a -E '^ +tcpxr +all' $A/$name.txt | tr -s ' ')"; }
ring ring-old dist/new ""; ring ring-w256k dist/w ""; ring ring-w1m dist/w NCCL_TCPXR_UNREAD_BYTES=1M
ring ring-w1m-2 dist/w NCCL_TCPXR_UNREAD_BYTES=1M; ring ring-w256k-2 dist/w ""; ring ring-old-2 dist/new ""
# Where the receiving copy runs with the window (run 224's profile showed no _copy_to_iter in
# the I/O threads): system-wide perf, samples by thread name and symbol.
PROF=$PWD/dist/prof; PERF="env LD_LIBRARY_PATH=$PROF/lib $PROF/perf"
$PERF record -F 999 -a -g -q -o /tmp/p.data -- dist/w/tcpxr-bench ring --ranks 4 --channels 8 --size 512K --seconds 3 --no-baseline > $A/prof-ring.txt 2>&1
$PERF report -i /tmp/p.data --stdio -n --no-children --sort comm,sym -g none --percent-limit 0.2 > $A/prof-comm-sym.txt 2>&1
el "perf: $(grep -E '_copy_to_iter|_copy_from_iter' $A/prof-comm-sym.txt | tr -s ' ' | paste -sd';')"; rm -f /tmp/p.data
r(){ local out=$1 lib=$2 np=$3 ops=$4; shift 4
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $lib --mpirun --ranks $np --ops $ops --min 256K --max 512M --iters 20 --warmup 5 --timeout 60 --configs tcpxr-host --out $A/$out "$@" > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok, $(grep -c FAILED $A/$out.txt) failed"; }
ALL=all_reduce,all_gather,reduce_scatter,sendrecv; W1=(--env NCCL_TCPXR_UNREAD_BYTES=1M)
r a1 dist/new 4 $ALL; r m1 dist/w 4 $ALL "${W1[@]}"; r k1 dist/w 4 $ALL; r k2 dist/w 4 $ALL; r m2 dist/w 4 $ALL "${W1[@]}"; r a2 dist/new 4 $ALL
P2=sendrecv,all_reduce
r a2r1 dist/new 2 $P2; r m2r1 dist/w 2 $P2 "${W1[@]}"; r m2r2 dist/w 2 $P2 "${W1[@]}"; r a2r2 dist/new 2 $P2
el done
