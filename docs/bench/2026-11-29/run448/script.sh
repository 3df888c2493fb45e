#!/bin/bash
# run448 (one H200): item 1's sendrecv of 8-128 B with receives posted lazily on point-to-point
# connections only. irecv ends with a progress pass whose read of the control connection finds
# nothing when NCCL posts ahead: a recv returning EAGAIN on NCCL's thread between a receive's
# completion and the next send (on the CPU host, `perf trace`: every one of 10,918 round trips of
# tcpxr-bench latency had it, the turnaround from the receive's recv to the next sendmsg 1.59 us
# against plain TCP's 0.47). Run 344 had it off on every connection: 2 ranks faster, 4 ranks'
# all_reduce slower. Here collectives keep the pass. dist/c106 = main + dist/c106.patch, on with
# NCCL_TCPXR_EXP_P2P_LAZY=1. Main (dist/c104) and c106+l against all four Socket tunings:
# sendrecv 8 B-2 KiB (-n 1000 -w 200), 8 rounds at 2 ranks, 6 at 4; then how many comms took it (a WARN
# each), and the correctness set (sendrecv) with it on. GPU 0 under MPS.
cd "$(dirname "$0")/.."; A=/tmp/run448; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for v in c104 c106; do echo "$v: $(cat dist/$v/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
declare -A VENV=([l]="NCCL_TCPXR_EXP_P2P_LAZY=1")
small=(-b 8 -e 2K -f 4 -n 1000 -w 200)
rounds 2 8 sendrecv "c104 socket c106+l s1x1 s2x2 s4x4" "${small[@]}"
rounds 4 6 sendrecv "c104 socket c106+l s1x1 s2x2 s4x4" "${small[@]}"
el "lazy receive comms (the experiment's WARN) in 2-sendrecv-c106+l-r1.log: $(grep -c 'posts its receives without a progress pass' $A/2-sendrecv-c106+l-r1.log)"
mps_off
checks dist/c106 sendrecv NCCL_TCPXR_EXP_P2P_LAZY=1
rm -rf $A/check-*/logs $A/check-*/mps-log
el done
