#!/bin/bash
# run126 on one GPU (nvidia-h200, 16 cores): 32f057a, the session's final code. Issue 14's table
# again (all_reduce and sendrecv 8 B - 1 GiB, NCCL Socket default, 1x1, 2x2, 4x4 and tcpxr in one
# run, 20 iterations and 5 warm-up, under MPS), a second sample beside run 117's. The GPU checks
# (test binaries with CUDA_DEVICE_MAX_CONNECTIONS=1 and under MPS, 256 idle connections), and GPU
# buffers through NCCL with every collective, with one hardware queue and under MPS.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run126.sh)
R=${OUT:-/tmp/out}; A=/tmp/run126; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run126.tgz -C /tmp run126; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt dist/old/commit.txt; } > $A/machine.txt 2>&1
NT=ncclTests/nccl-tests/build
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
gt(){ for t in gpu_hazard gpu gpu_tcpx; do echo "== $t"; timeout 100 dist/deps/$t --test-threads=1 --nocapture; echo "== $t rc=$?"; done; }
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_DEVICE_MAX_CONNECTIONS=1; gt ) > $A/gpu-tests-1queue.txt 2>&1
grep -E "^== |test result" $A/gpu-tests-1queue.txt | sed 's/^/1queue /' | tee -a $A/steps.txt
P=$(mktemp -d /tmp/mpsXXXX)
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_MPS_PIPE_DIRECTORY=$P CUDA_MPS_LOG_DIRECTORY=$P
  nvidia-cuda-mps-control -d; sleep 1; gt; echo quit | nvidia-cuda-mps-control; sleep 2 ) > $A/gpu-tests-mps.txt 2>&1
grep -E "^== |test result" $A/gpu-tests-mps.txt | sed 's/^/mps /' | tee -a $A/steps.txt
timeout 60 dist/deps/idle --nocapture > $A/idle-256.txt 2>&1; el "idle rc=$? $(grep connections $A/idle-256.txt)"
wait $B; el "$(cat $A/nccl-tests-build.txt)"
timeout 300 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 20 --warmup 5 --min 8 --max 1G --timeout 200 --out $A/table --configs socket,socket-1x1,socket-2x2,socket-4x4,tcpxr-host > $A/table.log 2>&1; el "table rc=$?"
grep -h "I/O pool\|MIN_NCHANNELS\|Channel 0[0-9]/[0-9]* : 0 1\|tuner" $A/table/logs/*tcpxr* | sed 's/^[^]]*\] //' | sort | uniq -c | head -20 | tee -a $A/steps.txt
b=$(( $(date +%s)-T0 ))
timeout $(left $((b + 60))) python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir dist --ops all_reduce,sendrecv,broadcast,reduce,all_gather,reduce_scatter,alltoall --iters 3 --warmup 1 --max 8M --timeout 30 --out $A/onequeue --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"; b=$((b + 60))
timeout $(left $((b + 60))) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --ops all_reduce,sendrecv,broadcast,reduce,all_gather,reduce_scatter,alltoall --iters 3 --warmup 1 --max 8M --timeout 30 --out $A/gpu-mps --configs tcpxr-gpu > $A/gpu-mps.log 2>&1; el "gpu-mps rc=$?"; b=$((b + 60))
