#!/bin/bash
# GPU run G on nvidia-h200-x2: the defaults of 14e87f4 (inline-when-idle auto, p2p chunk 512 KiB).
# Issue 16's table (two GPUs, every Socket tuning, tcpx emulator, one hardware queue, torch), Socket
# 2x2 with the same p2p chunk, and issue 14's setting: one GPU under MPS on 16 cores.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runG; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runG.tgz -C /tmp runG; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
B=$!
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_VISIBLE_DEVICES=0
  for t in gpu gpu_tcpx; do echo "== $t"; timeout 100 dist/deps/$t --test-threads=1; echo "== $t rc=$?"; done ) > $A/gpu-tests.txt 2>&1
grep -E "^== |test result" $A/gpu-tests.txt | tee -a $A/steps.txt
wait $B; el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
el "two GPUs, 6 configs, 8 B - 1 GiB"
timeout $(left 200) python3 ncclTests/run_nccl_tests.py --mpirun --nccl-tests $NT --plugin-dir $P --max 1G --iters 5 --warmup 2 --timeout 100 --out $A/two-gpu > $A/two-gpu.log 2>&1; el "rc=$?"
timeout $(left 235) env TCPX_EMU_MODE=gpu NCCL_TCPXR_TCPX_LIB=$PWD/dist/libtcpx_emu.so python3 ncclTests/run_nccl_tests.py --mpirun --nccl-tests $NT --plugin-dir $P --configs tcpxr-tcpx --max 64M --iters 5 --warmup 2 --timeout 50 --out $A/two-gpu-tcpx > $A/two-gpu-tcpx.log 2>&1; el "rc=$?"
timeout $(left 265) python3 ncclTests/run_nccl_tests.py --mpirun --nccl-tests $NT --plugin-dir $P --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 --max 1G --iters 5 --warmup 2 --timeout 50 --out $A/two-gpu-1queue > $A/two-gpu-1queue.log 2>&1; el "rc=$?"
timeout $(left 285) python3 ncclTests/run_nccl_tests.py --mpirun --nccl-tests $NT --plugin-dir $P --configs socket-1x1,socket-2x2 --ops sendrecv --min 64K --env NCCL_P2P_NET_CHUNKSIZE=524288 --max 1G --iters 5 --warmup 2 --timeout 40 --out $A/two-gpu-socket-p2p512k > $A/two-gpu-socket-p2p512k.log 2>&1; el "rc=$?"
el "torch, two GPUs"
timeout $(left 315) python3 ncclTests/torch_bench.py --plugin-dir $P --configs tcpxr-host,tcpxr-gpu --max 512M --iters 5 --warmup 2 --out $A/torch > $A/torch.log 2>&1; el "rc=$?"
el "one GPU, MPS, 16 cores (taskset 0-15), 6 configs"
CUDA_VISIBLE_DEVICES=0 timeout $(left 470) taskset -c 0-15 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --max 1G --iters 5 --warmup 2 --timeout 100 --out $A/onegpu-mps16 > $A/onegpu-mps16.log 2>&1; el "rc=$?"
