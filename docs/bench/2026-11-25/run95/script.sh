#!/bin/bash
# run95 on one GPU (nvidia-h200, 16 cores): where tcpxr-bench latency's 2.6 ms p99 at 128-192 KiB
# (run 92) comes from. The library of the new commit (dist): for 128 KiB, 192 KiB, 256 KiB, the
# kernel's TCP counters around tcpxr-bench latency, with the socket buffers left to the
# kernel's autotuning (default) and with NCCL_TCPXR_SOCKET_SNDBUF/RCVBUF=4194304; then NCCL
# all_reduce and sendrecv 128 KiB - 4 MiB and bulk 128 MiB - 1 GiB under MPS, both ways, the
# counters around each.
cd "$(dirname "$0")/../../../.."  # the repository root (the script ran as dist/run95.sh)
R=${OUT:-/tmp/out}; A=/tmp/run95; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/run95.tgz -C /tmp run95; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | sort | uniq -c; }
trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; lscpu | grep "Model name"; cat dist/commit.txt; sysctl net.ipv4.tcp_rmem net.ipv4.tcp_wmem net.core.rmem_max net.core.wmem_max net.ipv4.tcp_adv_win_scale; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the
# project commits no script that builds nccl-tests. ncclTests/README.md says how.)
B=$!
# The kernel's TCP counters: snap before, the ones that moved after (dist/tcpctr.py, kept beside
# this copy as tcpctr.py).
snap(){ python3 docs/bench/2026-11-25/run95/tcpctr.py snap $A/.ctr; }
cnt(){ python3 docs/bench/2026-11-25/run95/tcpctr.py diff $A/.ctr; }
for bufs in auto 4M; do
  for s in 128K 192K 256K; do
    snap
    if [ $bufs = auto ]; then timeout 30 dist/tcpxr-bench latency --size $s --iters 5000 2>&1 | grep -v INFO
    else NCCL_TCPXR_SOCKET_SNDBUF=4194304 NCCL_TCPXR_SOCKET_RCVBUF=4194304 timeout 30 dist/tcpxr-bench latency --size $s --iters 5000 2>&1 | grep -v INFO; fi
    echo "   counters ($bufs, $s): $(cnt)"
  done
done > $A/bench-latency.txt 2>&1; el "latency done"
wait $B; el "$(cat $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build
m(){ out=$1; lim=$2; shift 2; snap; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 50 --warmup 10 --min 128K --max 4M --timeout 60 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$? $(cnt)"; }
bulk(){ out=$1; lim=$2; shift 2; snap; timeout $(left $lim) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir dist --iters 10 --warmup 3 --min 128M --max 1G --timeout 90 --out $A/$out "$@" > $A/$out.log 2>&1; el "$out rc=$? $(cnt)"; }
BUF="--env NCCL_TCPXR_SOCKET_SNDBUF=4194304 --env NCCL_TCPXR_SOCKET_RCVBUF=4194304"
b=$(( $(date +%s)-T0 ))
m s1 $((b + 14)) --configs socket-1x1; b=$((b + 14))
for i in 1 2 3; do
  m d$i $((b + 8)) --configs tcpxr-host; b=$((b + 8))
  m buf$i $((b + 8)) --configs tcpxr-host $BUF; b=$((b + 8))
done
m s2 $((b + 14)) --configs socket-1x1; b=$((b + 14))
bulk bd $((b + 20)) --configs tcpxr-host; b=$((b + 20))
bulk bbuf $((b + 20)) --configs tcpxr-host $BUF; b=$((b + 20))
