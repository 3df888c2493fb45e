#!/usr/bin/env bash
# run_gin.sh: NCCL 2.30.7's one-sided paths over tcpxr's RMA table, 2 ranks on GPU 0, each its own
# NCCL host (NCCL_HOSTID), on the GPU machine (no network: the sources come with you).
#
#   NCCL_SRC=~/nccl (a v2.30.7-1 checkout)  NCCL_TESTS_SRC=~/nccl-tests  PLUGIN_DIR=target/release \
#   OUT=/tmp/gin  ncclTests/gin/run_gin.sh
#
# Builds NCCL (ncclTests/build_nccl.sh, skipped when $OUT/nccl/lib/libnccl.so exists), nccl-tests
# with MPI=1 (skipped when built) and put_signal.c, then runs with NCCL's INFO log:
#   1. put_signal (ncclPutSignal / ncclWaitSignal, NCCL's RMA proxy) at 8 B-8 MiB;
#   2. alltoall_perf -R 2 -D 3 (symmetric windows, the device API's GIN kernels, NCCL's GIN proxy).
# Each log is checked for NCCL's lines naming tcpxr as the RMA backend. Environment: MPIRUN
# (mpirun), CUDA_HOME (/usr/local/cuda), JOBS (16).
set -uo pipefail
: "${NCCL_SRC:?a v2.30.7-1 NCCL checkout}" "${NCCL_TESTS_SRC:?an nccl-tests checkout}" "${PLUGIN_DIR:?the folder of libnccl-net-tcpxr.so}"
OUT=${OUT:-/tmp/gin}; MPIRUN=${MPIRUN:-mpirun}; CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}; JOBS=${JOBS:-16}
HERE=$(cd "$(dirname "$0")" && pwd)
PLUGIN=$(cd "$PLUGIN_DIR" && pwd)/libnccl-net-tcpxr.so
[ -f "$PLUGIN" ] || { echo "run_gin.sh: $PLUGIN missing" >&2; exit 2; }
mkdir -p "$OUT"
NCCL_HOME="$OUT/nccl"

if [ ! -f "$NCCL_HOME/lib/libnccl.so" ]; then
  JOBS=$JOBS "$HERE/../build_nccl.sh" "$NCCL_SRC" "$NCCL_HOME" || exit 1
fi
if [ ! -x "$NCCL_TESTS_SRC/build/alltoall_perf" ]; then
  make -C "$NCCL_TESTS_SRC" -j"$JOBS" MPI=1 CUDA_HOME="$CUDA_HOME" NCCL_HOME="$NCCL_HOME" >"$OUT/nccl-tests-build.log" 2>&1 \
    || { tail -20 "$OUT/nccl-tests-build.log"; exit 1; }
fi
gcc -O2 -o "$OUT/put_signal" "$HERE/put_signal.c" -I"$NCCL_HOME/include" -I"$CUDA_HOME/include" \
  -L"$NCCL_HOME/lib" -L"$CUDA_HOME/lib64" -lnccl -lcudart || exit 1

export LD_LIBRARY_PATH="$NCCL_HOME/lib:${LD_LIBRARY_PATH:-}"
# tcpxr as the net and, named explicitly, as the RMA backend (without NCCL_RMA_PLUGIN NCCL finds
# the table in the net plugin's library too, after libnccl-rma.so). NCCL_GIN_TYPE=2: the GIN
# proxy (over the RMA backend), not GDAKI. Loopback, and no P2P/SHM: the ranks talk over the net.
ENV=(NCCL_NET_PLUGIN="$PLUGIN" NCCL_RMA_PLUGIN="$PLUGIN" NCCL_TCPXR_RMA=1 NCCL_GIN_TYPE=2
     NCCL_SOCKET_IFNAME=lo NCCL_TCPXR_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1
     NCCL_TESTS_DEVICE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV)
HOSTID='NCCL_HOSTID="gin-rank${OMPI_COMM_WORLD_RANK:-${PMI_RANK:?no MPI rank}}" exec "$@"'
XS=(); for kv in "${ENV[@]}"; do XS+=(-x "$kv"); done
XS+=(-x LD_LIBRARY_PATH)

# NCCL's lines that say tcpxr is the RMA backend (rma.cc, gin.cc at v2.30.7).
check_log() {
  local log=$1 ok=0
  for line in "RMA/Plugin: Loaded rma plugin tcpxr (v14)" "RMA/Plugin: Assigned plugin tcpxr to comm"; do
    if grep -qF "$line" "$log"; then echo "  found: $line"; else echo "  MISSING: $line"; ok=1; fi
  done
  grep -E "GIN/Plugin: (Assigned|Skipping)|RMA: |tcpxr.*(WARN|refus)|WARN" "$log" | sort | uniq -c | head -20
  return $ok
}

status=0
rm -f "$OUT/put_signal.id"
echo "== put_signal (ncclPutSignal / ncclWaitSignal), 2 ranks"
for r in 0 1; do
  env "${ENV[@]}" NCCL_HOSTID="gin-rank$r" "$OUT/put_signal" $r 2 "$OUT/put_signal.id" $((8 << 20)) 20 \
    >"$OUT/put_signal.$r.log" 2>&1 &
done
wait || status=1
grep -h "bytes\|PASS\|FAIL" "$OUT"/put_signal.[01].log
check_log "$OUT/put_signal.0.log" || status=1

echo "== alltoall_perf -R 2 -D 3 (GIN kernels through NCCL's GIN proxy), 2 ranks"
"$MPIRUN" --allow-run-as-root --bind-to none -np 2 "${XS[@]}" sh -c "$HOSTID" sh \
  "$NCCL_TESTS_SRC/build/alltoall_perf" -b 8 -e 64M -f 4 -R 2 -D 3 -c 1 -n 20 -w 5 -g 1 \
  >"$OUT/alltoall_gin.log" 2>&1 || status=1
grep -E "^ +[0-9]+ |Avg bus|wrong|error" "$OUT/alltoall_gin.log" | head -30
check_log "$OUT/alltoall_gin.log" || status=1
echo "logs in $OUT; status $status"
exit $status
