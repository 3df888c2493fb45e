// Unpack kernel variants against cudaMemcpy D2D (runs 14 and 15, docs/BENCHMARKS.md section 2).
// Not part of tcpxr; built with nvcc on the GPU machine, see README.md beside this file.
// tcpxr's own kernel (tcpxr_unpack, the tiled one) and the rejected persistent variant.
#include "harness.h"
#include "kernel_persistent.cu"
#ifdef OLD
#define VARIANT "old kernel (tile 8)"
#else
#define STR2(x) #x
#define STR(x) STR2(x)
#define VARIANT "new kernel G=" STR(TCPXR_GROUP)
#endif

// Two records at once when both are whole aligned pages: 16 loads in flight per lane.
__device__ __forceinline__ bool page16(unsigned long long s, unsigned long long d, unsigned int l) {
  return l == 4096 && ((s | d) & 15) == 0;
}
template <int G, int BLOCK>
__global__ void __launch_bounds__(BLOCK) unpack_warp2(const TcpxrBatch batch) {
  __shared__ TcpxrJob jobs[TCPXR_MAX_JOBS];
  for (int i = threadIdx.x; i < batch.njobs; i += blockDim.x) jobs[i] = batch.jobs[i];
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const unsigned int W = gridDim.x * (BLOCK / 32);
  const unsigned int ngroups = (batch.total + G - 1) / G;
  unsigned int g = blockIdx.x * (BLOCK / 32) + (threadIdx.x >> 5);
  unsigned long long s, d; unsigned int l;
  tcpxr_record(jobs, batch.njobs, batch.total, lane < G ? g * G + lane : 0xffffffffu, s, d, l);
  while (g < ngroups) {
    const unsigned int gn = g + W;
    unsigned long long sn, dn; unsigned int ln;
    tcpxr_record(jobs, batch.njobs, batch.total, (lane < G && gn < ngroups) ? gn * G + lane : 0xffffffffu, sn, dn, ln);
#pragma unroll 1
    for (int k = 0; k < G; k += 2) {
      const unsigned long long s0 = __shfl_sync(0xffffffffu, s, k), d0 = __shfl_sync(0xffffffffu, d, k);
      const unsigned int l0 = __shfl_sync(0xffffffffu, l, k);
      const unsigned long long s1 = __shfl_sync(0xffffffffu, s, k + 1), d1 = __shfl_sync(0xffffffffu, d, k + 1);
      const unsigned int l1 = __shfl_sync(0xffffffffu, l, k + 1);
      if (page16(s0, d0, l0) && page16(s1, d1, l1)) {
        const uint4* a = (const uint4*)s0; const uint4* b = (const uint4*)s1;
        uint4* x = (uint4*)d0; uint4* y = (uint4*)d1;
        uint4 va[8], vb[8];
#pragma unroll
        for (int j = 0; j < 8; j++) { va[j] = a[lane + 32 * j]; vb[j] = b[lane + 32 * j]; }
#pragma unroll
        for (int j = 0; j < 8; j++) { x[lane + 32 * j] = va[j]; y[lane + 32 * j] = vb[j]; }
      } else {
        tcpxr_copy_warp((char*)d0, (const char*)s0, l0, lane);
        tcpxr_copy_warp((char*)d1, (const char*)s1, l1, lane);
      }
    }
    g = gn; s = sn; d = dn; l = ln;
  }
}

