#!/bin/bash
# GPU run U on one GPU (nvidia-h200 or H100, 16 cores), two ranks as two NCCL hosts under MPS:
# fused NICs under stock NCCL 2.28.3. The loopback stands for two devices (lo 127.0.0.1, lo.2
# 127.0.0.2, NCCL_TCPXR_LOOPBACK_DEVICES=2). Variants: one device (baseline); two devices with
# NCCL's automatic fusion (NCCL_NET_MERGE_LEVEL unset: PORT); two with NCCL_NET_FORCE_MERGE=lo,lo.2;
# two kept apart (NCCL_NET_MERGE_LEVEL=LOC). all_reduce and sendrecv 8 B - 256 MiB, host buffers.
# During a long sendrecv on the fused device: established sockets per address (ss).
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runU; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runU.tgz -C /tmp runU; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; id -u; ip -br addr; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 20 --warmup 5 --max 256M --timeout 100 --out $A/$out --configs tcpxr-host --env NCCL_DEBUG_SUBSYS=GRAPH "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run one 120
run auto 220 --env NCCL_TCPXR_LOOPBACK_DEVICES=2
run force 320 --env NCCL_TCPXR_LOOPBACK_DEVICES=2 --env NCCL_NET_FORCE_MERGE=lo,lo.2
run apart 420 --env NCCL_TCPXR_LOOPBACK_DEVICES=2 --env NCCL_NET_MERGE_LEVEL=LOC
# Sockets per address while a fused-device sendrecv runs (its own short run, in the background).
( timeout $(left 520) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 400 --warmup 5 --min 256M --max 256M --ops sendrecv --timeout 90 --out $A/ss --configs tcpxr-host --env NCCL_TCPXR_LOOPBACK_DEVICES=2 --env NCCL_NET_FORCE_MERGE=lo,lo.2 > $A/ss.log 2>&1 ) &
for i in 1 2 3 4 5 6 7 8 9 10; do sleep 3; cp /proc/net/tcp $A/proc-net-tcp-$i.txt; ss -tn state established > $A/ss-$i.txt 2>&1; n=$(grep -c 127.0.0.2 $A/ss-$i.txt); [ "$n" -gt 0 ] && break; done
awk 'NR>1 {split($3,l,":"); split($4,p,":"); print l[1]" -> "p[1]}' $A/ss-$i.txt | sort | uniq -c > $A/ss-by-address.txt
el "ss sample $i: $(tr '\n' ';' < $A/ss-by-address.txt)"
wait; el "ss run done"
grep -h -E "Made vNic|fused device|TOPO/NET|NCCL's hints|via NET/tcpxr|Using network|devices \[|NCCL_NET_FORCE|Force-fusing|Could not|merg" -r $A --include=*.log --include=*.txt | sort | uniq -c | sort -rn | head -60 > $A/evidence.txt
