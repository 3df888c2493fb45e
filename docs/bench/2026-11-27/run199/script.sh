#!/bin/bash
# run199 (a 2-GPU host; 2026-11-27, twenty-second session): run 198 found 1af520f's all_gather
# 8 B-64 KiB about 2 us slower than 8c46bbd's in all three alternations while reduce_scatter (the
# same messages at 2 ranks) and sendrecv were not. Strict A/B: 8c46bbd (dist/head) and 1af520f
# (dist/new) alternated four times, all_gather, reduce_scatter and sendrecv 32 B-64 KiB, 2 ranks one
# per GPU, -n 200 -w 20 -c 0, NCCL_DEBUG=WARN, no NCCL_TCPXR_STATS.
cd "$(dirname "$0")/.."; A=/tmp/run199; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1; trap "tar cJf $R/run199.tar.xz -C /tmp run199" EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/new/commit.txt dist/head/commit.txt; uptime; } > $A/machine.txt 2>&1
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 32
one(){ local name=$1 op=$2 lib=$3
  local xs=(); for kv in CUDA_VISIBLE_DEVICES=0,1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b 32 -e 64K -f 4 -n 200 -w 20 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
for i in 1 2 3 4; do for op in all_gather reduce_scatter sendrecv; do
  if [ $((i % 2)) = 1 ]; then one r$i-$op-old $op dist/head; one r$i-$op-new $op dist/new
  else one r$i-$op-new $op dist/new; one r$i-$op-old $op dist/head; fi
done; done
python3 dist/med.py $A/steps.txt > $A/medians.txt; el "medians rc=$?"
el done
