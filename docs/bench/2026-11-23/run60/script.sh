#!/bin/bash
# run60 on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: issue 14's mid
# band against the I/O pool's wake-up. NCCL_TCPXR_IO_SPIN_US: how long one idle I/O thread keeps
# looking for work before it sleeps (0: sleeps at once, the behaviour before this commit).
# 1) tcpxr-bench latency (ping-pong through the plugin beside plain TCP) and nccl (4 comms, 8 in
#    flight) for spin 0 / 50 / 200 / 1000; 2) nccl-tests 8 B - 4 MiB, 50 iterations, spin 0 / 200 /
#    1000 alternated three times, Socket default, 1x1, 2x2, 4x4 beside; 3) bulk 128 MiB - 1 GiB spin
#    0 / 200 and Socket 2x2; 4) GPU buffers (device unpack) with one hardware queue and under MPS.
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/run60; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run60.tgz -C /tmp run60; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -60; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; lscpu | grep 'Model name'; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
for s in 128K 512K; do for sp in 0 50 200 1000; do
  echo "== latency $s NCCL_TCPXR_IO_SPIN_US=$sp"; NCCL_TCPXR_IO_SPIN_US=$sp timeout 30 dist/tcpxr-bench latency --size $s --iters 5000 2>&1 | grep -v INFO
done; done > $A/bench-latency.txt
echo "== latency 128K NCCL_TCPXR_IO_THREADS=0" >> $A/bench-latency.txt; NCCL_TCPXR_IO_THREADS=0 timeout 30 dist/tcpxr-bench latency --size 128K --iters 5000 2>&1 | grep -v INFO >> $A/bench-latency.txt
for sp in 0 200; do echo "== nccl NCCL_TCPXR_IO_SPIN_US=$sp"; NCCL_TCPXR_IO_SPIN_US=$sp timeout 60 dist/tcpxr-bench nccl --comms 4 --sizes 128K,512K --seconds 1 2>&1 | grep -v INFO; done > $A/bench-nccl.txt
el "bench done"; wait; el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
mid(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 50 --warmup 10 --min 8 --max 4M --timeout 60 --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
bulk(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
mid s 150 --configs socket,socket-1x1,socket-2x2,socket-4x4
for i in 1 2 3; do
  mid sp0-$i $((150 + 50 * i - 30)) --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_US=0
  mid sp200-$i $((150 + 50 * i - 15)) --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_US=200
  mid sp1000-$i $((150 + 50 * i)) --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_US=1000
done
bulk b0 340 --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_US=0
bulk b200 380 --configs tcpxr-host --env NCCL_TCPXR_IO_SPIN_US=200
bulk bs 430 --configs socket-2x2
timeout $(left 490) python3 ncclTests/run_nccl_tests.py --one-gpu --nccl-tests $NT --plugin-dir $P --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/onequeue --configs tcpxr-gpu,tcpxr-host --env CUDA_DEVICE_MAX_CONNECTIONS=1 > $A/onequeue.log 2>&1; el "onequeue rc=$?"
timeout $(left 550) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 5 --warmup 2 --max 8M --timeout 40 --out $A/gpu-mps --configs tcpxr-gpu > $A/gpu-mps.log 2>&1; el "gpu-mps rc=$?"
