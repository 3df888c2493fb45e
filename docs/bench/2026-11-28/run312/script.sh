#!/bin/bash
# run312 (a 4-GPU host, 4 ranks one per GPU): where does each rank's time go in a steady 8 B
# all_reduce (tcpxr 48-50 us against Socket's 39-46, runs 309 and 311)? The clock source (a
# clock_gettime that is a real system call would cost every poll), then every rank under `perf
# record -e cpu-clock -F 2000` (dist/prof's perf), all_reduce_perf -b 8 -e 8 -n 20000 -w 200 -c 0,
# tcpxr (dist/c44s: c44 with its symbols) and Socket's default, twice alternated; per rank the
# flat profile by thread, library and symbol.
cd "$(dirname "$0")/.."; A=/tmp/run312; source dist/common.sh
start_run; echo "c44s: $(cat dist/c44s/commit.txt)" >> $A/machine.txt
{ cat /sys/devices/system/clocksource/clocksource0/current_clocksource /sys/devices/system/clocksource/clocksource0/available_clocksource; } > $A/clocksource.txt 2>&1
el "clocksource: $(tr '\n' ' ' < $A/clocksource.txt)"
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
export LD_LIBRARY_PATH=$PWD/dist/prof/lib:$LD_LIBRARY_PATH
for pass in 1 2; do for v in c44s socket; do
  env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN LD_LIBRARY_PATH=$LD_LIBRARY_PATH)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 90 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" -x A=$A -x V=$v-$pass -x PERF=$PWD/dist/prof/perf sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec $PERF record -q -e cpu-clock -F 2000 -o $A/perf-$V-$OMPI_COMM_WORLD_RANK.data "$@"' sh \
    $NT/all_reduce_perf -b 8 -e 8 -n 20000 -w 200 -c 0 -g 1 > $A/$v-$pass.log 2>&1
  el "$v pass $pass rc=$? 8B $(awk '/^ +8 /{print $6}' $A/$v-$pass.log) us"
  for r in 0 1 2 3; do
    dist/prof/perf report -i $A/perf-$v-$pass-$r.data --stdio --sort comm,dso,sym --percent-limit 0.3 2>/dev/null | grep -v '^$' | head -80 > $A/prof-$v-$pass-$r.txt
    dist/prof/perf report -i $A/perf-$v-$pass-$r.data --stdio --sort comm 2>/dev/null | grep -v '^#' | grep -v '^$' | head -20 > $A/threads-$v-$pass-$r.txt
  done
  rm -f $A/perf-$v-$pass-*.data
done; done
el done
