#!/bin/bash
# run209 (a 2-GPU host, 32 cores; 2026-11-27, twenty-third session): issue 31 item 3 at 2 ranks
# against the fair plain TCP ceiling (run 207's change: the TCP readers fill as many receive
# buffers as tcpxr's ring uses). (1) tcpxr-bench ring (dist/new2: e4db58c with that change), 2
# ranks, 8 channels, 512 KiB and 4 MiB, 8 in flight a channel, 3 s, beside TCP rings of 8, 16, 32
# connections; (2) nccl-tests all_reduce, all_gather, reduce_scatter, sendrecv 8-512 MiB, 20
# iterations, -c 1, Socket default/1x1/2x2/4x4 and tcpxr host buffers (dist/new, e4db58c), 2
# ranks one per GPU, through run_nccl_tests.py --mpirun; (3) the rings again.
cd "$(dirname "$0")/.."; A=/tmp/run209; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run209.tar.xz -C /tmp run209" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/new/commit.txt dist/new2/commit.txt; uptime
  lscpu | grep -E '^(Model name|Thread|Core|Socket|NUMA node\(s\)|Hypervisor)'; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
rings(){ for s in 512K 4M; do
  timeout 90 dist/new2/tcpxr-bench-sym ring --ranks 2 --channels 8 --size $s --seconds 3 --tcp-connections 8,16,32 > $A/ring$1-$s.txt 2>&1
  el "ring$1 $s rc=$? $(grep -a -E '^ +(tcpxr|tcp x[0-9]+) +all' $A/ring$1-$s.txt | tr -s ' ' | paste -sd';') | $(grep -a '^ceiling' $A/ring$1-$s.txt)"
done; }
rings 1
timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks 2 --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host --ops all_reduce,all_gather,reduce_scatter,sendrecv --min 8M --max 512M --iters 20 --warmup 5 --timeout 60 --out $A/bulk2 > $A/bulk2.txt 2>&1
el "bulk 2 ranks rc=$? $(grep -c ' ok, ' $A/bulk2.txt) ok, $(grep -c FAILED $A/bulk2.txt) failed"
rings 2
uptime >> $A/machine.txt
el done
