#!/bin/bash
# run318 (a 4-GPU host): dist/c46 = 038491c4 + the all_gather/reduce_scatter row from a 16 KiB share
# (run 316's dist/c45, with its reason and tests).
# 1. The 3-4-rank correctness set with c46 for all_gather and reduce_scatter (checks: GPU 0 under
#    MPS, host and GPU buffers, NCCL's choice, Ring, Tree, 8 B-32 MiB -c 1; 4 ranks, one queue).
# 2. GPU buffers, one rank per GPU, 4 then 2 ranks: all_gather and reduce_scatter 8 KiB-1 MiB, c44
#    (main's library) against c46, 200 iterations, --cycles 3, --repeat 3.
# 3. all_reduce 8 B-2 KiB at 4 ranks (run 317: tcpxr 39-42 us in its first cycle, then 47-50; Socket
#    38-41 throughout): c46, c46 with NCCL_TCPXR_IO_SPIN_US=0, with NCCL_TCPXR_IO_THREADS=0, Socket,
#    -n 200 -N 5, two passes alternated.
# 4. run 317's per-thread profile again (its perf report ran without dist/prof's libraries).
cd "$(dirname "$0")/.."; A=/tmp/run318; source dist/common.sh
start_run; for c in c44 c46; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
checks dist/c46 all_gather,reduce_scatter
C46=NCCL_NET_PLUGIN=$PWD/dist/c46/libnccl-net-tcpxr.so
for np in 4 2; do
  CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((np-1))) timeout 150 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c44 --mpirun --ranks $np --ops all_gather,reduce_scatter --min 8K --max 1M --iters 200 --warmup 20 --timeout 60 --repeat 3 --cycles 3 \
    --configs tcpxr-gpu,tcpxr-gpu+row16 --variant row16:$C46 --out $A/g$np > $A/g$np.txt 2>&1
  el "g$np rc=$? $(grep -c ' ok, ' $A/g$np.txt) ok, $(grep -c FAILED $A/g$np.txt) failed"
  rm -rf $A/g$np/r*/logs
done
rm -rf $A/check-*/r*/logs
export LD_LIBRARY_PATH=$PWD/dist/prof/lib:$LD_LIBRARY_PATH
run4(){ local name=$1 v=$2 args=$3 wrap=$4; shift 4
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN NCCL_SET_THREAD_NAME=1 LD_LIBRARY_PATH=$LD_LIBRARY_PATH)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  CUDA_VISIBLE_DEVICES=0,1,2,3 timeout 90 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" -x A=$A -x V=$name -x PERF=$PWD/dist/prof/perf sh -c "NCCL_HOSTID=h\${OMPI_COMM_WORLD_RANK} exec $wrap \"\$@\"" sh \
    $NT/all_reduce_perf $args -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log | cut -c1-400)"; }
S="-b 8 -e 2K -f 4 -n 200 -w 20 -N 5"
for pass in 1 2; do
  run4 s-c46-$pass c46 "$S" ""
  run4 s-nospin-$pass c46 "$S" "" NCCL_TCPXR_IO_SPIN_US=0
  run4 s-nopool-$pass c46 "$S" "" NCCL_TCPXR_IO_THREADS=0
  run4 s-socket-$pass socket "$S" ""
done
for v in c44s socket; do
  run4 p-$v $v "-b 8 -e 8 -n 20000 -w 200" '$PERF record -q -e cpu-clock -F 2000 -o $A/perf-$V-$OMPI_COMM_WORLD_RANK.data'
  for r in 0 1; do
    dist/prof/perf report -i $A/perf-p-$v-$r.data --stdio --sort comm 2>&1 | grep -v '^#' | grep -v '^$' | head -20 > $A/threads-$v-$r.txt
    dist/prof/perf report -i $A/perf-p-$v-$r.data --stdio --sort comm,dso,sym --percent-limit 0.2 2>&1 | grep -v '^#' | grep -v '^$' | head -150 > $A/prof-$v-$r.txt
  done
  rm -f $A/perf-p-$v-*.data
done
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
