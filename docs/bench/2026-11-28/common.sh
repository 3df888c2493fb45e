# Shared by the run scripts: environment, nccl-tests build, MPS, one nccl-tests run with its verdict.
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
R=${OUT:-/tmp/out}; mkdir -p $A
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
NT=ncclTests/nccl-tests/build
build_tests(){ [ -x $NT/all_reduce_perf ] && return; (cd ncclTests/nccl-tests && make -j16 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=/usr NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/nccl-tests-build.txt 2>&1); el "nccl-tests build rc=$?"; }
mps_on(){ export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog; mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY; nvidia-cuda-mps-control -d; el "MPS on"; }
mps_off(){ echo quit | nvidia-cuda-mps-control; sleep 1; unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY; el "MPS off"; }
# nt NAME LIBDIR NP OP BUF(gpu|host|socket) ALGO(-|Ring|Tree) [extra env K=V ...] : one nccl-tests run, -c 1
nt(){
  local name=$1 lib=$2 np=$3 op=$4 buf=$5 algo=$6; shift 6
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET)
  case $buf in
    gpu) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1);;
    host) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/$lib:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0);;
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
  esac
  [ "$algo" != - ] && env+=(NCCL_ALGO=$algo)
  env+=("$@")
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout ${NT_TIMEOUT:-150} mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf -b ${MINB:-8} -e ${MAXB:-32M} -f ${STEP:-4} -n ${ITERS:-3} -w 1 -c 1 -g 1 > $A/$name.log 2>&1
  local rc=$? wrong=$(grep -h "Out of bounds values" $A/$name.log | awk '{print $7,$8}')
  local bad=$(awk '/^ +[0-9]+ +[0-9]+ /{ if ($9!="0" && $9!="N/A") n++; if (NF>=13 && $13!="0" && $13!="N/A") n++ } END{print n+0}' $A/$name.log)
  local loaded=$(grep -m1 -o "Loaded net plugin [^ ]*\|Using network [A-Za-z]*" $A/$name.log | head -1)
  el "$name: rc=$rc oob='$wrong' rows_wrong=$bad ($loaded)"
}
# pg NAME OP host|socket [K=V ...]: one nccl-tests run over 4 ranks, one per GPU of the 4-GPU host,
# each its own NCCL host, -c 0, from the nccl-tests at $NT; sizes $PG_SIZES (-b 256K -e 16M, x2),
# $PG_ITERS iterations (30), tcpxr from ${PGLIB:-dist}; the times per size on one line of steps.txt.
pg(){ local name=$1 op=$2 buf=$3; shift 3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV CUDA_VISIBLE_DEVICES=0,1,2,3)
  case $buf in
    host) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=tcpxr LD_LIBRARY_PATH=$PWD/${PGLIB:-dist}:$LD_LIBRARY_PATH NCCL_TCPXR_GPU_BUFFERS=0);;
    socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
  esac
  env+=("$@"); local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np 4 "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh $NT/${op}_perf ${PG_SIZES:--b 256K -e 16M} -f 2 -n ${PG_ITERS:-30} -w 5 -c 0 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log)"; }
# build_tests_in DIR NCCL_HOME JOBS: nccl-tests (MPI=1) from ncclTests/nccl-tests in a fresh copy at DIR
# against the NCCL at NCCL_HOME (/usr: the system's 2.28.3); logged as DIR's name.
build_tests_in(){ local dir=$1 home=$2 jobs=$3
  (rm -rf $dir && cp -r ncclTests/nccl-tests $dir && cd $dir && rm -rf build && make -j$jobs MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi CUDA_HOME=/usr/local/cuda NCCL_HOME=$home NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > $A/$(basename $dir)-build.txt 2>&1); el "nccl-tests in $dir (NCCL at $home) build rc=$?"; }
# start_run: a 4-GPU run's preamble: all four GPUs visible, $A tarred into $R when the script exits,
# and in $A/machine.txt the machine, the code (dist/commit.txt) and the host's load before the run.
start_run(){ export CUDA_VISIBLE_DEVICES=0,1,2,3; trap "tar cJf $R/$(basename $A).tar.xz -C /tmp $(basename $A)" EXIT
  { date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; uptime; ps -eo pid,pcpu,comm --sort=-pcpu | head -15
    lscpu | grep -E '^(Model name|Thread|Core|Socket|NUMA node\(s\)|CPU MHz|Hypervisor)'; } > $A/machine.txt 2>&1; }  # lscpu: from run 184
# tests_228: NT = nccl-tests built in /tmp/nt-2.28.3 against the system's NCCL 2.28.3; then the
# host's load after the build, in $A/machine.txt.
tests_228(){ NT=/tmp/nt-2.28.3/build; build_tests_in /tmp/nt-2.28.3 /usr 48
  { uptime; ps -eo pid,pcpu,comm --sort=-pcpu | head -8; } >> $A/machine.txt 2>&1; }
