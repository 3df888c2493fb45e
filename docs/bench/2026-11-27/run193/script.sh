#!/bin/bash
# run193 (a 2-GPU host; 2026-11-27, twenty-first session): issue 31 item 1 at 2 ranks one per GPU
# on 03fcac7 (the idle chunk on point-to-point connections; NCCL's log gets every line of the
# settings blocks): the four collectives 8 B-512 MiB against all four Socket tunings in one run, as
# run 187 on d406002. run_nccl_tests.py --mpirun --ranks 2, 20 iterations, -c 1. Then whether NCCL's
# log holds the whole first-connection settings block (ef4aecb).
cd "$(dirname "$0")/.."; A=/tmp/run193; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run193.tar.xz -C /tmp run193" EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/final/commit.txt; uptime; lscpu | grep -E '^(Model name|Thread|Core|Socket|NUMA node\(s\)|Hypervisor)'; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
timeout 450 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/final --mpirun --ranks 2 --ops all_reduce,all_gather,reduce_scatter,sendrecv --max 512M --iters 20 --warmup 5 --timeout 100 --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host --out $A/table2 > $A/table2.txt 2>&1
el "table2 rc=$? $(grep -c ' ok, ' $A/table2.txt) ok, $(grep -c FAILED $A/table2.txt) failed"
f=$(ls $A/table2/logs/sendrecv.tcpxr-host.* | head -1)
el "settings block lines in $f: $(grep -a -A20 'fixed at the first connection' $f | grep -a -c 'NET/tcpxr   NCCL_TCPXR\|NET/tcpxr   inline')"
el "$(grep -a -h 'IDLE_CHUNK_BYTES (' $f | head -2 | cut -c1-160 | tr '\n' '|')"
el done
