#!/bin/bash
# run393 (one H200, session 48): exact control reads (dist/c79 = main 64c3d1e1 + ctrl.rs reading
# exactly a header, then an inline payload straight into NCCL's buffer, no read-ahead) against
# main (dist/c78) and Socket default. Runs 391-392 found tcpxr's one read of header and payload
# (3.4-3.5 us: the ACK a drained socket owes goes out inside it) putting a small payload in
# NCCL's buffer 0.5-1.3 us later than Socket's two reads.
#  1. Times: 2 ranks (all_reduce, all_gather) and 4 ranks (all_reduce, sendrecv) on GPU 0 under
#     MPS, host buffers, 8 B-2 MiB x4, -n 500 -w 100 -c 1, three passes in alternated order.
#  2. The correctness set (checks) on c79.
cd "$(dirname "$0")/.."; A=/tmp/run393; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for c in c78 c79; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
mps_on
launch(){ local v=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8 -e 2M -f 4 -n 500 -w 100 -c 1 -g 1; }
for pass in 1 2 3; do
  case $pass in 1) vs="c78 c79 socket";; 2) vs="socket c79 c78";; 3) vs="c79 c78 socket";; esac
  for shape in 2:all_reduce 2:all_gather 4:all_reduce 4:sendrecv; do np=${shape%%:*}; op=${shape#*:}
    for v in $vs; do tag=$np-$op-$v-r$pass
      launch $v $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
checks dist/c79
rm -rf $A/check-*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/check-*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
