#!/bin/bash
# GPU run C on nvidia-h200-x2: GPU tests (gpu_hazard with the NCCL-like event after the kernel),
# issue 16's two-GPU table with the auto hand-off, tcpx/one-queue/torch rows, then the issue-14
# setting: one GPU under MPS restricted to 16 cores (taskset 0-15), every Socket tuning.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runC; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runC.tgz -C /tmp runC; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
el "build nccl-tests (background)"
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
B=$!
el "GPU tests"
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_VISIBLE_DEVICES=0
  for t in gpu_hazard gpu gpu_tcpx; do echo "== $t"; timeout 150 dist/deps/$t --test-threads=1 --nocapture; echo "== $t rc=$?"; done ) > $A/gpu-tests.txt 2>&1
grep -E "^== |^test |RESULT|message|SKIPPED|panicked" $A/gpu-tests.txt | tee -a $A/steps.txt
el "tcpxr-bench nccl, defaults (auto hand-off), 8 and 16 I/O threads"
( for io in auto 16; do echo "== IO_THREADS=$io"; NCCL_TCPXR_IO_THREADS=$io timeout 20 dist/tcpxr-bench nccl --comms 4 --sizes 128K,512K --seconds 1; done ) > $A/bench-nccl.txt 2>&1
wait $B; el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
el "two GPUs, 6 configs, 8 B - 1 GiB"
timeout $(left 230) python3 ncclTests/run_nccl_tests.py --mpirun --nccl-tests $NT --plugin-dir $P --max 1G --iters 5 --warmup 2 --timeout 120 --out $A/two-gpu > $A/two-gpu.log 2>&1; el "rc=$?"
timeout $(left 265) env TCPX_EMU_MODE=gpu NCCL_TCPXR_TCPX_LIB=$PWD/dist/libtcpx_emu.so python3 ncclTests/run_nccl_tests.py --mpirun --nccl-tests $NT --plugin-dir $P --configs tcpxr-tcpx --max 64M --iters 5 --warmup 2 --timeout 60 --out $A/two-gpu-tcpx > $A/two-gpu-tcpx.log 2>&1; el "rc=$?"
timeout $(left 305) python3 ncclTests/run_nccl_tests.py --mpirun --nccl-tests $NT --plugin-dir $P --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 --max 1G --iters 5 --warmup 2 --timeout 60 --out $A/two-gpu-1queue > $A/two-gpu-1queue.log 2>&1; el "rc=$?"
el "torch, two GPUs"
timeout $(left 340) python3 ncclTests/torch_bench.py --plugin-dir $P --configs tcpxr-host,tcpxr-gpu --max 512M --iters 5 --warmup 2 --out $A/torch > $A/torch.log 2>&1; el "rc=$?"
el "one GPU, MPS, 16 cores (taskset 0-15), 6 configs"
CUDA_VISIBLE_DEVICES=0 timeout $(left 520) taskset -c 0-15 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --max 1G --iters 5 --warmup 2 --timeout 100 --out $A/onegpu-mps16 > $A/onegpu-mps16.log 2>&1; el "rc=$?"
CUDA_VISIBLE_DEVICES=0 timeout $(left 575) taskset -c 0-15 python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --configs tcpxr-host --env NCCL_TCPXR_IO_THREADS=16 --min 128K --max 1G --iters 5 --warmup 2 --timeout 50 --out $A/onegpu-mps16-io16 > $A/onegpu-mps16-io16.log 2>&1; el "rc=$?"
