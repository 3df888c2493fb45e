#!/bin/bash
# run450 (one H200): where LL on point-to-point connections stops paying. Run 449 found
# NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 taking sendrecv of 8 B-8 KiB to 0.55-0.9 of main's time and
# 32 KiB to 1.5: LL runs up to NCCL_P2P_LL_THRESHOLD (16 KiB) times the op's channels. Main and main
# with LL at thresholds 16 KiB (NCCL's), 8 KiB and 4 KiB, beside Socket default and 1x1 (the best
# tunings at 2-32 KiB in run 449): sendrecv 2-64 KiB (x2), 6 rounds at 2 ranks, 4 at 4; then
# alltoall (4 ranks, point-to-point too) 8 B-64 KiB, 3 rounds; then the host memory LL buffers take:
# each rank's peak RSS over an alltoall of 8 B with and without. GPU 0 under MPS.
cd "$(dirname "$0")/.."; A=/tmp/run450; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c104: $(cat dist/c104/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
declare -A VENV=([ll]="NCCL_ALLOC_P2P_NET_LL_BUFFERS=1" [t8]="NCCL_P2P_LL_THRESHOLD=8192" [t4]="NCCL_P2P_LL_THRESHOLD=4096")
mid=(-b 2K -e 64K -f 2 -n 1000 -w 200)
rounds 2 6 sendrecv "c104 c104+ll socket c104+ll+t8 s1x1 c104+ll+t4" "${mid[@]}"
rounds 4 4 sendrecv "c104 c104+ll socket c104+ll+t8 s1x1 c104+ll+t4" "${mid[@]}"
rounds 4 3 alltoall "c104 c104+ll+t8 socket c104+ll s1x1" -b 8 -e 64K -f 4 -n 500 -w 100
# Peak of the 4 ranks' summed RSS (sampled every 0.1 s) over an alltoall of 8 B, 20,000 iterations.
for v in c104 c104+ll; do
  launch $v 4 alltoall -b 8 -e 8 -n 20000 -w 100 > $A/rss-$v.log 2>&1 &
  pk=0; while kill -0 $! 2>/dev/null; do s=$(ps -C alltoall_perf -o rss= | awk '{t+=$1} END{print t+0}'); [ "$s" -gt "$pk" ] && pk=$s; sleep 0.1; done
  el "rss $v: peak of the 4 ranks' summed RSS $pk kB"
done
mps_off
el done
