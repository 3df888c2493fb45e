#!/bin/bash
# run317 (a 4-GPU host, 4 ranks one per GPU): Socket's all_reduce steps from 38 to 53 us between
# 64 and 128 B at 4 ranks (run 311) where its messages (LL lines, twice the data) outgrow
# NCCL_SOCKET_INLINE (128 B: size and payload in one send); tcpxr, inline to 16 KiB, is flat at
# 48-50 us. 1. Socket's staircase against its inline limit: all_reduce 8 B-2 KiB -n 200 -N 5 -c 0,
# Socket default, NCCL_SOCKET_INLINE=0 and =4096, tcpxr (dist/c44), two passes alternated.
# 2. Where NCCL's proxy thread spends an 8 B all_reduce: every rank under perf record with
# NCCL_SET_THREAD_NAME=1 (threads named), tcpxr and Socket, two passes; per thread and symbol.
cd "$(dirname "$0")/.."; A=/tmp/run317; source dist/common.sh
start_run; echo "c44: $(cat dist/c44/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
run4(){ local name=$1 v=$2 args=$3 wrap=$4; shift 4
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN NCCL_SET_THREAD_NAME=1 LD_LIBRARY_PATH=$PWD/dist/prof/lib:$LD_LIBRARY_PATH)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 90 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" -x A=$A -x V=$name -x PERF=$PWD/dist/prof/perf sh -c "NCCL_HOSTID=h\${OMPI_COMM_WORLD_RANK} exec $wrap \"\$@\"" sh \
    $NT/all_reduce_perf $args -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log | cut -c1-300)"; }
for pass in 1 2; do
  for v in socket socket-in0 socket-in4k c44; do
    case $v in socket-in0) run4 s-$v-$pass socket "-b 8 -e 2K -f 2 -n 200 -w 20 -N 5" "" NCCL_SOCKET_INLINE=0;;
      socket-in4k) run4 s-$v-$pass socket "-b 8 -e 2K -f 2 -n 200 -w 20 -N 5" "" NCCL_SOCKET_INLINE=4096;;
      *) run4 s-$v-$pass $v "-b 8 -e 2K -f 2 -n 200 -w 20 -N 5" "";; esac
  done
done
for pass in 1 2; do for v in c44s socket; do
  run4 p-$v-$pass $v "-b 8 -e 8 -n 20000 -w 200" '$PERF record -q -e cpu-clock -F 2000 -o $A/perf-$V-$OMPI_COMM_WORLD_RANK.data'
  for r in 0 1; do
    dist/prof/perf report -i $A/perf-p-$v-$pass-$r.data --stdio --sort comm 2>/dev/null | grep -v '^#' | grep -v '^$' | head -20 > $A/threads-$v-$pass-$r.txt
    dist/prof/perf report -i $A/perf-p-$v-$pass-$r.data --stdio --sort comm,dso,sym --percent-limit 0.2 2>/dev/null | grep -v '^#' | grep -v '^$' | head -120 > $A/prof-$v-$pass-$r.txt
  done
  rm -f $A/perf-p-$v-$pass-*.data
done; done
el done
