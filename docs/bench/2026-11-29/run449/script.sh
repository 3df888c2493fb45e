#!/bin/bash
# run449 (one H200): item 1's sendrecv of 8-128 B with LL on point-to-point connections. NCCL 2.28
# gives its p2p net connections no LL buffer unless NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 (net.cc), so a
# small sendrecv runs Simple: the receiving kernel waits for the proxy's test, then its tail. With LL
# buffers a send of up to 16 KiB a channel runs LL (enqueue.cc, NCCL_P2P_LL_THRESHOLD): the kernel
# reads the flags of lines that tcpxr's read puts in place. NCCL reads the variable after the net
# plugin's init, so tcpxr could set it. Main (dist/c104) with and without it, Socket with and without
# it, and Socket's four tunings: sendrecv 8 B-32 KiB (-n 1000 -w 200), 7 rounds at 2 ranks, 5 at 4;
# then the correctness set (sendrecv, all_reduce) with it on. GPU 0 under MPS.
cd "$(dirname "$0")/.."; A=/tmp/run449; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c104: $(cat dist/c104/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
declare -A VENV=([ll]="NCCL_ALLOC_P2P_NET_LL_BUFFERS=1")
small=(-b 8 -e 32K -f 4 -n 1000 -w 200)
rounds 2 7 sendrecv "c104 socket c104+ll s1x1 socket+ll s2x2 s4x4" "${small[@]}"
rounds 4 5 sendrecv "c104 socket c104+ll s1x1 socket+ll s2x2 s4x4" "${small[@]}"
mps_off
checks dist/c104 all_reduce,sendrecv NCCL_ALLOC_P2P_NET_LL_BUFFERS=1
rm -rf $A/check-*/logs $A/check-*/mps-log
el done
