#!/bin/bash
# run364 (GPU 0 of a 2-GPU host; session 44): main's d33ec65c (dist/c64: RecvStage's waiting jobs
# as a named struct, one movement reading per pass): the `gpu` test binary (the unpack stage's
# held-launch test among its 9), TCPXR_REQUIRE_GPU=1, by default, CUDA_DEVICE_MAX_CONNECTIONS=1
# and under MPS; then the correctness set on c64 (checks, dist/common.sh).
cd "$(dirname "$0")/.."; A=/tmp/run364; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c64: $(cat dist/c64/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; ( [ -x $NT/sendrecv_perf ] || tests_228 ) & BUILD=$!
export TCPXR_REQUIRE_GPU=1
g(){ local mode=$1; shift; env "$@" timeout 120 dist/c64/deps/gpu --include-ignored --test-threads=1 > $A/gpu-$mode.txt 2>&1
  el "gpu $mode rc=$? $(grep -h '^test result' $A/gpu-$mode.txt)"; }
g default CUDA_VISIBLE_DEVICES=0; g 1queue CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1
mps_on; g mps CUDA_VISIBLE_DEVICES=0; mps_off; unset TCPXR_REQUIRE_GPU
wait $BUILD; NT=/tmp/nt-2.28.3/build
checks dist/c64
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
