// Run 17: where the unpack kernel loses its last points at 64 MiB, and what the copy engines do
// with the same fragments (docs/BENCHMARKS.md sections 2c and 10). Not part of tcpxr; built with
// nvcc on the GPU machine, see README.md beside this file.
//
// Same bytes as `tcpxr-bench gpu`: 4 KiB fragments from shuffled places 4160 B apart (aligned, or
// 0-63 B off), written contiguously, jobs of 512 KiB. Rows:
// - tcpxr's kernel (src/gpu/kernel.cu, shape set with -DTCPXR_WARPS / -DTCPXR_RECORDS_PER_WARP),
//   jobs per launch 120/64/32/16, launches alternating over 2 streams, records host-mapped or in
//   device memory;
// - each timed two ways: "host" starts the clock and then issues the work, like tcpxr-bench gpu;
//   "queued" holds the streams behind a gate kernel until every launch is issued, so the figure is
//   the GPU's time alone (steady streaming, where launches are issued while earlier ones run);
// - the same kernel with its next tile's records fetched while it copies the current one
//   (`prefetch`), its grid at the occupancy (each block then loops over tiles) or at 16 per SM.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "../../../../src/gpu/kernel.cu"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
#define STR2(x) #x
#define STR(x) STR2(x)

__global__ void gate(volatile int* flag) {
  while (*flag == 0) {
  }
}

// The record of tile slot `i` (< TCPXR_TILE) of tile t, or a zero length past the end.
__device__ __forceinline__ void pf_fetch(const TcpxrJob* jobs, int njobs, unsigned int total, unsigned int r,
                                         ulonglong2& m, int& job) {
  m = make_ulonglong2(0, 0);
  job = -1;
  if (r >= total) return;
  int lo = 0, hi = njobs - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (jobs[mid].first <= r) lo = mid; else hi = mid - 1;
  }
  job = lo;
  m = __ldcv((const ulonglong2*)jobs[lo].records + (r - jobs[lo].first));
}

// tcpxr_unpack with the next tile's records in flight while the block copies the current tile.
__global__ void __launch_bounds__(TCPXR_WARPS * 32, TCPXR_MIN_BLOCKS) unpack_prefetch(const TcpxrBatch batch) {
  __shared__ TcpxrJob jobs[TCPXR_MAX_JOBS];
  __shared__ unsigned long long tile_src[TCPXR_TILE], tile_dst[TCPXR_TILE];
  __shared__ unsigned int tile_len[TCPXR_TILE];
  for (int i = threadIdx.x; i < batch.njobs; i += blockDim.x) jobs[i] = batch.jobs[i];
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned int tiles = (batch.total + TCPXR_TILE - 1) / TCPXR_TILE;
  ulonglong2 m;
  int job = -1;
  unsigned int t = blockIdx.x;
  if (threadIdx.x < TCPXR_TILE) pf_fetch(jobs, batch.njobs, batch.total, t * TCPXR_TILE + threadIdx.x, m, job);
  for (; t < tiles; t += gridDim.x) {
    if (threadIdx.x < TCPXR_TILE) {
      tile_len[threadIdx.x] = job < 0 ? 0 : (unsigned int)(m.x >> 32);
      tile_src[threadIdx.x] = job < 0 ? 0 : jobs[job].bounce + (unsigned int)(m.x & 0xffffffffull);
      tile_dst[threadIdx.x] = job < 0 ? 0 : jobs[job].dst + m.y;
    }
    __syncthreads();
    if (threadIdx.x < TCPXR_TILE)
      pf_fetch(jobs, batch.njobs, batch.total, (t + gridDim.x) * TCPXR_TILE + threadIdx.x, m, job);
    for (int k = 0; k < TCPXR_RECORDS_PER_WARP; k++) {
      const int i = warp * TCPXR_RECORDS_PER_WARP + k;
      tcpxr_copy_warp((char*)tile_dst[i], (const char*)tile_src[i], tile_len[i], lane);
    }
    __syncthreads();
  }
}

