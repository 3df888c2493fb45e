#!/bin/bash
# run216 (a 4-GPU host, 64 cores; 2026-11-27, twenty-fourth session): the 4-rank band against all
# four Socket tunings by medians, since one instance's back-to-back runs differ up to 2x there
# (run 215: Socket 2x2's all_reduce of 1 MiB 984 then 520 us), and whether 8 spinners a rank
# (run 215: at 4 MiB 20-28 % of hand-offs found no spinner, 11-16 % of turns after a wake-up)
# shorten it. all_reduce, all_gather, reduce_scatter 256 KiB-16 MiB, 50 iterations, 4 ranks one
# per GPU; tcpxr (dist/new, a2215065: 10 I/O threads, 4 spinners) at its defaults (D) and with
# NCCL_TCPXR_IO_SPIN_THREADS=8 (S), and the four Socket tunings (K); three passes D S K, S K D, K D S.
cd "$(dirname "$0")/.."; A=/tmp/run216; source dist/common.sh
start_run
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 48
r(){ local out=$1; shift
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/new --mpirun --ranks 4 --ops all_reduce,all_gather,reduce_scatter --min 256K --max 16M --iters 50 --warmup 10 --timeout 60 --out $A/$out "$@" > $A/$out.txt 2>&1
  el "$out rc=$? $(grep -c ' ok, ' $A/$out.txt) ok, $(grep -c FAILED $A/$out.txt) failed"; }
D(){ r d$1 --configs tcpxr-host; }
S(){ r s$1 --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_THREADS=8; }
K(){ r socket$1 --configs socket,socket-1x1,socket-2x2,socket-4x4; }
D 1; S 1; K 1; S 2; K 2; D 2; K 3; D 3; S 3
el done
