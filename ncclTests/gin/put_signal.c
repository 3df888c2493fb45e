/* put_signal.c: NCCL's host RMA calls (ncclPutSignal / ncclWaitSignal, NCCL 2.29+) between
 * two ranks, each its own process, checked byte for byte; through whatever RMA backend NCCL picks
 * (tcpxr's when NCCL_NET_PLUGIN / NCCL_RMA_PLUGIN name it; see run_gin.sh).
 *
 * Build (CUDA and an NCCL 2.30 build at NCCL_HOME):
 *   gcc -O2 -o put_signal put_signal.c -I$NCCL_HOME/include -I$CUDA_HOME/include \
 *       -L$NCCL_HOME/lib -L$CUDA_HOME/lib64 -lnccl -lcudart
 * Run (both ranks on GPU 0 is fine; each is its own NCCL host with NCCL_HOSTID):
 *   put_signal RANK NRANKS ID_FILE [BYTES] [ITERS]
 * Rank 0 writes its ncclUniqueId to ID_FILE, the others wait for it. Sizes are 8 B, 64 B, ...
 * (x8) and BYTES itself. Each iteration every rank puts the size to the next rank's window with
 * a signal, waits for the previous rank's signal, and checks the bytes. Prints one line per size
 * with the time from the put to the signal's arrival (the check, clearing and barrier between
 * iterations excluded) and "PASS", or "FAIL ..." and exits 1. */
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#define CHECK_CUDA(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); exit(1); } } while (0)
#define CHECK_NCCL(x) do { ncclResult_t r = (x); if (r != ncclSuccess) { \
  fprintf(stderr, "FAIL %s:%d %s: %s (%s)\n", __FILE__, __LINE__, #x, ncclGetErrorString(r), \
          ncclGetLastError(NULL)); exit(1); } } while (0)

static double now(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return tv.tv_sec + tv.tv_usec * 1e-6;
}

static uint8_t pattern(int from, int iter, size_t i) { return (uint8_t)(from * 37 + iter * 11 + i * 7 + 1); }

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s RANK NRANKS ID_FILE [BYTES] [ITERS]\n", argv[0]);
    return 2;
  }
  int rank = atoi(argv[1]), nranks = atoi(argv[2]);
  const char* idFile = argv[3];
  size_t maxBytes = argc > 4 ? strtoull(argv[4], NULL, 0) : (8 << 20);
  int iters = argc > 5 ? atoi(argv[5]) : 20;
  int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;

  ncclUniqueId id;
  if (rank == 0) {
    CHECK_NCCL(ncclGetUniqueId(&id));
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", idFile);
    FILE* f = fopen(tmp, "wb");
    if (!f || fwrite(&id, sizeof id, 1, f) != 1) { fprintf(stderr, "FAIL writing %s\n", tmp); return 1; }
    fclose(f);
    rename(tmp, idFile);
  } else {
    FILE* f = NULL;
    for (int t = 0; t < 600 && !(f = fopen(idFile, "rb")); t++) usleep(100000);
    if (!f || fread(&id, sizeof id, 1, f) != 1) { fprintf(stderr, "FAIL reading %s\n", idFile); return 1; }
    fclose(f);
  }

  CHECK_CUDA(cudaSetDevice(0));
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, nranks, id, rank));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  /* One symmetric window: [0, maxBytes) receives, [maxBytes, 2 maxBytes) is the source. */
  void* win_buf = NULL;
  CHECK_NCCL(ncclMemAlloc(&win_buf, 2 * maxBytes));
  ncclWindow_t win;
  CHECK_NCCL(ncclCommWindowRegister(comm, win_buf, 2 * maxBytes, &win, NCCL_WIN_COLL_SYMMETRIC));
  uint8_t* host = (uint8_t*)malloc(maxBytes);
  char* src = (char*)win_buf + maxBytes;
  float* barrier = NULL; /* a one-element all_reduce keeps the ranks in step */
  CHECK_CUDA(cudaMalloc((void**)&barrier, sizeof(float)));

  /* A window is cleared only by its owner and only before a barrier: cleared after the previous
   * rank's put of the same round could land first would wipe it. */
  CHECK_CUDA(cudaMemset(win_buf, 0, maxBytes));
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_NCCL(ncclAllReduce(barrier, barrier, 1, ncclFloat, ncclSum, comm, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));

  int failed = 0;
  for (size_t bytes = 8; bytes <= maxBytes && !failed; bytes = bytes * 8 > maxBytes && bytes < maxBytes ? maxBytes : bytes * 8) {
    double spent = 0; /* put to signal, iterations after the first (which warms up) */
    for (int it = 0; it < iters; it++) {
      for (size_t i = 0; i < bytes; i++) host[i] = pattern(rank, it, i);
      CHECK_CUDA(cudaMemcpy(src, host, bytes, cudaMemcpyHostToDevice));
      CHECK_CUDA(cudaDeviceSynchronize());
      double t0 = now();
      CHECK_NCCL(ncclPutSignal(src, bytes, ncclUint8, next, win, 0, 0, 0, 0, comm, stream));
      ncclWaitSignalDesc_t desc = {1, prev, 0, 0};
      CHECK_NCCL(ncclWaitSignal(1, &desc, comm, stream));
      CHECK_CUDA(cudaStreamSynchronize(stream));
      if (it > 0) spent += now() - t0;
      CHECK_CUDA(cudaMemcpy(host, win_buf, bytes, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < bytes; i++) {
        if (host[i] != pattern(prev, it, i)) {
          fprintf(stderr, "FAIL rank %d: %zu bytes, iteration %d: byte %zu is %u, want %u\n", rank, bytes, it, i,
                  host[i], pattern(prev, it, i));
          failed = 1;
          break;
        }
      }
      /* Cleared for the next round, then nobody puts again before every owner has checked
       * and cleared its window. */
      CHECK_CUDA(cudaMemset(win_buf, 0, bytes));
      CHECK_CUDA(cudaDeviceSynchronize());
      CHECK_NCCL(ncclAllReduce(barrier, barrier, 1, ncclFloat, ncclSum, comm, stream));
      CHECK_CUDA(cudaStreamSynchronize(stream));
      if (failed) break;
    }
    if (!failed && iters > 1) {
      double us = spent / (iters - 1) * 1e6;
      printf("rank %d: %9zu bytes  %10.1f us from put to signal  %8.3f GB/s\n", rank, bytes, us, bytes / us * 1e-3);
    }
  }

  CHECK_NCCL(ncclCommWindowDeregister(comm, win));
  CHECK_NCCL(ncclMemFree(win_buf));
  CHECK_CUDA(cudaFree(barrier));
  CHECK_NCCL(ncclCommDestroy(comm));
  free(host);
  if (failed) return 1;
  printf("rank %d: PASS\n", rank);
  return 0;
}
