#!/bin/bash
# run263 (a 2-GPU host, 32 cores; 2026-11-27, thirtieth session): item 4. Run 262's profile of a
# 512 MiB sendrecv at 2 ranks one per GPU: with GPU buffers the I/O threads' kernel copies cost
# more CPU for the same bytes (_copy_to_iter 1.54x host buffers' samples, _copy_from_iter 1.24x).
# Receives land in the bounce arena (anonymous mmap, 4 KiB pages, 16 MiB a comm) instead of NCCL's
# host buffer. Is it the pages? dist/c22 = 682b66f3 + dist/exp-huge.patch: TCPXR_EXP_HUGE=1
# madvises each bounce section MADV_HUGEPAGE. Host buffers, GPU buffers, GPU buffers with huge
# pages, then the same three reversed; perf (499 Hz, system-wide) over each.
cd "$(dirname "$0")/.."; A=/tmp/run263; source dist/common.sh
start_run; echo "c22: $(cat dist/c22/commit.txt)" >> $A/machine.txt
{ echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled) defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag)"; grep -i huge /proc/meminfo; } >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
PROF=$PWD/dist/prof; PERF="env LD_LIBRARY_PATH=$PROF/lib $PROF/perf"
prof(){ local name=$1 buf=$2; shift 2
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET CUDA_VISIBLE_DEVICES=0,1
             NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/c22:$LD_LIBRARY_PATH NCCL_TCPXR_STATS=1)
  case $buf in gpu) env+=(NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1);; host) env+=(NCCL_TCPXR_GPU_BUFFERS=0);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 $PERF record -F 499 -a -q -o /tmp/$name.data -- mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/sendrecv_perf -b 512M -e 512M -n 200 -w 10 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{print "time_us", $6, "busbw", $8}' $A/$name.log) $(grep -m2 -ho 'EXP huge.*' $A/$name.log | paste -sd' ')"
  $PERF report -i /tmp/$name.data --stdio -n --sort comm,dso,sym --percent-limit 0.1 > $A/$name.sym.txt 2>&1
  el "$name io copies: $(grep -E '_copy_to_iter|_copy_from_iter' $A/$name.sym.txt | grep tcpxr-io | awk '{n[$NF]+=$2} END{for(k in n) printf "%s %d ", k, n[k]}')"
  rm -f /tmp/$name.data; }
prof host1 host; prof gpu1 gpu; prof huge1 gpu TCPXR_EXP_HUGE=1
prof huge2 gpu TCPXR_EXP_HUGE=1; prof gpu2 gpu; prof host2 host
el done
