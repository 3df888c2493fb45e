#!/bin/bash
# run146: issue 30's GPU side and issue 29's tools at 3 ranks, on main after the lifetimes merge:
# the GPU test binaries with one hardware queue and under MPS; GPU buffers at 3 ranks (Tree,
# NCCL's choice) with one queue and under MPS; the hazard check at 3 ranks; a 2-minute soak of
# 3 ranks under MPS.
cd "$(dirname "$0")/.."; A=/tmp/run146; source dist/common.sh
fin(){ tar czf $R/run146.tgz -C /tmp run146; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
build_tests
gt(){ for t in gpu_hazard gpu gpu_tcpx device_unpack_tcpx device_unpack_peers; do echo "== $t"; timeout 100 dist/deps/$t --test-threads=1 --nocapture; echo "== $t rc=$?"; done; }
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_DEVICE_MAX_CONNECTIONS=1; gt ) > $A/gpu-tests-1queue.txt 2>&1
grep -E "^== |test result|WARN|RESULT" $A/gpu-tests-1queue.txt | sed 's/^/1queue /' | tee -a $A/steps.txt
ITERS=2 nt q1-3-gpu-tree dist/new 3 all_reduce gpu Tree CUDA_DEVICE_MAX_CONNECTIONS=1
mps_on
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench; gt ) > $A/gpu-tests-mps.txt 2>&1
grep -E "^== |test result|WARN|RESULT" $A/gpu-tests-mps.txt | sed 's/^/mps /' | tee -a $A/steps.txt
nt gpu-3-tree dist/new 3 all_reduce gpu Tree
nt gpu-4-default dist/new 4 all_reduce gpu -
timeout 200 python3 ncclTests/soak.py --one-gpu --mps --ranks 3 --ops all_reduce,all_gather,sendrecv --configs tcpxr-host,tcpxr-gpu --nccl-tests $NT --plugin-dir dist --max 32M --duration 120 --warmup-seconds 30 --out $A/soak3 > $A/soak3.log 2>&1; el "soak ranks=3 rc=$? $(tail -3 $A/soak3.log | tr '\n' ' ')"
mps_off
timeout 330 python3 ncclTests/hazard_check.py --nccl-tests $NT --plugin-dir dist --ranks 3 --out $A/hazard3 > $A/hazard3.log 2>&1; el "hazard ranks=3 rc=$? $(tail -6 $A/hazard3.log | tr '\n' ' ')"
