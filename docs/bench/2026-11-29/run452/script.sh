#!/bin/bash
# run452 (one H200): 526bfffd (dist/c108): point-to-point LL for host buffers only, and
# NCCL_ALLOC_P2P_NET_LL_BUFFERS=0 among what device unpack needs, after run 451 found GPU buffers'
# sendrecv and alltoall wrong with LL buffers on. The correctness set (all_reduce, sendrecv,
# alltoall; 3 and 4 ranks, host and GPU buffers, NCCL's choice, Ring, Tree; 4 ranks with one
# hardware queue); torch exactness at 3 ranks (all_to_all, sendrecv, all_reduce; host and GPU
# buffers; torch's NCCL 2.28.9); a user's NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 with GPU buffers asked
# for (init must fail naming it); sendrecv 8 B-64 KiB at 2 ranks, c108 beside main and Socket
# default, 2 rounds. GPU 0.
cd "$(dirname "$0")/.."; A=/tmp/run452; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for v in c104 c108; do echo "$v: $(cat dist/$v/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
checks dist/c108 all_reduce,sendrecv,alltoall
rm -rf $A/check-*/logs $A/check-*/mps-log
timeout 240 python3 ncclTests/torch_bench.py --one-gpu --mps --ranks 3 --exact --configs tcpxr-host,tcpxr-gpu --exact-ops all_to_all,sendrecv,all_reduce --plugin-dir dist/c108 --timeout 110 --out $A/torch-exact-3 > $A/torch-exact-3.log 2>&1
el "torch exact 3 ranks rc=$? $(tail -2 $A/torch-exact-3.log | tr '\n' ' ')"
CUDA_VISIBLE_DEVICES=0 timeout 60 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c108 --one-gpu --ranks 2 --ops sendrecv --configs tcpxr-gpu --env NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 --max 8K --iters 2 --warmup 1 --timeout 40 --out $A/user-ll-gpu > $A/user-ll-gpu.txt 2>&1
el "user's LL buffers with GPU buffers asked for: rc=$? (a failure expected); WARN: $(grep -rh -m1 -o 'NCCL_TCPXR_GPU_BUFFERS=1 with NCCL_ALLOC_P2P_NET_LL_BUFFERS=1[^.]*' $A/user-ll-gpu | head -1)"
mps_on
rounds 2 2 sendrecv "c108 c104 socket" -b 8 -e 64K -f 2 -n 1000 -w 200
mps_off
el done
