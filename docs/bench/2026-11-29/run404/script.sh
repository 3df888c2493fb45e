#!/bin/bash
# run404 (one H200, session 49): GPU buffers' small sizes with VMM host pages (dist/c84 =
# a7e24060) against main before them (dist/c80 = e36cb32e's library): NCCL's kernel reads the
# unpack ring from tcpxr's pinned memory. Ranks on GPU 0 under MPS, 8 B-64 KiB x4, -n 500
# -w 100: 2 ranks all_reduce and sendrecv, 4 ranks all_reduce; four passes ABBA BAAB.
cd "$(dirname "$0")/.."; A=/tmp/run404; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "main: $(cat dist/c80/commit.txt)" >> $A/machine.txt
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
mps_on
launch(){ local c=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$c/libnccl-net-tcpxr.so NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1)
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8 -e 64K -f 4 -n 500 -w 100 -c 1 -g 1; }
for pass in 1 2 3 4; do
  case $pass in 1|4) vs="c80 c84";; 2|3) vs="c84 c80";; esac
  for shape in 2:all_reduce 2:sendrecv 4:all_reduce; do np=${shape%%:*}; op=${shape#*:}
    for c in $vs; do tag=gpu-$np-$op-$c-r$pass
      launch $c $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
el done
