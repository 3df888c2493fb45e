#!/bin/bash
# run267 (a 2-GPU host, 32 cores; 2026-11-27, thirtieth session): item 4. Run 266: writer threads'
# copies halve when the copy engine reads each piece right after it is written (not so with a
# lone writer, run 265, nor with the copy engine reading memory no CPU writes, run 264). If that
# is what slows the I/O threads with GPU buffers, copying a receive into GPU memory later, once
# its bounce lines have left the writer's cache, should lower the I/O threads' copy samples.
# dist/c23 = c2783b9e + dist/exp-copy-delay.patch: TCPXR_EXP_COPY_DELAY_US=D queues a receive's
# copy only D us after it is first seen complete. 512 MiB sendrecv, 2 ranks one per GPU: host
# buffers, GPU buffers with D = 0, 50, 150, 400, then GPU D=0 and host again; perf as run 263.
cd "$(dirname "$0")/.."; A=/tmp/run267; source dist/common.sh
start_run; echo "c23: $(cat dist/c23/commit.txt)" >> $A/machine.txt
{ echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled) defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag)"; grep -i huge /proc/meminfo; } >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
PROF=$PWD/dist/prof; PERF="env LD_LIBRARY_PATH=$PROF/lib $PROF/perf"
prof(){ local name=$1 buf=$2; shift 2
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET CUDA_VISIBLE_DEVICES=0,1
             NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/c23:$LD_LIBRARY_PATH NCCL_TCPXR_STATS=1)
  case $buf in gpu) env+=(NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1);; host) env+=(NCCL_TCPXR_GPU_BUFFERS=0);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 $PERF record -F 499 -a -q -o /tmp/$name.data -- mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/sendrecv_perf -b 512M -e 512M -n 120 -w 10 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{print "time_us", $6, "busbw", $8}' $A/$name.log)"
  $PERF report -i /tmp/$name.data --stdio -n --sort comm,dso,sym --percent-limit 0.1 > $A/$name.sym.txt 2>&1
  el "$name io copies: $(grep -E '_copy_to_iter|_copy_from_iter' $A/$name.sym.txt | grep tcpxr-io | awk '{n[$NF]+=$2} END{for(k in n) printf "%s %d ", k, n[k]}')"
  rm -f /tmp/$name.data; }
prof host1 host; prof d0 gpu; prof d50 gpu TCPXR_EXP_COPY_DELAY_US=50; prof d150 gpu TCPXR_EXP_COPY_DELAY_US=150
prof d400 gpu TCPXR_EXP_COPY_DELAY_US=400; prof d0b gpu; prof host2 host
el done
