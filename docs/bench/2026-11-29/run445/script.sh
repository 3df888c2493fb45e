#!/bin/bash
# run445 (one H200, prepared in session 55): item 1's last candidate for sendrecv of 8-128 B, about
# 1 us behind Socket (run 440). Run 433's writer thread for small inline control messages, confined
# to connections NCCL names point-to-point (dist/c105 = main c66276a4, library as 57e45da5, plus
# run433/exp-ctrl-writer.patch and that gate, on with NCCL_TCPXR_EXP_CTRL_WRITER=1): NCCL's thread
# hands the write (4 us over loopback) to it and reads its peer's message meanwhile. Run 433 had it
# take sendrecv's 8 B 1.2 us faster but, on every connection, the collectives 4-11 % slower; here the
# collectives' connections write as main does. Main (dist/c104) and c105+w against all four Socket
# tunings: sendrecv 8 B-2 KiB (-n 1000 -w 200), 10 rounds at 2 ranks and 8 at 4; all_reduce 8 B-2 KiB
# at 4 ranks, 4 rounds (the spinning thread beside collectives that do not use it). Then the
# correctness set with the experiment on. GPU 0 under MPS, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run445; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for v in c104 c105; do echo "$v: $(cat dist/$v/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
declare -A VENV=([w]="NCCL_TCPXR_EXP_CTRL_WRITER=1")
small=(-b 8 -e 2K -f 4 -n 1000 -w 200)
rounds 2 10 sendrecv "c104 socket c105+w s1x1 s2x2 s4x4" "${small[@]}"
rounds 4 8 sendrecv "c104 socket c105+w s1x1 s2x2 s4x4" "${small[@]}"
rounds 4 4 all_reduce "c104 c105+w socket" "${small[@]}"
mps_off
checks dist/c105 all_reduce,sendrecv NCCL_TCPXR_EXP_CTRL_WRITER=1
rm -rf $A/check-*/logs $A/check-*/mps-log
el done
