#!/bin/bash
# run261 (a 4-GPU host, 64 cores; 2026-11-27, thirtieth session): main at 682b66f3 (dist/c21). In
# run 260b's ring (4 ranks, 512 KiB) each rank's 10 I/O threads were all busy (38.6 cores for 40
# threads, hand-offs waiting ~2 ms for a thread) while 26 of the host's 64 cores idled: is the
# auto pool's cap of 10 (settings.rs MAX_AUTO_IO_THREADS) what bounds 4 ranks' bulk? The ring at
# 512 KiB with 10 (the default) and 14 threads (each rank's 16 cores less NCCL's 2), then NCCL:
# 4 ranks one per GPU, all_reduce, all_gather, reduce_scatter 256 KiB-512 MiB, host
# buffers, 10 iterations, -c 1, the two alternated (--repeat 2).
cd "$(dirname "$0")/.."; A=/tmp/run261; source dist/common.sh
start_run; echo "c21: $(cat dist/c21/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
L=dist/c21
i=0; for t in 10 14 10 14; do i=$((i+1))
  NCCL_TCPXR_IO_THREADS=$t NCCL_TCPXR_STATS=1 TCPXR_LOG=info timeout 60 python3 dist/cpu_sample.py tcpxr-bench -- $L/tcpxr-bench ring --ranks 4 --channels 8 --size 512K --seconds 4 --no-baseline > $A/ring-$t-$i.txt 2>&1
  el "ring threads=$t rc=$? $(grep -a -E '^ +tcpxr +all' $A/ring-$t-$i.txt | tr -s ' ') $(grep -a 'tcpxr-ioN' $A/ring-$t-$i.txt | tr -s ' ' | cut -d' ' -f3-9)"
done
timeout 420 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $L --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter --min 256K --max 512M --iters 10 --warmup 3 --timeout 90 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+t14 --variant t14:NCCL_TCPXR_IO_THREADS=14 --out $A/t > $A/t.txt 2>&1
el "t rc=$? $(grep -c ' ok, ' $A/t.txt) ok, $(grep -c FAILED $A/t.txt) failed"
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
