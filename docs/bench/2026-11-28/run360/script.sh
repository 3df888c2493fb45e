#!/bin/bash
# run360 (GPU 0 of a 2-GPU host; session 44): main's head (dist/c60, commit in commit.txt: RMA's
# GPU-memory fixes, the tuner's pool cap in band rows, TCPX dead-peer detection):
#  1. the GPU test binaries of c60 (rma with its three new GPU tests; gpu, gpu_copy_in,
#     gpu_demote, gpu_hazard, gpu_tcpx with the TCPX emulator), TCPXR_REQUIRE_GPU=1: default,
#     CUDA_DEVICE_MAX_CONNECTIONS=1, under MPS;
#  2. checks on c60: 3 and 4 ranks on GPU 0 under MPS, host and GPU buffers, NCCL's choice, Ring,
#     Tree; 4 ranks with CUDA_DEVICE_MAX_CONNECTIONS=1; all_reduce and sendrecv, -c 1;
#  3. the tuner's pool cap in band rows (9e7e14d5): 4 ranks on GPU 0 under MPS with 2 I/O threads
#     a rank (NCCL_TCPXR_IO_THREADS=2, the pool the cap is for), all_reduce, all_gather and
#     reduce_scatter 32 KiB-4 MiB, 20 iterations, c59 (before) and c60 alternated twice: NCCL's
#     algorithm, protocol and channels per size (TUNING) and the times.
cd "$(dirname "$0")/.."; A=/tmp/run360; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c59: $(cat dist/c59/commit.txt); c60: $(cat dist/c60/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; ( [ -x $NT/sendrecv_perf ] || tests_228 ) & BUILD=$!
export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/c60/libtcpx_emu.so
gt(){ local mode=$1; shift
  for t in rma gpu gpu_copy_in gpu_demote gpu_hazard gpu_tcpx; do
    env "$@" timeout 150 dist/c60/deps/$t --include-ignored --test-threads=1 > $A/$t-$mode.txt 2>&1
    el "$t $mode rc=$? $(grep -h '^test result' $A/$t-$mode.txt)"; grep -h 'FAILED\|panicked' $A/$t-$mode.txt | head -5 | tee -a $A/steps.txt
  done; }
gt default CUDA_VISIBLE_DEVICES=0
gt 1queue CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1
mps_on; gt mps CUDA_VISIBLE_DEVICES=0; mps_off
unset TCPXR_REQUIRE_GPU TCPX_EMU_LIB
wait $BUILD; NT=/tmp/nt-2.28.3/build; el "nccl-tests ready: $(ls $NT | wc -l) files"
checks dist/c60
for pass in 1 2; do for lib in c59 c60; do
  o=$A/tune-$lib-$pass
  timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/$lib --one-gpu --mps --ranks 4 --ops all_reduce,all_gather,reduce_scatter --min 32K --max 4M --iters 20 --warmup 5 --timeout 45 \
    --configs tcpxr-host --env NCCL_TCPXR_IO_THREADS=2 --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING --out $o > $o.txt 2>&1
  grep -h "Bytes -> Algo" $o/logs/*.tcpxr-host.* | sed 's/^.*NCCL INFO //' | sort | uniq -c > $o-choices.txt
  el "tune $lib pass $pass rc=$? $(grep -c ' ok, ' $o.txt) ok; $(awk -v OFS=: '{print $2,$3,$7,$9,$10}' $o-choices.txt | sort -u | paste -sd' ')"
  rm -rf $o/logs
done; done
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
