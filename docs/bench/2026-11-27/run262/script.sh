#!/bin/bash
# run262 (a 2-GPU host, 32 cores: no 4-GPU kind was lent; 2026-11-27, thirtieth session): item 4, where a rank's time goes
# when sendrecv runs with GPU buffers. Run 260b: at 4 ranks one per GPU GPU buffers' sendrecv
# took 1.30-1.70x host buffers' time, chunks landed ~170 us later after their receive's post and
# NCCL's thread saw them later (6-11 us against 4-6); at 2 ranks 1.05-1.22x. A system-wide perf profile (dist/prof's
# perf, 499 Hz, no call graphs) over a 512 MiB sendrecv, host buffers then GPU buffers then host
# again, 2 ranks one per GPU, main 682b66f3 with its symbols (dist/c21s); per mode the samples
# by thread name and by thread and symbol.
cd "$(dirname "$0")/.."; A=/tmp/run262; source dist/common.sh
start_run; echo "c21s: $(cat dist/c21s/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
PROF=$PWD/dist/prof; PERF="env LD_LIBRARY_PATH=$PROF/lib $PROF/perf"
prof(){ local name=$1 buf=$2
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET CUDA_VISIBLE_DEVICES=0,1
             NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/c21s:$LD_LIBRARY_PATH NCCL_TCPXR_STATS=1)
  case $buf in gpu) env+=(NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1);; host) env+=(NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 $PERF record -F 499 -a -q -o /tmp/$name.data -- mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/sendrecv_perf -b 512M -e 512M -n 200 -w 10 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{print "time_us", $6, "busbw", $8}' $A/$name.log)"
  $PERF report -i /tmp/$name.data --stdio -n --sort comm --percent-limit 0.3 > $A/$name.comm.txt 2>&1
  $PERF report -i /tmp/$name.data --stdio -n --sort comm,dso,sym --percent-limit 0.1 > $A/$name.sym.txt 2>&1
  el "$name top threads: $(grep -E '^ +[0-9.]+%' $A/$name.comm.txt | head -8 | tr -s ' ' | paste -sd';')"
  rm -f /tmp/$name.data; }
prof host1 host; prof gpu gpu; prof host2 host
el done
