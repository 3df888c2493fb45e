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
#include "harness.h"

#define STR2(x) #x
#define STR(x) STR2(x)

// tcpxr_unpack with the next tile's records in flight while the block copies the current tile.
__global__ void __launch_bounds__(TCPXR_WARPS * 32, TCPXR_MIN_BLOCKS) unpack_prefetch(const TcpxrBatch batch) {
  __shared__ TcpxrJob jobs[TCPXR_MAX_JOBS];
  __shared__ unsigned long long tile_src[TCPXR_TILE], tile_dst[TCPXR_TILE];
  __shared__ unsigned int tile_len[TCPXR_TILE];
  for (int i = threadIdx.x; i < batch.njobs; i += blockDim.x) jobs[i] = batch.jobs[i];
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned int tiles = (batch.total + TCPXR_TILE - 1) / TCPXR_TILE;
  unsigned long long src, dst;
  unsigned int len;
  unsigned int t = blockIdx.x;
  if (threadIdx.x < TCPXR_TILE) tcpxr_record(jobs, batch.njobs, batch.total, t * TCPXR_TILE + threadIdx.x, src, dst, len);
  for (; t < tiles; t += gridDim.x) {
    if (threadIdx.x < TCPXR_TILE) {
      tile_len[threadIdx.x] = len;
      tile_src[threadIdx.x] = src;
      tile_dst[threadIdx.x] = dst;
    }
    __syncthreads();
    if (threadIdx.x < TCPXR_TILE)
      tcpxr_record(jobs, batch.njobs, batch.total, (t + gridDim.x) * TCPXR_TILE + threadIdx.x, src, dst, len);
    for (int k = 0; k < TCPXR_RECORDS_PER_WARP; k++) {
      const int i = warp * TCPXR_RECORDS_PER_WARP + k;
      tcpxr_copy_warp((char*)tile_dst[i], (const char*)tile_src[i], tile_len[i], lane);
    }
    __syncthreads();
  }
}

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? atoi(argv[1]) : 64;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  Pages pg(mib);
  const size_t total = pg.total, per_chunk = pg.per_chunk, nchunks = pg.nchunks;
  unsigned char *src = pg.src, *dst = pg.dst, *hsrc_pinned;
  CK(cudaHostAlloc(&hsrc_pinned, pg.src_len, cudaHostAllocMapped));
  memcpy(hsrc_pinned, pg.hsrc.data(), pg.src_len);
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  Timing timeit;
  cudaStream_t* st = timeit.st;
  auto gbs = [&](float ms) { return total / (ms / 1e3) / 1e9; };
  float memcpy_ms[2];
  for (int q = 0; q < 2; q++) memcpy_ms[q] = timeit(q, [&] { CK(cudaMemcpyAsync(dst, src, total, cudaMemcpyDeviceToDevice, st[0])); });
  const float h2d_ms = timeit(true, [&] { CK(cudaMemcpyAsync(dst, hsrc_pinned, total, cudaMemcpyHostToDevice, st[0])); });
  int occ0 = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ0, tcpxr_unpack, TCPXR_WARPS * 32, 0));
  printf("tcpxr_unpack: %d blocks per SM resident (min blocks asked %d)\n", occ0, TCPXR_MIN_BLOCKS);
  printf("%zu MiB, %d SMs, kernel %d warps x %d records per warp: memcpy D2D %.1f GB/s (host) %.1f GB/s (queued); memcpy H2D pinned %.1f GB/s\n",
         mib, sms, TCPXR_WARPS, TCPXR_RECORDS_PER_WARP, gbs(memcpy_ms[0]), gbs(memcpy_ms[1]), gbs(h2d_ms));
  std::vector<unsigned char> want(total), got(total);
  for (int mis : {0, 1}) {  // aligned, then 0-63 B off
    pg.layout(mis, &want);
    auto check = [&](const char* name, const char* where, int q, float ms) {
      CK(cudaMemcpy(got.data(), dst, total, cudaMemcpyDeviceToHost));
      const bool ok = got == want;
      printf("  %-44s %s %-7s %-6s %8.1f GB/s %4.0f%% of memcpy  %s\n", name, mis ? "misaligned" : "aligned   ", where,
             q ? "queued" : "host", gbs(ms), 100 * memcpy_ms[q] / ms, ok ? "ok" : "WRONG");
      CK(cudaMemset(dst, 0, total));
    };
    for (int where = 0; where < 2; where++) {
      ulonglong2* recs = where ? pg.drec : pg.hrec_dev;
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
