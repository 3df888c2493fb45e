#!/bin/bash
# run434 (one H200, session 54): is 2-rank sendrecv of 8 B bound by the host's launch? Each
# thread's share of the CPU (perf cpu-clock samples, system-wide) while 2 ranks run sendrecv_perf
# -b 8 -e 8 -n 200000, main's library (dist/c101, its experiment off) and Socket default; the main
# thread's top symbols. Then the time of 8 B-2 KiB (x4) at -n 1000 -w 200: c101, c101 without its
# I/O pool (NCCL_TCPXR_IO_THREADS=0), Socket default, and each under CUDA graphs (nccl-tests -n 100 -G 10),
# which take the host's launch out; three passes rotated. GPU 0 under MPS, host buffers.
cd "$(dirname "$0")/.."; A=/tmp/run434; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c101: $(cat dist/c101/commit.txt)" >> $A/machine.txt
export LD_LIBRARY_PATH=$PWD/dist/prof/lib:$LD_LIBRARY_PATH; PERF=$PWD/dist/prof/perf
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2; shift 2
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN LD_LIBRARY_PATH=$LD_LIBRARY_PATH)
  case $v in socket*) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    c101n*) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c101/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0 NCCL_TCPXR_IO_THREADS=0);;
    *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c101/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/sendrecv_perf -g 1 "$@"; }
for v in c101 socket; do
  launch $v 2 -b 8 -e 8 -n 200000 -w 2000 -c 0 > $A/prof-$v.log 2>&1 & L=$!; sleep 4
  $PERF record -a -q -e cpu-clock -F 4999 -g -o /tmp/$v.data -- sleep 1.5 > $A/prof-$v-perf.err 2>&1
  wait $L; el "prof $v rc=$? 8 B: $(awk '$1==8{print $6}' $A/prof-$v.log) us"
  $PERF report -i /tmp/$v.data --no-children --sort comm,tid --stdio 2>/dev/null | grep -v '^$' | head -40 > $A/prof-$v-threads.txt
  $PERF report -i /tmp/$v.data --no-children --comm sendrecv_perf --sort dso,sym --stdio -g none 2>/dev/null | grep -v '^$' | head -60 > $A/prof-$v-main.txt
  $PERF report -i /tmp/$v.data --no-children --sort comm,dso,sym --stdio -g none 2>/dev/null | grep -v '^$' | head -80 > $A/prof-$v-all.txt
  rm -f /tmp/$v.data
done
for pass in 1 2 3; do
  case $pass in 1) vs="c101 c101n socket c101G c101nG socketG";; 2) vs="socketG c101nG c101G socket c101n c101";; 3) vs="c101n socket c101 socketG c101G c101nG";; esac
  for v in $vs; do tag=2-sendrecv-$v-r$pass; g=(); [ "${v: -1}" = G ] && g=(-G 10)
    n=1000; [ ${#g[@]} -gt 0 ] && n=100; launch $v 2 -b 8 -e 2K -f 4 -n $n -w 200 -c 1 "${g[@]}" > $A/$tag.log 2>&1
    el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
  done
done
mps_off
el done
