#!/bin/bash
# run78 on one GPU (nvidia-h200, 16 cores): where the time goes in the all_reduce band. 062fc1c's
# library (611a215's code) and Socket 1x1, two ranks as two NCCL hosts on GPU 0 under MPS, all_reduce of
# 512 KiB repeated (nccl-tests -b 512K -e 512K -n 3000 -c 0): each rank under `perf record`
# (perf 6.1 carried in dist/prof with its libraries), then per-thread and per-symbol reports; both
# ranks under `strace -c -f` for syscall counts. dist/prof (not committed): /usr/bin/perf and
# /usr/bin/strace of the CPU host (Debian 12, perf 6.1, strace 6.1) with the libraries `ldd` lists
# for them, less libc, libm, libstdc++ and libgcc_s, stripped.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/runNN.sh)
R=${OUT:-/tmp/out}; A=/tmp/run78; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
fin(){ rm -f $A/*.data; tar czf $R/run78.tgz -C /tmp run78; cat $A/steps.txt; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; cat /proc/sys/kernel/perf_event_paranoid; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
el "$(cat $A/nccl-tests-build.txt)"
PROF=$PWD/dist/prof; PERF="env LD_LIBRARY_PATH=$PROF/lib $PROF/perf"
$PERF --version >> $A/machine.txt 2>&1
P=$(mktemp -d /tmp/mpsXXXX); export CUDA_MPS_PIPE_DIRECTORY=$P CUDA_MPS_LOG_DIRECTORY=$P
nvidia-cuda-mps-control -d; sleep 1
NT=$PWD/ncclTests/nccl-tests/build
common="NCCL_NVLS_ENABLE=0 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_DEBUG=WARN"
tcpxr="NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/libnccl-net-tcpxr.so NCCL_NET_GDR_LEVEL=LOC NCCL_TCPXR_TRANSPORT=socket"
socket="NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1"
# $1 name, $2 per-rank prefix (perf/strace or nothing), rest: env
go(){ name=$1; pre=$2; shift 2
  timeout 60 env "$@" mpirun --allow-run-as-root --bind-to none -np 2 -x LD_LIBRARY_PATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY $(for kv in "$@"; do echo -n "-x ${kv%%=*} "; done) \
    sh -c "NCCL_HOSTID=tcpxr-one-gpu-rank\$OMPI_COMM_WORLD_RANK exec $pre \"\$@\"" sh $NT/all_reduce_perf -b 512K -e 512K -n 3000 -w 50 -c 0 -g 1 > $A/$name.txt 2>&1
  el "$name rc=$?"; }
for cfg in tcpxr socket; do
  eval "envs=(\$common \$$cfg)"
  go $cfg-plain "" "${envs[@]}"
  go $cfg-perf "$PERF record -F 4999 -q -o $A/$cfg.\$OMPI_COMM_WORLD_RANK.data -- env LD_LIBRARY_PATH=\$LD_LIBRARY_PATH" "${envs[@]}"
  for r in 0; do
    $PERF report -i $A/$cfg.$r.data --stdio --sort comm --percent-limit 0.5 > $A/$cfg.$r.comm.txt 2>&1
    $PERF report -i $A/$cfg.$r.data --stdio --sort comm,dso,sym --percent-limit 0.3 > $A/$cfg.$r.sym.txt 2>&1
  done
  go $cfg-strace "env LD_LIBRARY_PATH=$PROF/lib $PROF/strace -f -c -o $A/$cfg.strace.\$OMPI_COMM_WORLD_RANK.txt env LD_LIBRARY_PATH=\$LD_LIBRARY_PATH" "${envs[@]}"
done
echo quit | nvidia-cuda-mps-control
