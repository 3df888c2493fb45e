#!/bin/bash
# run206 (a 2-GPU host, 32 cores; 2026-11-27, twenty-third session), two parts.
# A: the small sizes at 2 ranks, one per GPU, in steady state: run 197's medians (20 iterations)
#    had every collective 1-3 us behind at 8-128 B, run 195 (-n 1000) found all_reduce 8 B level.
#    The four collectives 8 B-64 KiB, 200 iterations, all four Socket tunings and tcpxr (e4db58c,
#    dist/new), --repeat 3 (configs rotated each pass).
# B: what a core of the bulk ring does besides copying (run 205: the I/O threads copy 61 % of
#    their time at 5.3 GB/s a copying core, plain TCP x16's 6.8): tcpxr-bench ring, 2 ranks,
#    8 channels, 512 KiB, by stripes, socket buffers, chunk and spinners, alternated twice; then
#    one perf record of the default ring reported for the I/O threads alone.
cd "$(dirname "$0")/.."; A=/tmp/run206; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "rm -f $A/*.data; tar cJf $R/run206.tar.xz -C /tmp run206" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/new/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
PART=${PART:-AB}
if [[ $PART == *A* ]]; then
timeout 400 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 8 --max 64K --iters 200 --warmup 20 --timeout 30 --repeat 3 --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host --out $A/small > $A/small.txt 2>&1
el "small rc=$? $(grep -c ' ok, ' $A/small.txt) ok, $(grep -c FAILED $A/small.txt) failed"
fi
if [[ $PART == *B* ]]; then
PROF=$PWD/dist/prof; PERF="env LD_LIBRARY_PATH=$PROF/lib $PROF/perf"; B=$PROF/tcpxr-bench-sym
ring(){ local name=$1 envs=$2; shift 2; timeout 60 env $envs $B ring --ranks 2 --channels 8 --size 512K --seconds 3 "$@" > $A/$name.txt 2>&1
  el "$name rc=$? $(grep -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/$name.txt | tr -s ' ' | paste -sd';')"; }
for i in 1 2; do
  ring r$i-base "" --tcp-connections 8
  ring r$i-stripes1 "NCCL_TCPXR_STRIPES=1" --no-baseline
  ring r$i-stripes2 "NCCL_TCPXR_STRIPES=2" --no-baseline
  ring r$i-stripes8 "NCCL_TCPXR_STRIPES=8" --no-baseline
  ring r$i-buf1m "NCCL_TCPXR_SOCKET_SNDBUF=1M NCCL_TCPXR_SOCKET_RCVBUF=1M" --no-baseline
  ring r$i-buf4m "NCCL_TCPXR_SOCKET_SNDBUF=4M NCCL_TCPXR_SOCKET_RCVBUF=4M" --no-baseline
  ring r$i-chunk256k "NCCL_TCPXR_CHUNK_BYTES=256K" --no-baseline
  ring r$i-chunk128k "NCCL_TCPXR_CHUNK_BYTES=128K" --no-baseline
  ring r$i-spin8 "NCCL_TCPXR_IO_SPIN_THREADS=8" --no-baseline
  ring r$i-t12 "NCCL_TCPXR_IO_THREADS=12" --no-baseline
done
$PERF record -F 1999 -a -g -q -o $A/io.data -- $B ring --ranks 2 --channels 8 --size 512K --seconds 3 --no-baseline > $A/io-ring.txt 2>&1
el "io perf rc=$?"
C=$(seq -s, -f 'tcpxr-io%g' 0 15)
$PERF report -i $A/io.data --stdio --no-children --comms $C --sort dso,sym -g none --percent-limit 0.1 > $A/io.sym.txt 2>&1
$PERF report -i $A/io.data --stdio --no-children --comms $C --sort sym -g caller,0.5,callee,function,percent --percent-limit 0.8 > $A/io.callers.txt 2>&1
$PERF report -i $A/io.data --stdio --children --comms $C --sort sym -g none --percent-limit 1 > $A/io.children.txt 2>&1
el "io reports $(wc -c < $A/io.sym.txt) B"
fi
el done
