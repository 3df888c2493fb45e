#!/bin/bash
# run224 (a 4-GPU host, 64 cores; 2026-11-27, twenty-fifth session): the stripes' window in tcpxr's
# own protocol (NCCL_TCPXR_UNREAD_BYTES, default 256 KiB: the receiver grants, the sender keeps
# the rest in its own memory) against a2215065 (dist/new, HEAD's data path before it; TCP alone
# bounds what waits unread). (1) tcpxr-bench ring, 8 channels: 4 ranks 512 KiB with windows
# 256K/128K/512K/1M/0 and the old library, two passes, the second reversed, plain TCP x8/x16
# before and after; 4 ranks 4 MiB and 2 ranks 512 KiB A B B A. (2) perf: the 4-rank ring at
# 512 KiB, old and new, samples of the kernel's copies in the I/O threads. (3) nccl-tests all four
# collectives 256 KiB-512 MiB, 4 ranks one per GPU, 20 iterations, old (A) and new (B) A B B A.
# (4) correctness one rank per GPU: all_reduce and sendrecv 8 B-32 MiB -c 1, host and GPU
# buffers, NCCL's choice, Ring, Tree. Run 225 follows on the same machine (Socket's tunings).
cd "$(dirname "$0")/.."; A=/tmp/run224; source dist/common.sh
start_run
{ echo "new: $(cat dist/w/commit.txt)"; echo "old: $(cat dist/new/commit.txt)"; } >> $A/machine.txt
tests_228
ring(){ local name=$1 dir=$2 np=$3 size=$4 envs=$5; shift 5
  timeout 60 env $envs $dir/tcpxr-bench ring --ranks $np --channels 8 --size $size --seconds 3 "$@" > $A/$name.txt 2>&1
  el "$name rc=$? $(grep -a -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/$name.txt | tr -s ' ' | paste -sd';')"; }
V=("w256k:dist/w:" "w128k:dist/w:NCCL_TCPXR_UNREAD_BYTES=128K" "w512k:dist/w:NCCL_TCPXR_UNREAD_BYTES=512K" "w1m:dist/w:NCCL_TCPXR_UNREAD_BYTES=1M" "w4m:dist/w:NCCL_TCPXR_UNREAD_BYTES=4M" "w0:dist/w:NCCL_TCPXR_UNREAD_BYTES=0" "old:dist/new:")
one(){ local tag=$1 np=$2 size=$3 v=$4; local n=${v%%:*} rest=${v#*:}; ring $tag-$np-$size-$n ${rest%%:*} $np $size "${rest#*:}" --no-baseline; }
ring tcp1-4 dist/w 4 512K "" --tcp-connections 8,16
for v in "${V[@]}"; do one p1 4 512K "$v"; done
for ((i=${#V[@]}-1; i>=0; i--)); do one p2 4 512K "${V[$i]}"; done
ring tcp2-4 dist/w 4 512K "" --tcp-connections 8,16
for v in "${V[0]}" "${V[6]}" "${V[6]}" "${V[0]}"; do one q 4 4M "$v"; done
ring tcp-2 dist/w 2 512K "" --tcp-connections 8,16
for v in "${V[0]}" "${V[5]}" "${V[6]}" "${V[6]}" "${V[5]}" "${V[0]}"; do one q 2 512K "$v"; done
# (2) perf (dist/prof's perf 6.1), system-wide at 999 Hz; samples per symbol in the I/O threads.
PROF=$PWD/dist/prof; PERF="env LD_LIBRARY_PATH=$PROF/lib $PROF/perf"
prof(){ local name=$1 dir=$2
  $PERF record -F 999 -a -g -q -o /tmp/$name.data -- $dir/tcpxr-bench ring --ranks 4 --channels 8 --size 512K --seconds 3 --no-baseline > $A/$name-ring.txt 2>&1
  el "$name perf rc=$? $(grep -a -E '^ +tcpxr +all' $A/$name-ring.txt | tr -s ' ')"
  $PERF report -i /tmp/$name.data --stdio -n --no-children --comm tcpxr-io0,tcpxr-io1,tcpxr-io2,tcpxr-io3,tcpxr-io4,tcpxr-io5,tcpxr-io6,tcpxr-io7,tcpxr-io8,tcpxr-io9 --sort sym -g none --percent-limit 0.3 > $A/$name.io-sym.txt 2>&1
  el "$name io: $(grep -E '_copy_to_iter|_copy_from_iter|_raw_spin_unlock_irqrestore' $A/$name.io-sym.txt | tr -s ' ' | paste -sd';')"; rm -f /tmp/$name.data; }
prof prof-old dist/new; prof prof-new dist/w
# (3) NCCL, 4 ranks one per GPU.
r(){ local out=$1 lib=$2; shift 2
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $lib --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 256K --max 512M --iters 20 --warmup 5 --timeout 60 --out $A/$out "$@" > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok, $(grep -c FAILED $A/$out.txt) failed"; }
r a1 dist/new --configs tcpxr-host; r b1 dist/w --configs tcpxr-host; r b2 dist/w --configs tcpxr-host; r a2 dist/new --configs tcpxr-host
# (4) correctness, one rank per GPU.
for algo in NCCL Ring Tree; do
  al=(); [ $algo != NCCL ] && al=(--algo $algo)
  timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/w --mpirun --ranks 4 "${al[@]}" --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-$algo > $A/check-$algo.txt 2>&1
  el "check 4 ranks one per GPU $algo rc=$? $(grep -c ' ok, ' $A/check-$algo.txt) ok, $(grep -c FAILED $A/check-$algo.txt) failed"
done
el done