# checks LIBDIR [OPS [K=V ...]]: the correctness set every data-path change runs (runs 195, 198): 3 and
# 4 ranks on GPU 0 under MPS, host and GPU buffers, OPS (all_reduce,sendrecv) with NCCL's choice, Ring,
# Tree; 4 ranks, GPU buffers, CUDA_DEVICE_MAX_CONNECTIONS=1; 8 B-32 MiB -c 1; each K=V set for the
# ranks (an experiment's switch). Needs $NT and $A.
checks(){ local lib=$1 ops=${2:-all_reduce,sendrecv} np algo al kv extra=()
  for kv in "${@:3}"; do extra+=(--env "$kv"); done
  for np in 3 4; do for algo in NCCL Ring Tree; do
    al=(); [ $algo != NCCL ] && al=(--algo $algo)
    # NCCL has no tree for all_gather or reduce_scatter (NCCL_ALGO=Tree: invalid usage, run 318).
    local o=$ops; [ $algo = Tree ] && o=$(echo $ops | tr , '\n' | grep -v -x -e all_gather -e reduce_scatter | paste -sd,)
    [ -z "$o" ] && continue
    CUDA_VISIBLE_DEVICES=0 timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $lib --one-gpu --mps --ranks $np "${al[@]}" --ops $o --configs tcpxr-host,tcpxr-gpu "${extra[@]}" --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-$np-$algo > $A/check-$np-$algo.txt 2>&1
    el "check $np ranks $algo rc=$? $(grep -c ' ok, ' $A/check-$np-$algo.txt) ok, $(grep -c FAILED $A/check-$np-$algo.txt) failed"
  done; done
  CUDA_VISIBLE_DEVICES=0 timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir $lib --one-gpu --ranks 4 --ops $ops --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 "${extra[@]}" --max 32M --iters 2 --warmup 1 --timeout 90 --out $A/check-4-cdmc1 > $A/check-4-cdmc1.txt 2>&1
  el "check 4 ranks CUDA_DEVICE_MAX_CONNECTIONS=1 rc=$? $(grep -c ' ok, ' $A/check-4-cdmc1.txt) ok, $(grep -c FAILED $A/check-4-cdmc1.txt) failed"; }
# gpu_tests LIBDIR: the GPU test binaries in LIBDIR/deps (gpu, gpu_copy_in, gpu_demote, gpu_hazard,
# gpu_tcpx with LIBDIR/libtcpx_emu.so), TCPXR_REQUIRE_GPU=1, on GPU 0: by default, with
# CUDA_DEVICE_MAX_CONNECTIONS=1 and under MPS; rma by default only (RMA offers no device under one
# hardware queue or MPS, run 360); any other binary in LIBDIR/deps (e.g. spread) by default.
gpu_tests(){ local lib=$1 G="gpu gpu_copy_in gpu_demote gpu_hazard gpu_tcpx" t mode
  local others=$(ls $lib/deps | grep -v -x -e gpu -e gpu_copy_in -e gpu_demote -e gpu_hazard -e gpu_tcpx | tr '\n' ' ')
  gt1(){ local mode=$1 tests=$2; shift 2
    for t in $tests; do
      env TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/$lib/libtcpx_emu.so "$@" timeout 150 $lib/deps/$t --include-ignored --test-threads=1 > $A/$t-$mode.txt 2>&1
      el "$t $mode rc=$? $(grep -h '^test result' $A/$t-$mode.txt)"; grep -h 'FAILED\|panicked' $A/$t-$mode.txt | head -5 | tee -a $A/steps.txt
    done; }
  gt1 default "$others $G" CUDA_VISIBLE_DEVICES=0
  gt1 1queue "$G" CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_MAX_CONNECTIONS=1
  mps_on; gt1 mps "$G" CUDA_VISIBLE_DEVICES=0; mps_off; }
# launch VARIANT NP OP [ARGS...]: one nccl-tests launch of OP_perf on GPU 0 (or one per GPU), NP ranks each its own NCCL
# host (from run 444; the run scripts before it spelt it out), host buffers, -c 1 -g 1 ARGS. VARIANT: socket, sNxM
# (Socket with N threads of M sockets), or cNNN (tcpxr from dist/cNNN; a letter after it names the
# same library again, as run 440's c104b) with +KEY parts, each adding the settings VENV[KEY] holds
# (the script's `declare -A VENV=([buf1m]="NCCL_BUFFSIZE=1048576")`). Needs $NT and MPS on; with
# PER_GPU=1 each rank takes the GPU of its local rank instead (nccl-tests' choice; no MPS needed).
launch(){ local v=$1 np=$2 op=$3 base=${1%%+*} key; shift 3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  [ "${PER_GPU:-0}" = 1 ] || env+=(NCCL_TESTS_DEVICE=0)
  case $base in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    s[1-8]x[1-8]) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_SOCKET_NTHREADS=${base:1:1} NCCL_NSOCKS_PERTHREAD=${base:3:1});;
    c[0-9]*) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$(echo $base | sed -E 's/[a-z]+$//')/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);;
    *) echo "launch: unknown variant $v" >&2; return 2;; esac
  for key in $(echo "${v#$base}" | tr + ' '); do
    [ -n "${VENV[$key]:-}" ] || { echo "launch: $v: no VENV[$key]" >&2; return 2; }; env+=(${VENV[$key]}); done
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout ${LAUNCH_TIMEOUT:-60} mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -c 1 -g 1 "$@"; }
# rounds NP N OP "VARIANTS" [ARGS...]: N rounds of `launch`, each one launch of every variant, round k
# starting at the k-th and every even round reversed; each output $A/NP-OP-VARIANT-rK.log (OP with
# $SFX after it, e.g. _bulk), as compact.py show --median folds them, and its times in steps.txt.
rounds(){ local np=$1 n=$2 op=$3 all=($4) round k vs v tag; shift 4
  for round in $(seq 1 $n); do
    k=$(( (round - 1) % ${#all[@]} )); vs="${all[@]:$k} ${all[@]:0:$k}"
    [ $((round % 2)) = 0 ] && vs=$(echo $vs | tr ' ' '\n' | tac | tr '\n' ' ')
    for v in $vs; do tag=$np-$op${SFX:-}-$v-r$round
      launch $v $np $op "$@" > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done; }
