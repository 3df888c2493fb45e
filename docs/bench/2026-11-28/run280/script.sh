#!/bin/bash
# run280 (a 4-GPU host, GPUs 0-1; 2026-11-28, thirty-second session): item 4, whether the I/O
# threads' copy samples fall with NCCL_TCPXR_BOUNCE_DEMOTE acting (main 04fef03a, dist/c30; runs
# 276-277 timed a build where it did not act). 512 MiB sendrecv, 2 ranks one per GPU, 120
# iterations, perf -a at 499 Hz: host buffers, GPU buffers demote on and off, twice alternated.
cd "$(dirname "$0")/.."; A=/tmp/run280; source dist/common.sh
start_run; echo "c30: $(cat dist/c30/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
PROF=$PWD/dist/prof; PERF="env LD_LIBRARY_PATH=$PROF/lib $PROF/perf"
prof(){ local name=$1 buf=$2; shift 2
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET CUDA_VISIBLE_DEVICES=0,1
             NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/dist/c30:$LD_LIBRARY_PATH NCCL_TCPXR_STATS=1)
  case $buf in gpu) env+=(NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1);; host) env+=(NCCL_TCPXR_GPU_BUFFERS=0);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 $PERF record -F 499 -a -q -o /tmp/$name.data -- mpirun --allow-run-as-root --bind-to none -np 2 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/sendrecv_perf -b 512M -e 512M -n 120 -w 10 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{print "time_us", $6, "busbw", $8}' $A/$name.log)"
  $PERF report -i /tmp/$name.data --stdio -n --sort comm,dso,sym --percent-limit 0.1 > $A/$name.sym.txt 2>&1
  el "$name io copies: $(grep -E '_copy_to_iter|_copy_from_iter' $A/$name.sym.txt | grep tcpxr-io | awk '{n[$NF]+=$2} END{for(k in n) printf "%s %d ", k, n[k]}')"
  rm -f /tmp/$name.data; }
prof host1 host; prof dm1 gpu; prof nd1 gpu NCCL_TCPXR_BOUNCE_DEMOTE=0
prof dm2 gpu; prof nd2 gpu NCCL_TCPXR_BOUNCE_DEMOTE=0; prof host2 host
el done
