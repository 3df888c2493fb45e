#!/bin/bash
# run435 (one H200, session 54): 2-rank sendrecv of 8 B settles per launch into a fast or a slow
# regime (run 434: c101 25.2 us in one pass, 28.7-29.2 in two). Many short launches show how often
# each transport lands in each: 12 rounds, each one launch of c101 (main), c101 with the control
# writer experiment (NCCL_TCPXR_EXP_CTRL_WRITER=1) and Socket default in rotated order,
# sendrecv_perf -b 8 -e 8 -n 3000 -w 300 -c 1, GPU 0 under MPS, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run435; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c101: $(cat dist/c101/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2; shift 2
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    c101w) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c101/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0 NCCL_TCPXR_EXP_CTRL_WRITER=1);;
    *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/sendrecv_perf -g 1 "$@"; }
for round in $(seq 1 12); do
  case $((round % 3)) in 1) vs="c101 c101w socket";; 2) vs="socket c101 c101w";; 0) vs="c101w socket c101";; esac
  for v in $vs; do tag=2-sendrecv-$v-r$round
    launch $v 2 -b 8 -e 8 -n 3000 -w 300 -c 1 > $A/$tag.log 2>&1
    el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
  done
done
# Each thread's share of the CPU while c101 and Socket run (perf cpu-clock samples; run 434's
# reports came out empty, so this one keeps perf's messages).
export LD_LIBRARY_PATH=$PWD/dist/prof/lib:$LD_LIBRARY_PATH; PERF=$PWD/dist/prof/perf
for v in c101 socket; do
  launch $v 2 -b 8 -e 8 -n 200000 -w 2000 -c 0 > $A/prof-$v.log 2>&1 & L=$!; sleep 4
  $PERF record -a -e cpu-clock -F 2999 -o /tmp/$v.data -- sleep 1.5 > $A/prof-$v-perf.err 2>&1
  wait $L; el "prof $v rc=$? 8 B: $(awk '$1==8{print $6}' $A/prof-$v.log) us; data $(ls -la /tmp/$v.data | awk '{print $5}')"
  $PERF report -i /tmp/$v.data --sort comm,tid --stdio > $A/prof-$v-threads.txt 2>&1
  $PERF report -i /tmp/$v.data --comm sendrecv_perf --sort dso,sym --stdio > $A/prof-$v-main.txt 2>&1
  head -c 20000 $A/prof-$v-main.txt > /tmp/x && mv /tmp/x $A/prof-$v-main.txt; rm -f /tmp/$v.data
done
mps_off
el done
