#!/bin/bash
# run151: does the "parallel pool" rule decide right at 4 and 8 ranks on 16 cores? (issue 34 item 5)
# 4 and 8 ranks on GPU 0 as NCCL hosts under MPS, host buffers, all_reduce and sendrecv 8 B-256 MiB,
# 10 iterations: tcpxr's defaults (every process sees 16 cores: handoff 0, idle inline 32 KiB,
# spin 200 us) against the few-cores values (512 KiB, 512 KiB, 0), alternated P F P F.
cd "$(dirname "$0")/.."; A=/tmp/run151; source dist/common.sh
fin(){ tar czf $R/run151.tgz -C /tmp run151; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
build_tests
mps_on
FEW=(NCCL_TCPXR_HANDOFF_BYTES=524288 NCCL_TCPXR_INLINE_IDLE_BYTES=524288 NCCL_TCPXR_IO_SPIN_US=0)
export MINB=8 MAXB=256M STEP=4 ITERS=10
for np in 4 8; do for op in all_reduce sendrecv; do for rep in 1 2; do
  nt p$np-$op-P$rep dist $np $op host - NCCL_TCPXR_STATS=0
  nt p$np-$op-F$rep dist $np $op host - NCCL_TCPXR_STATS=0 "${FEW[@]}"
done; done; done
nt p8-all_reduce-S dist 8 all_reduce socket -
mps_off