static unsigned long long rng_state = 0x12345678;
static unsigned long long rnd() { rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17; return rng_state; }

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? atoi(argv[1]) : 64;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const size_t total = mib << 20, frag = 4096, stride = frag + 64, chunk = 512 << 10;
  const size_t nfrag = total / frag, per_chunk = chunk / frag, nchunks = nfrag / per_chunk;
  const size_t src_len = nfrag * stride + 4096;
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int lo_prio, hi_prio; CK(cudaDeviceGetStreamPriorityRange(&lo_prio, &hi_prio));
  cudaStream_t st[2];
  for (auto& s : st) CK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, hi_prio));
  cudaEvent_t e0, e1, fork, join;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  int* flag; CK(cudaHostAlloc(&flag, 4, cudaHostAllocMapped));
  int* flag_dev; CK(cudaHostGetDevicePointer(&flag_dev, flag, 0));
  std::vector<unsigned char> hsrc(src_len);
  for (size_t i = 0; i < src_len; i++) hsrc[i] = (unsigned char)(i * 7 + i / 4093);
  unsigned char *src, *dst, *hsrc_pinned;
  CK(cudaMalloc(&src, src_len)); CK(cudaMalloc(&dst, total));
  CK(cudaHostAlloc(&hsrc_pinned, src_len, cudaHostAllocMapped));
  memcpy(hsrc_pinned, hsrc.data(), src_len);
  CK(cudaMemcpy(src, hsrc.data(), src_len, cudaMemcpyHostToDevice));
  ulonglong2* hrec; CK(cudaHostAlloc(&hrec, nfrag * 16, cudaHostAllocMapped));
  ulonglong2* hrec_dev; CK(cudaHostGetDevicePointer(&hrec_dev, hrec, 0));
  ulonglong2* drec; CK(cudaMalloc(&drec, nfrag * 16));
  // Times f: queued = behind a gate released once f has issued everything.
  auto timeit = [&](bool queued, auto f) {
    float best = 1e9;
    for (int it = 0; it < 12; it++) {
      if (queued) { *(volatile int*)flag = 0; gate<<<1, 1, 0, st[0]>>>(flag_dev); }
      CK(cudaEventRecord(e0, st[0]));
      CK(cudaEventRecord(fork, st[0])); CK(cudaStreamWaitEvent(st[1], fork, 0));
      f();
      CK(cudaEventRecord(join, st[1])); CK(cudaStreamWaitEvent(st[0], join, 0));
      CK(cudaEventRecord(e1, st[0]));
      if (queued) *(volatile int*)flag = 1;
      CK(cudaEventSynchronize(e1));
      float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); if (it >= 2) best = std::min(best, ms);
    }
    CK(cudaGetLastError());
    return best;
  };
  auto gbs = [&](float ms) { return total / (ms / 1e3) / 1e9; };
  float memcpy_ms[2];
  for (int q = 0; q < 2; q++) memcpy_ms[q] = timeit(q, [&] { CK(cudaMemcpyAsync(dst, src, total, cudaMemcpyDeviceToDevice, st[0])); });
  const float h2d_ms = timeit(true, [&] { CK(cudaMemcpyAsync(dst, hsrc_pinned, total, cudaMemcpyHostToDevice, st[0])); });
  int occ0 = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ0, tcpxr_unpack, TCPXR_WARPS * 32, 0));
  printf("tcpxr_unpack: %d blocks per SM resident (min blocks asked %d)\n", occ0, TCPXR_MIN_BLOCKS);
  printf("%zu MiB, %d SMs, kernel %d warps x %d records per warp: memcpy D2D %.1f GB/s (host) %.1f GB/s (queued); memcpy H2D pinned %.1f GB/s\n",
         mib, sms, TCPXR_WARPS, TCPXR_RECORDS_PER_WARP, gbs(memcpy_ms[0]), gbs(memcpy_ms[1]), gbs(h2d_ms));
  std::vector<unsigned char> want(total), got(total);
  for (int mis : {0, 63}) {
    std::vector<size_t> order(nfrag);
    for (size_t i = 0; i < nfrag; i++) order[i] = i;
    for (size_t i = nfrag - 1; i > 0; i--) std::swap(order[i], order[rnd() % (i + 1)]);
    for (size_t i = 0; i < nfrag; i++) {
      const unsigned long long so = order[i] * stride + (mis ? rnd() % (mis + 1) : 0);
      hrec[i].x = so | ((unsigned long long)frag << 32);
      hrec[i].y = i * frag;
      memcpy(&want[i * frag], &hsrc[so], frag);
    }
    CK(cudaMemcpy(drec, hrec, nfrag * 16, cudaMemcpyHostToDevice));
    auto check = [&](const char* name, const char* where, int q, float ms) {
      CK(cudaMemcpy(got.data(), dst, total, cudaMemcpyDeviceToHost));
      const bool ok = got == want;
      printf("  %-44s %s %-7s %-6s %8.1f GB/s %4.0f%% of memcpy  %s\n", name, mis ? "misaligned" : "aligned   ", where,
             q ? "queued" : "host", gbs(ms), 100 * memcpy_ms[q] / ms, ok ? "ok" : "WRONG");
      CK(cudaMemset(dst, 0, total));
    };
    for (int where = 0; where < 2; where++) {
      ulonglong2* recs = where ? drec : hrec_dev;
      int occ = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, unpack_prefetch, TCPXR_WARPS * 32, 0));
      for (int variant = 0; variant < 3; variant++)
      for (int jobs : {120, 64}) {
        if (jobs > TCPXR_MAX_JOBS) continue;
        for (int q = 0; q < 2; q++) {
          const float ms = timeit(q, [&] {
            TcpxrBatch b; b.njobs = 0; b.total = 0;
            int k = 0;
            for (size_t c = 0; c < nchunks; c++) {
              TcpxrJob& j = b.jobs[b.njobs++];
              j.records = (unsigned long long)(recs + c * per_chunk); j.bounce = (unsigned long long)src; j.dst = (unsigned long long)dst;
              j.first = b.total; j.count = per_chunk; b.total += per_chunk;
              if (b.njobs == jobs || c + 1 == nchunks) {
                const unsigned cap = variant == 1 ? (unsigned)(sms * occ) : (unsigned)sms * 16;
                const unsigned grid = std::min((b.total + TCPXR_TILE - 1) / TCPXR_TILE, cap);
                if (variant == 0) tcpxr_unpack<<<grid, TCPXR_WARPS * 32, 0, st[k & 1]>>>(b);
                else unpack_prefetch<<<grid, TCPXR_WARPS * 32, 0, st[k & 1]>>>(b);
                k++;
                b.njobs = 0; b.total = 0;
              }
            }
          });
          char vname[48];
          if (variant == 0) snprintf(vname, sizeof vname, "kernel");
          else if (variant == 1) snprintf(vname, sizeof vname, "prefetch, grid %d/SM", occ);
          else snprintf(vname, sizeof vname, "prefetch, grid 16/SM");
          char name[96]; snprintf(name, sizeof name, "%s %dx%d, %d jobs/launch", vname, TCPXR_WARPS, TCPXR_RECORDS_PER_WARP, jobs);
          check(name, where ? "devrec" : "hostrec", q, ms);
        }
      }
    }
  }
  return 0;
}
