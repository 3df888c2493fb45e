// Run 17: what placing received pages costs a GEMM on the same GPU, and how the unpack launches
// should be batched when a long kernel holds the multiprocessors (docs/BENCHMARKS.md section 10).
// Not part of tcpxr; built with nvcc on the GPU machine, see README.md beside this file.
//
// A bf16 8192^3 GEMM (cuBLAS) runs in batches on a stream of default priority. In turns, a batch
// runs alone or beside a modelled receiver: 512 KiB chunks (128 fragments of 4 KiB, shuffled
// sources, records in host-mapped memory) "arrive" at a set rate, at most 16 arrived but not yet
// placed (the bounce slots: arrivals wait when they are full, as a stripe does). Pending chunks
// are placed by tcpxr_unpack on two streams of the highest priority, in turn; a launch takes every
// chunk pending, but only while fewer than `depth` launches are in flight (depth 8 is what tcpxr
// did: a launch per progress pass). A chunk's slot frees when its launch's event completes.
// Sources in device memory (TCPX's pages) or pinned host memory (the socket transport's bounce).
// Printed: the GEMM's time beside the receiver over its time alone, the rate placed, launches.
#include <chrono>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include "harness.h"

#define CB(x) do { cublasStatus_t e = (x); if (e != CUBLAS_STATUS_SUCCESS) { printf("%s:%d cublas %d\n", __FILE__, __LINE__, (int)e); exit(1);} } while (0)

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  rng_state = 0x9e3779b9;  // this harness's shuffle, as in runs 17b and 21
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int n = 8192, batch = 16;
  Pages pg(32);  // 64 chunks of 128 fragments of 4 KiB
  const size_t per_chunk = pg.per_chunk, chunk = pg.chunk, nchunks = pg.nchunks;
  int lo_prio, hi_prio; CK(cudaDeviceGetStreamPriorityRange(&lo_prio, &hi_prio));
  cudaStream_t gs, ps[2];
  CK(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking));
  for (auto& s : ps) CK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, hi_prio));
  cublasHandle_t h; CB(cublasCreate(&h)); CB(cublasSetStream(h, gs));
  __nv_bfloat16 *a, *b, *c;
  CK(cudaMalloc(&a, (size_t)n * n * 2)); CK(cudaMalloc(&b, (size_t)n * n * 2)); CK(cudaMalloc(&c, (size_t)n * n * 2));
  CK(cudaMemset(a, 0x3c, (size_t)n * n * 2)); CK(cudaMemset(b, 0x3c, (size_t)n * n * 2));
  const float one = 1, zero = 0;
  auto gemm = [&] { CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, CUDA_R_16BF, n, b, CUDA_R_16BF, n, &zero, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)); };
  unsigned char *src = pg.src, *dst = pg.dst, *hsrc;
  CK(cudaHostAlloc(&hsrc, pg.src_len, cudaHostAllocMapped));
  unsigned char* hsrc_dev; CK(cudaHostGetDevicePointer(&hsrc_dev, hsrc, 0));
  ulonglong2* hrec_dev = pg.hrec_dev;
  pg.layout(0, nullptr);  // shuffled, aligned
  const int max_depth = 8, slots = 16;
  cudaEvent_t ev[max_depth]; for (auto& x : ev) CK(cudaEventCreateWithFlags(&x, cudaEventDisableTiming));
  cudaEvent_t g0, g1; CK(cudaEventCreate(&g0)); CK(cudaEventCreate(&g1));
  for (int i = 0; i < 3; i++) gemm();
  CK(cudaStreamSynchronize(gs));
  using clk = std::chrono::steady_clock;
  // Runs the receiver until `until` completes (or for `secs` when until is null); returns bytes placed.
  struct Result { double bytes; double secs; long launches; };
  auto receiver = [&](int from_host, int depth, double rate_gbs, cudaEvent_t until, double secs) {
    unsigned char* base = from_host ? hsrc_dev : src;
    const double gap = chunk / (rate_gbs * 1e9);
    const auto t0 = clk::now();
    double next_arrival = 0;
    size_t arrived = 0, launched_upto = 0, placed = 0, next_chunk = 0;
    long launches = 0;
    std::vector<size_t> upto(max_depth);  // chunks covered by each in-flight launch, oldest first
    int head = 0, inflight = 0;
    for (;;) {
      const double now = std::chrono::duration<double>(clk::now() - t0).count();
      if (until ? cudaEventQuery(until) != cudaErrorNotReady : now >= secs) break;
      while (now >= next_arrival && arrived - placed < (size_t)slots) { arrived++; next_arrival += gap; }
      if (now >= next_arrival) next_arrival = now;  // slots full: the sender waits
      while (inflight > 0 && cudaEventQuery(ev[head]) == cudaSuccess) { placed = upto[head]; head = (head + 1) % max_depth; inflight--; }
      if (arrived > launched_upto && inflight < depth) {
        TcpxrBatch bt; bt.njobs = 0; bt.total = 0;
        for (; launched_upto < arrived && bt.njobs < TCPXR_MAX_JOBS; launched_upto++) {
          TcpxrJob& j = bt.jobs[bt.njobs++];
          j.records = (unsigned long long)(hrec_dev + (next_chunk++ % nchunks) * per_chunk);
          j.bounce = (unsigned long long)base; j.dst = (unsigned long long)dst; j.first = bt.total; j.count = per_chunk;
          bt.total += per_chunk;
        }
        const int slot = (head + inflight) % max_depth;
        cudaStream_t s = ps[launches & 1];
        tcpxr_unpack<<<std::min(bt.total / TCPXR_TILE, (unsigned)sms * 16), TCPXR_WARPS * 32, 0, s>>>(bt);
        CK(cudaEventRecord(ev[slot], s));
        upto[slot] = launched_upto;
        inflight++;
        launches++;
      }
    }
    CK(cudaDeviceSynchronize());
    placed = launched_upto;
    return Result{(double)placed * chunk, std::chrono::duration<double>(clk::now() - t0).count(), launches};
  };
  for (int from_host = 0; from_host < 2; from_host++) {
    for (double rate : {15.0, 40.0}) {
      const Result r0 = receiver(from_host, 8, rate, nullptr, 0.2);
      printf("receiver from %-6s at up to %4.0f GB/s, alone: %.1f GB/s placed, %.1f chunks per launch (depth 8)\n",
             from_host ? "host" : "device", rate, r0.bytes / r0.secs / 1e9, r0.bytes / chunk / std::max(1L, r0.launches));
      for (int depth : {8, 2, 1}) {
        double alone = 0, beside = 0, bytes = 0, secs = 0;
        long launches = 0;
        int n_alone = 0, n_beside = 0;
        for (int round = 0; round < 12; round++) {
          const bool traffic = round & 1;
          CK(cudaEventRecord(g0, gs));
          for (int i = 0; i < batch; i++) gemm();
          CK(cudaEventRecord(g1, gs));
          if (traffic) {
            const Result r = receiver(from_host, depth, rate, g1, 0);
            if (round >= 2) { bytes += r.bytes; secs += r.secs; launches += r.launches; }
          }
          CK(cudaEventSynchronize(g1));
          float ms; CK(cudaEventElapsedTime(&ms, g0, g1));
          if (round < 2) continue;  // warm-up
          if (traffic) { beside += ms; n_beside++; } else { alone += ms; n_alone++; }
        }
        CK(cudaGetLastError());
        printf("  beside the GEMM, depth %d: GEMM %.2f ms alone, %.2f ms beside: ratio %.3f; placed %.1f GB/s, %.1f chunks per launch\n",
               depth, alone / n_alone, beside / n_beside, (alone / n_alone) / (beside / n_beside), bytes / secs / 1e9,
               bytes / chunk / std::max(1L, launches));
      }
    }
  }
  return 0;
}
