#!/bin/bash
# run264 (a 2-GPU host, 32 cores; 2026-11-27, thirtieth session): item 4. Runs 262-263: with GPU
# buffers the I/O threads' kernel copies cost 1.2-1.6x the CPU a byte of host buffers', in both
# directions, and huge bounce pages change nothing. Do the copy engine's host-to-GPU copies slow
# the CPU's copies? Host buffers' sendrecv (512 MiB, 2 ranks one per GPU, 682b66f3's library)
# alone, and beside dist/bg_h2d.py on each GPU (16 MiB copies from pinned memory the CPU does not
# touch: about 13 GiB/s with a 0.9 ms pause, flat out with none), then GPU buffers alone; perf
# (499 Hz, system-wide) over each, the I/O threads' copy samples per run.
cd "$(dirname "$0")/.."; A=/tmp/run264; source dist/common.sh
start_run; echo "c21s: $(cat dist/c21s/commit.txt)" >> $A/machine.txt
{ echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled) defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag)"; grep -i huge /proc/meminfo; } >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
PROF=$PWD/dist/prof; PERF="env LD_LIBRARY_PATH=$PROF/lib $PROF/perf"
prof(){ local name=$1 buf=$2 bg=$3; shift 3
  local pids=(); if [ "$bg" != - ]; then for g in 0 1; do timeout 40 python3 dist/bg_h2d.py $g $bg 30 > $A/$name.bg$g.txt 2>&1 & pids+=($!); done; sleep 4; fi
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET CUDA_VISIBLE_DEVICES=0,1
             NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/c21s:$LD_LIBRARY_PATH NCCL_TCPXR_STATS=1)
  case $buf in gpu) env+=(NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1);; host) env+=(NCCL_TCPXR_GPU_BUFFERS=0);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 $PERF record -F 499 -a -q -o /tmp/$name.data -- mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/sendrecv_perf -b 512M -e 512M -n 200 -w 10 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{print "time_us", $6, "busbw", $8}' $A/$name.log)"
  $PERF report -i /tmp/$name.data --stdio -n --sort comm,dso,sym --percent-limit 0.1 > $A/$name.sym.txt 2>&1
  el "$name io copies: $(grep -E '_copy_to_iter|_copy_from_iter' $A/$name.sym.txt | grep tcpxr-io | awk '{n[$NF]+=$2} END{for(k in n) printf "%s %d ", k, n[k]}')"
  rm -f /tmp/$name.data; for p in "${pids[@]}"; do wait $p; done; el "$name bg: $(cat $A/$name.bg*.txt 2>/dev/null | grep -h '^bg' | paste -sd';')"; }
prof host1 host -; prof bg13a host 0.9; prof bgmax host 0; prof bg13b host 0.9; prof gpu1 gpu -; prof host2 host -
el done
