#!/bin/bash
# run431 (one H200, session 53): run 426 placed sendrecv's small-message gap after a receive
# (tcpxr's message read sooner than Socket's, the rank's next write later). NCCL's own account of
# each network step, from its example profiler plugin (ext-profiler/example of NVIDIA/nccl
# v2.28.3-1, built here with g++ against CUDA's headers; NCCL_PROFILE_EVENT_MASK=88: proxy ops,
# proxy steps, kernel channels): per step, how long the proxy waited for the kernel's data, the
# isend to be done, the irecv to be done, and the kernel to consume a receive
# (dist/a431/steps.py). sendrecv_perf -b 8 -e 8, -n 2000 -w 200 -c 0, 2 and 4 ranks on GPU 0 under
# MPS, host buffers, dist/c99 (main 95820c5b) against Socket default, two passes alternated, each
# launch first without the profiler (the time), then with it.
cd "$(dirname "$0")/.."; A=/tmp/run431; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c99: $(cat dist/c99/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
(cd dist/prof-example/src && g++ -O2 -Inccl -I/usr/local/cuda/include -fPIC -shared -o /tmp/libnccl-profiler-example.so *.cc) > $A/profiler-build.txt 2>&1; el "profiler build rc=$?"
cp dist/a431/steps.py $A/
mps_on
launch(){ local v=$1 np=$2 prof=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  [ -n "$prof" ] && env+=(NCCL_PROFILER_PLUGIN=/tmp/libnccl-profiler-example.so NCCL_PROFILE_EVENT_MASK=88 NCCL_PROFILE_DUMP_FILE=$prof)
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/sendrecv_perf -b 8 -e 8 -n 2000 -w 200 -c 0 -g 1; }
for pass in 1 2; do
  vs="c99 socket"; [ $pass = 2 ] && vs="socket c99"
  for np in 2 4; do
    for v in $vs; do tag=$np-$v-$pass
      launch $v $np "" > $A/$tag.log 2>&1
      el "$tag plain rc=$? 8 B: $(awk '$1==8{print $6}' $A/$tag.log) us"
      mkdir -p $A/prof-$tag; launch $v $np $A/prof-$tag/dump > $A/$tag-prof.log 2>&1
      el "$tag profiled rc=$? 8 B: $(awk '$1==8{print $6}' $A/$tag-prof.log) us; dumps $(ls $A/prof-$tag | wc -l), $(cat $A/prof-$tag/* | wc -l) lines"
      python3 $A/steps.py $A/prof-$tag/* > $A/$tag-steps.txt 2>&1; el "$tag analysed rc=$?"
      xz -T4 $A/prof-$tag/*
    done
  done
done
mps_off
el done