__global__ void plain_copy(const uint4* __restrict__ s, uint4* __restrict__ d, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 a = s[i], b = s[i + stride], c = s[i + 2 * stride], e = s[i + 3 * stride];
    d[i] = a; d[i + stride] = b; d[i + 2 * stride] = c; d[i + 3 * stride] = e;
  }
  for (; i < n; i += stride) d[i] = s[i];
}

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? atoi(argv[1]) : 64;
  Pages pg(mib);
  const size_t total = pg.total, per_chunk = pg.per_chunk, nchunks = pg.nchunks;
  unsigned char *src = pg.src, *dst = pg.dst;
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  auto timeit = [&](auto f) {
    float best = 1e9;
    for (int it = 0; it < 12; it++) {
      CK(cudaEventRecord(e0, st)); f(); CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (it >= 2) best = std::min(best, ms);
    }
    CK(cudaGetLastError());
    return best;
  };
  const float memcpy_ms = timeit([&] { CK(cudaMemcpyAsync(dst, src, total, cudaMemcpyDeviceToDevice, st)); });
  const float plain_ms = timeit([&] { plain_copy<<<sms * 8, 256, 0, st>>>((const uint4*)src, (uint4*)dst, total / 16); });
  auto gbs = [&](float ms) { return total / (ms / 1e3) / 1e9; };
  printf("%zu MiB, %d SMs: memcpy D2D %.1f GB/s; plain copy kernel %.1f GB/s (%.0f%%)\n", mib, sms, gbs(memcpy_ms), gbs(plain_ms), 100 * memcpy_ms / plain_ms);
  std::vector<unsigned char> want(total), got(total);
  for (int mis : {0, 1}) {  // aligned, then 0-63 B off
    pg.layout(mis, &want);
    for (int where = 0; where < 2; where++) {
      ulonglong2* recs = where ? pg.drec : pg.hrec_dev;
      auto run_batches = [&](auto launch) {
        TcpxrBatch b; b.njobs = 0; b.total = 0;
        for (size_t c = 0; c < nchunks; c++) {
          TcpxrJob& j = b.jobs[b.njobs++];
          j.records = (unsigned long long)(recs + c * per_chunk); j.bounce = (unsigned long long)src; j.dst = (unsigned long long)dst;
          j.first = b.total; j.count = per_chunk; b.total += per_chunk;
          if (b.njobs == TCPXR_MAX_JOBS || c + 1 == nchunks) { launch(b); b.njobs = 0; b.total = 0; }
        }
      };
      auto check = [&](const char* name, float ms) {
        CK(cudaMemcpy(got.data(), dst, total, cudaMemcpyDeviceToHost));
        const bool ok = got == want;
        printf("  %-34s %s %-6s %8.1f GB/s %4.0f%% of memcpy  %s\n", name, mis ? "misaligned" : "aligned   ", where ? "devrec" : "hostrec", gbs(ms), 100 * memcpy_ms / ms, ok ? "ok" : "WRONG");
        CK(cudaMemset(dst, 0, total));
      };
      float ms;
#ifdef OLD
      ms = timeit([&] { run_batches([&](const TcpxrBatch& b) { unsigned grid = std::min((b.total + 7) / 8, (unsigned)sms * 16); tcpxr_unpack<<<grid, 256, 0, st>>>(b); }); });
      { char name[96]; snprintf(name, sizeof name, "%s jobs/launch %d", VARIANT, TCPXR_MAX_JOBS); check(name, ms); }
      {
        static cudaStream_t st2 = nullptr; static cudaEvent_t fork, join;
        if (!st2) { CK(cudaStreamCreateWithFlags(&st2, cudaStreamNonBlocking)); CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming)); }
        ms = timeit([&] {
          CK(cudaEventRecord(fork, st)); CK(cudaStreamWaitEvent(st2, fork, 0));
          int k = 0;
          run_batches([&](const TcpxrBatch& b) { unsigned grid = std::min((b.total + 7) / 8, (unsigned)sms * 16); tcpxr_unpack<<<grid, 256, 0, (k++ & 1) ? st2 : st>>>(b); });
          CK(cudaEventRecord(join, st2)); CK(cudaStreamWaitEvent(st, join, 0));
        });
        char name[96]; snprintf(name, sizeof name, "%s, 2 streams in turn", VARIANT);
        check(name, ms);
      }
#else
      int per_sm = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tcpxr_unpack_persistent, 256, 0));
      for (int div : {1, 2, 4}) {
        const unsigned resident = std::max(1u, (unsigned)(sms * per_sm / div));
        ms = timeit([&] { run_batches([&](const TcpxrBatch& b) { unsigned groups = (b.total + TCPXR_GROUP - 1) / TCPXR_GROUP; unsigned grid = std::min((groups + 7) / 8, resident); tcpxr_unpack_persistent<<<grid, 256, 0, st>>>(b); }); });
        char name[96]; snprintf(name, sizeof name, "%s occ %d/%d", VARIANT, per_sm, div);
        check(name, ms);
      }
      if (TCPXR_GROUP == 4) {
        ms = timeit([&] { run_batches([&](const TcpxrBatch& b) { unsigned groups = (b.total + 3) / 4; unsigned grid = std::min((groups + 7) / 8, (unsigned)sms * 4); unpack_warp2<4, 256><<<grid, 256, 0, st>>>(b); }); });
        check("2 pages at once, G=4 x4/SM", ms);
      }
#endif
    }
  }
  return 0;
}
