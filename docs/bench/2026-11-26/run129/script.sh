#!/bin/bash
# run129 on one GPU (nvidia-h200, 16 cores): where the time goes in an 8 B all_reduce. tcpxr (dist)
# and NCCL Socket default, two ranks as two NCCL hosts on GPU 0 under MPS, all_reduce of 8 B
# repeated (nccl-tests -b 8 -e 8 -n 20000 -c 0): plain timing (alternated twice), then each rank
# under `strace -c -f` for syscall counts. dist/prof (not
# committed): /usr/bin/strace of the CPU host with the libraries ldd lists for it,
# less libc.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run129.sh;
# dist/zc/ held zc.c and cpu_sample.py, kept in docs/bench/2026-11-26/run127/zc/)
R=${OUT:-/tmp/out}; A=/tmp/run129; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ rm -f $A/*.data; tar czf $R/run129.tgz -C /tmp run129; cat $A/steps.txt; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; cat /proc/sys/kernel/perf_event_paranoid; cat /sys/devices/system/clocksource/clocksource0/current_clocksource /sys/devices/system/clocksource/clocksource0/available_clocksource; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
PROF=$PWD/dist/prof
P=$(mktemp -d /tmp/mpsXXXX); export CUDA_MPS_PIPE_DIRECTORY=$P CUDA_MPS_LOG_DIRECTORY=$P
nvidia-cuda-mps-control -d; sleep 1
NT=$PWD/ncclTests/nccl-tests/build
common="NCCL_NVLS_ENABLE=0 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_DEBUG=WARN"
tcpxr="NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/libnccl-net-tcpxr.so NCCL_NET_GDR_LEVEL=LOC NCCL_TCPXR_TRANSPORT=socket"
socket="NCCL_NET=Socket NCCL_NET_PLUGIN=none"
# $1 name, $2 per-rank prefix (perf/strace or nothing), rest: env
go(){ name=$1; pre=$2; shift 2
  timeout 60 env "$@" mpirun --allow-run-as-root --bind-to none -np 2 -x LD_LIBRARY_PATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY $(for kv in "$@"; do echo -n "-x ${kv%%=*} "; done) \
    sh -c "NCCL_HOSTID=tcpxr-one-gpu-rank\$OMPI_COMM_WORLD_RANK exec $pre \"\$@\"" sh $NT/all_reduce_perf -b 8 -e 8 -n 20000 -w 500 -c 0 -g 1 > $A/$name.txt 2>&1
  el "$name rc=$? $(grep -E '^ +8 ' $A/$name.txt | tr -s ' ')"; }
for i in 1 2; do for cfg in tcpxr socket; do eval "envs=(\$common \$$cfg)"; go $cfg-plain$i "" "${envs[@]}"; done; done
eval "envs=(\$common \$tcpxr)"; go tcpxr-nopool "" "${envs[@]}" NCCL_TCPXR_IO_THREADS=0
for cfg in tcpxr socket; do
  eval "envs=(\$common \$$cfg)"
  go $cfg-strace "env LD_LIBRARY_PATH=$PROF/lib $PROF/strace -f -c -o $A/$cfg.strace.\$OMPI_COMM_WORLD_RANK.txt env LD_LIBRARY_PATH=\$LD_LIBRARY_PATH" "${envs[@]}"



done
echo quit | nvidia-cuda-mps-control
