// Runs 22-23, 29, 30 and 34: changes to tcpxr's unpack kernel, alone and together, on the bytes of
// `tcpxr-bench gpu` (docs/BENCHMARKS.md section 2d). Not part of tcpxr; built with nvcc on the GPU
// machine, see README.md beside this file. `./flags MiB rounds 22|23|29|30|34` runs one run's rows.
//
// The kernel below is src/gpu/kernel.cu's tcpxr_unpack with each change behind a flag:
// - NOSMEM: the block does not copy the launch's jobs into shared memory; the record lookup
//   searches them where they are, in the parameter block (__grid_constant__), which saves a 2 KiB
//   fill and a barrier per block (most blocks copy one tile and exit).
// - SHFL: when source and destination disagree modulo 16, each lane loads one aligned source vector
//   (eight for a page) and takes its neighbour's from the next lane with a shuffle, instead of
//   loading both vectors it straddles: half the load instructions.
// - STREAM: loads and stores marked streaming (ld.global.cs / st.global.cs): read once, written once.
// - L2HINT: loads through the non-coherent path with no L1 allocation and a 256-byte L2 prefetch.
// - PREFETCH: the grid is capped at the occupancy, and each block fetches its next tile's records
//   while it copies the current one.
// - DEPTH4: four 16-byte loads in flight per lane instead of eight (fewer registers, so more
//   blocks per SM; MINB, the second template argument, is the blocks per SM the compiler must fit).
// Run 23 adds rows with the records in device memory (`devrec`: what the PCIe read of the records
// costs) and a plain grid-stride copy kernel (what any copy by SMs reaches). Run 29 asks whether
// that cost is the read's latency: device records with a delay added after each record load
// (the third template argument, in SM cycles), a block that loads the records of all its tiles
// at once (`unpack_allfetch`, grid at the occupancy), and the latency of one dependent 8-byte read
// of host-mapped and of device memory (`chase`). Run 30: `unpack_async`, where each warp moves its
// page into shared memory with cp.async (no registers held while the loads fly) and shifts it out
// from there, so more blocks fit per SM and more bytes are in flight.
// Layouts: 4 KiB fragments from shuffled places 4160 B apart, aligned or 0-63 B off, written
// contiguously (as tcpxr-bench gpu), and `contig`: in order and adjacent, so the copy is one plain
// contiguous copy cut into pages (what the scatter costs). Records host-mapped, as TCPX publishes
// them; jobs of 512 KiB, 64 per launch, launches alternating over two streams.
#include "harness.h"

enum { NOSMEM = 1, SHFL = 2, STREAM = 4, L2HINT = 8, PREFETCH = 16, DEPTH4 = 32 };

template <int F>
__device__ __forceinline__ uint4 ld16(const uint4* p) {
  if constexpr ((F & L2HINT) != 0) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
  } else if constexpr ((F & STREAM) != 0) {
    return __ldcs(p);
  } else {
    return *p;
  }
}
template <int F>
__device__ __forceinline__ void st16(uint4* p, const uint4 v) {
  if constexpr ((F & STREAM) != 0) __stcs(p, v); else *p = v;
}
__device__ __forceinline__ uint4 shfl16(const uint4 v, int from) {
  uint4 o;
  o.x = __shfl_sync(0xffffffffu, v.x, from);
  o.y = __shfl_sync(0xffffffffu, v.y, from);
  o.z = __shfl_sync(0xffffffffu, v.z, from);
  o.w = __shfl_sync(0xffffffffu, v.w, from);
  return o;
}

template <int F>
__device__ void copy_warp_x(char* dst, const char* src, unsigned int len, int lane) {
  const unsigned long long d = (unsigned long long)dst, s = (unsigned long long)src;
  unsigned int head = (unsigned int)((16 - (d & 15)) & 15);
  if (head > len) head = len;
  tcpxr_copy_bytes(dst, src, head, lane);
  const unsigned int n16 = (len - head) >> 4;
  uint4* d16 = (uint4*)(dst + head);
  if (((d ^ s) & 15) == 0) {
    const uint4* s16 = (const uint4*)(src + head);
    unsigned int i = lane;
    if constexpr ((F & DEPTH4) == 0)
    for (; i + 224 < n16; i += 256) {
      uint4 v[8];
#pragma unroll
      for (int k = 0; k < 8; k++) v[k] = ld16<F>(s16 + i + 32 * k);
#pragma unroll
      for (int k = 0; k < 8; k++) st16<F>(d16 + i + 32 * k, v[k]);
    }
    for (; i + 96 < n16; i += 128) {
      uint4 v[4];
#pragma unroll
      for (int k = 0; k < 4; k++) v[k] = ld16<F>(s16 + i + 32 * k);
#pragma unroll
      for (int k = 0; k < 4; k++) st16<F>(d16 + i + 32 * k, v[k]);
    }
    for (; i < n16; i += 32) st16<F>(d16 + i, ld16<F>(s16 + i));
  } else {
    const char* s2 = src + head;
    const unsigned int r = (unsigned int)((unsigned long long)s2 & 15);
    const unsigned int q = r >> 2, sh = (r & 3) * 8;
    const uint4* sv = (const uint4*)((unsigned long long)s2 & ~15ull);
    unsigned int base = 0;
    if constexpr ((F & SHFL) != 0) {
      // Warp-uniform bounds (the shuffles need every lane). Lane 31's second vector is lane 0's
      // next one; for the last group lane 0 loads it (sv[base + 32 * D]: read by the plain path too).
      constexpr int D = (F & DEPTH4) ? 4 : 8;
      for (; base + 32 * D <= n16; base += 32 * D) {
        uint4 a[D];
#pragma unroll
        for (int k = 0; k < D; k++) a[k] = ld16<F>(sv + base + lane + 32 * k);
        uint4 extra = make_uint4(0, 0, 0, 0);
        if (lane == 0) extra = ld16<F>(sv + base + 32 * D);
#pragma unroll
        for (int k = 0; k < D; k++) {
          const uint4 give = lane == 0 ? (k < D - 1 ? a[k + 1] : extra) : a[k];
          const uint4 b = shfl16(give, (lane + 1) & 31);
          st16<F>(d16 + base + lane + 32 * k, tcpxr_shift16(a[k], b, q, sh));
        }
      }
    }
    unsigned int i = base + lane;
    for (; i + 96 < n16; i += 128) {
      uint4 a[4], b[4];
#pragma unroll
      for (int k = 0; k < 4; k++) {
        a[k] = ld16<F>(sv + i + 32 * k);
        b[k] = ld16<F>(sv + i + 32 * k + 1);
      }
#pragma unroll
      for (int k = 0; k < 4; k++) st16<F>(d16 + i + 32 * k, tcpxr_shift16(a[k], b[k], q, sh));
    }
    for (; i < n16; i += 32) st16<F>(d16 + i, tcpxr_shift16(ld16<F>(sv + i), ld16<F>(sv + i + 1), q, sh));
  }
  const unsigned int done = head + (n16 << 4);
  tcpxr_copy_bytes(dst + done, src + done, len - done, lane);
}

template <int F, int MINB = 1, int DELAY = 0>
__global__ void __launch_bounds__(TCPXR_WARPS * 32, MINB) unpack_x(const __grid_constant__ TcpxrBatch batch) {
  __shared__ TcpxrJob sjobs[(F & NOSMEM) ? 1 : TCPXR_MAX_JOBS];
  __shared__ unsigned long long tile_src[TCPXR_TILE], tile_dst[TCPXR_TILE];
  __shared__ unsigned int tile_len[TCPXR_TILE];
  const TcpxrJob* jobs = batch.jobs;
  if constexpr ((F & NOSMEM) == 0) {
    for (int i = threadIdx.x; i < batch.njobs; i += blockDim.x) sjobs[i] = batch.jobs[i];
    jobs = sjobs;
    __syncthreads();
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned int tiles = (batch.total + TCPXR_TILE - 1) / TCPXR_TILE;
  unsigned int len = 0;
  unsigned long long src = 0, dst = 0;
  auto fetch = [&](unsigned int t) {
    if (threadIdx.x >= TCPXR_TILE) return;
    tcpxr_record(jobs, batch.njobs, batch.total, t * TCPXR_TILE + threadIdx.x, src, dst, len);
    if constexpr (DELAY > 0) {  // the record has arrived (the asm consumes it); then wait
      asm volatile("" ::"l"(src), "l"(dst), "r"(len));
      const long long t0 = clock64();
      while (clock64() - t0 < DELAY) {
      }
    }
  };
  unsigned int t = blockIdx.x;
  if constexpr ((F & PREFETCH) != 0) fetch(t);
  for (; t < tiles; t += gridDim.x) {
    if constexpr ((F & PREFETCH) == 0) fetch(t);
    if (threadIdx.x < TCPXR_TILE) {
      tile_src[threadIdx.x] = src;
      tile_dst[threadIdx.x] = dst;
      tile_len[threadIdx.x] = len;
    }
    __syncthreads();
    if constexpr ((F & PREFETCH) != 0) fetch(t + gridDim.x);
    for (int k = 0; k < TCPXR_RECORDS_PER_WARP; k++) {
      const int i = warp * TCPXR_RECORDS_PER_WARP + k;
      copy_warp_x<F>((char*)tile_dst[i], (const char*)tile_src[i], tile_len[i], lane);
    }
    if (t + gridDim.x < tiles) __syncthreads();  // the tile is copied before it is overwritten
  }
}

// Each block loads the records of up to K of its tiles (t, t + grid, ...) in one go, then its
// warps copy them without another record load; the grid is meant to be at the occupancy.
template <int K>
__global__ void __launch_bounds__(TCPXR_WARPS * 32, 1) unpack_allfetch(const __grid_constant__ TcpxrBatch batch) {
  __shared__ unsigned long long ssrc[TCPXR_TILE * K], sdst[TCPXR_TILE * K];
  __shared__ unsigned int slen[TCPXR_TILE * K];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned int tiles = (batch.total + TCPXR_TILE - 1) / TCPXR_TILE;
  for (unsigned int t0 = blockIdx.x; t0 < tiles; t0 += gridDim.x * K) {
    if (threadIdx.x < TCPXR_TILE * K) {
      const unsigned int t = t0 + (threadIdx.x / TCPXR_TILE) * gridDim.x;
      unsigned long long src = 0, dst = 0;
      unsigned int len = 0;
      if (t < tiles)
        tcpxr_record(batch.jobs, batch.njobs, batch.total, t * TCPXR_TILE + threadIdx.x % TCPXR_TILE, src, dst, len);
      ssrc[threadIdx.x] = src;
      sdst[threadIdx.x] = dst;
      slen[threadIdx.x] = len;
    }
    __syncthreads();
    for (int k = 0; k < K; k++) {
      const int i = k * TCPXR_TILE + warp;
      tcpxr_copy_warp((char*)sdst[i], (const char*)ssrc[i], slen[i], lane);
    }
    if (t0 + gridDim.x * K < tiles) __syncthreads();
  }
}

// A warp's page: global -> shared with cp.async.cg (16-byte aligned source vectors, the aligned
// superset of the record's bytes), then shared -> registers -> global, funnel-shifted when source
// and destination disagree modulo 16. `buf` holds ASYNC_VECS + 1 vectors.
#define ASYNC_VECS 256
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned int a = (unsigned int)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(gmem) : "memory");
}
__device__ void copy_warp_async(char* dst, const char* src, unsigned int len, int lane, uint4* buf) {
  const unsigned long long d = (unsigned long long)dst;
  unsigned int head = (unsigned int)((16 - (d & 15)) & 15);
  if (head > len) head = len;
  tcpxr_copy_bytes(dst, src, head, lane);
  const unsigned int n16 = (len - head) >> 4;
  uint4* d16 = (uint4*)(dst + head);
  const char* s2 = src + head;
  const unsigned int r = (unsigned int)((unsigned long long)s2 & 15);
  const unsigned int q = r >> 2, sh = (r & 3) * 8;
  const uint4* sv = (const uint4*)((unsigned long long)s2 & ~15ull);
  for (unsigned int base = 0; base < n16; base += ASYNC_VECS) {
    const unsigned int cnt = min((unsigned int)ASYNC_VECS, n16 - base);
    const unsigned int nsrc = cnt + (r != 0);  // sv[base + cnt] holds record bytes when r != 0
    for (unsigned int j = lane; j < nsrc; j += 32) cp_async16(buf + j, sv + base + j);
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncwarp();
    if (r == 0) {
      for (unsigned int j = lane; j < cnt; j += 32) d16[base + j] = buf[j];
    } else {
      for (unsigned int j = lane; j < cnt; j += 32) d16[base + j] = tcpxr_shift16(buf[j], buf[j + 1], q, sh);
    }
    __syncwarp();  // every lane has read buf before the next pass refills it
  }
  const unsigned int done = head + (n16 << 4);
  tcpxr_copy_bytes(dst + done, src + done, len - done, lane);
}

template <int MINB>
__global__ void __launch_bounds__(TCPXR_WARPS * 32, MINB) unpack_async(const __grid_constant__ TcpxrBatch batch) {
  __shared__ uint4 pages[TCPXR_WARPS][ASYNC_VECS + 1];
  __shared__ unsigned long long tile_src[TCPXR_TILE], tile_dst[TCPXR_TILE];
  __shared__ unsigned int tile_len[TCPXR_TILE];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned int tiles = (batch.total + TCPXR_TILE - 1) / TCPXR_TILE;
  for (unsigned int t = blockIdx.x; t < tiles; t += gridDim.x) {
    if (threadIdx.x < TCPXR_TILE) {
      unsigned long long src, dst;
      unsigned int len;
      tcpxr_record(batch.jobs, batch.njobs, batch.total, t * TCPXR_TILE + threadIdx.x, src, dst, len);
      tile_src[threadIdx.x] = src;
      tile_dst[threadIdx.x] = dst;
      tile_len[threadIdx.x] = len;
    }
    __syncthreads();
    copy_warp_async((char*)tile_dst[warp], (const char*)tile_src[warp], tile_len[warp], lane, pages[warp]);
    if (t + gridDim.x < tiles) __syncthreads();
  }
}

// Run 34: how a block finds its records' jobs. The binary search of tcpxr_record reads the
// parameter block six times in a row for 64 jobs (constant memory, cold on every SM when a launch
// starts) before the record load itself can go. LOOKUP_DIRECT: job = r / count, one read (a
// bound only: the bench's jobs are all the same size). LOOKUP_BALLOT: warp 0's lanes read the
// jobs' first record numbers from a compact array after the jobs (two 128-byte lines, all at
// once) and count with ballots, then one read of the job: two reads in a row instead of seven.
enum { LOOKUP_SEARCH, LOOKUP_DIRECT, LOOKUP_BALLOT };
struct BatchFirst {
  TcpxrBatch b;
  unsigned int first[TCPXR_MAX_JOBS];  // b.jobs[i].first, packed
};

template <int L>
__global__ void __launch_bounds__(TCPXR_WARPS * 32, 1) unpack_lookup(const __grid_constant__ BatchFirst bf) {
  __shared__ unsigned long long tile_src[TCPXR_TILE], tile_dst[TCPXR_TILE];
  __shared__ unsigned int tile_len[TCPXR_TILE];
  const TcpxrBatch& batch = bf.b;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned int tiles = (batch.total + TCPXR_TILE - 1) / TCPXR_TILE;
  for (unsigned int t = blockIdx.x; t < tiles; t += gridDim.x) {
    if (warp == 0) {
      const unsigned int r0 = t * TCPXR_TILE;
      int job = 0;
      if constexpr (L == LOOKUP_BALLOT) {
        const unsigned int f0 = lane < batch.njobs ? bf.first[lane] : ~0u;
        const unsigned int f1 = lane + 32 < batch.njobs ? bf.first[lane + 32] : ~0u;
#pragma unroll
        for (int k = 0; k < TCPXR_TILE; k++) {  // jobs whose first record is <= r0 + k, less one
          const int c = __popc(__ballot_sync(~0u, f0 <= r0 + k)) + __popc(__ballot_sync(~0u, f1 <= r0 + k));
          if (lane == k) job = c - 1;
        }
      }
      if (lane < TCPXR_TILE) {
        const unsigned int r = r0 + lane;
        unsigned long long src = 0, dst = 0;
        unsigned int len = 0;
        if constexpr (L == LOOKUP_SEARCH) {
          tcpxr_record(batch.jobs, batch.njobs, batch.total, r, src, dst, len);
        } else if (r < batch.total) {
          if constexpr (L == LOOKUP_DIRECT) job = r / batch.jobs[0].count;
          const TcpxrJob& j = batch.jobs[job];
          const ulonglong2 m = __ldcv((const ulonglong2*)j.records + (r - j.first));
          len = (unsigned int)(m.x >> 32);
          src = j.bounce + (unsigned int)(m.x & 0xffffffffull);
          dst = j.dst + m.y;
        }
        tile_src[lane] = src;
        tile_dst[lane] = dst;
        tile_len[lane] = len;
      }
    }
    __syncthreads();
    tcpxr_copy_warp((char*)tile_dst[warp], (const char*)tile_src[warp], tile_len[warp], lane);
    if (t + gridDim.x < tiles) __syncthreads();
  }
}

// One thread follows a chain of n dependent 8-byte reads (each holds the next index); out[0]
// gets the SM cycles per read.
__global__ void chase(const unsigned long long* p, int n, unsigned long long* out) {
  unsigned long long idx = 0;
  const long long t0 = clock64();
  for (int i = 0; i < n; i++) idx = __ldcv(p + idx);
  const long long t1 = clock64();
  out[0] = (unsigned long long)(t1 - t0) / n;
  out[1] = idx;
}

// A plain copy: each block moves 32 KiB per step, eight 16-byte loads in flight per thread.
__global__ void __launch_bounds__(256, 1) plain_copy(const uint4* s, uint4* d, unsigned long long n16) {
  for (unsigned long long i = blockIdx.x * 2048ull + threadIdx.x; i < n16; i += gridDim.x * 2048ull) {
    uint4 v[8];
#pragma unroll
    for (int k = 0; k < 8; k++)
      if (i + 256 * k < n16) v[k] = s[i + 256 * k];
#pragma unroll
    for (int k = 0; k < 8; k++)
      if (i + 256 * k < n16) d[i + 256 * k] = v[k];
  }
}


// persistent: grid = occupancy / divisor (0: one block per tile, at most 16 per SM);
// devrec: records in device memory; fn == nullptr: the plain copy kernel.
struct Variant { const char* name; const void* fn; int persistent; bool devrec; };

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? atoi(argv[1]) : 64;
  const int rounds = argc > 2 ? atoi(argv[2]) : 2;
  const int run = argc > 3 ? atoi(argv[3]) : 23;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const size_t jobs_per_launch = 64;
  Pages pg(mib);
  const size_t total = pg.total, per_chunk = pg.per_chunk, nchunks = pg.nchunks;
  unsigned char *src = pg.src, *dst = pg.dst;
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  Timing timeit;
  cudaStream_t* st = timeit.st;
  auto gbs = [&](float ms) { return total / (ms / 1e3) / 1e9; };
  const Variant run22[] = {
      {"tcpxr_unpack (kernel.cu)", (const void*)tcpxr_unpack, 0, false},
      {"flags none", (const void*)unpack_x<0>, 0, false},
      {"NOSMEM", (const void*)unpack_x<NOSMEM>, 0, false},
      {"SHFL", (const void*)unpack_x<SHFL>, 0, false},
      {"STREAM", (const void*)unpack_x<STREAM>, 0, false},
      {"L2HINT", (const void*)unpack_x<L2HINT>, 0, false},
      {"PREFETCH", (const void*)unpack_x<PREFETCH>, 1, false},
      {"NOSMEM|SHFL", (const void*)unpack_x<NOSMEM | SHFL>, 0, false},
      {"NOSMEM|SHFL|STREAM", (const void*)unpack_x<NOSMEM | SHFL | STREAM>, 0, false},
      {"NOSMEM|SHFL|L2HINT", (const void*)unpack_x<NOSMEM | SHFL | L2HINT>, 0, false},
      {"NOSMEM|SHFL|PREFETCH", (const void*)unpack_x<NOSMEM | SHFL | PREFETCH>, 1, false},
      {"NOSMEM|SHFL|L2HINT|PREFETCH", (const void*)unpack_x<NOSMEM | SHFL | L2HINT | PREFETCH>, 1, false},
  };
  const Variant run23[] = {
      {"tcpxr_unpack (kernel.cu)", (const void*)tcpxr_unpack, 0, false},
      {"NOSMEM", (const void*)unpack_x<NOSMEM>, 0, false},
      {"NOSMEM devrec", (const void*)unpack_x<NOSMEM>, 0, true},
      {"NOSMEM|SHFL min 4", (const void*)unpack_x<NOSMEM | SHFL, 4>, 0, false},
      {"NOSMEM|PREFETCH min 4, occ/1", (const void*)unpack_x<NOSMEM | PREFETCH, 4>, 1, false},
      {"NOSMEM|PREFETCH min 4, occ/2", (const void*)unpack_x<NOSMEM | PREFETCH, 4>, 2, false},
      {"NOSMEM|DEPTH4 min 6", (const void*)unpack_x<NOSMEM | DEPTH4, 6>, 0, false},
      {"NOSMEM|DEPTH4 min 8", (const void*)unpack_x<NOSMEM | DEPTH4, 8>, 0, false},
      {"NOSMEM|SHFL|DEPTH4 min 6", (const void*)unpack_x<NOSMEM | SHFL | DEPTH4, 6>, 0, false},
      {"NOSMEM|SHFL|DEPTH4 min 8", (const void*)unpack_x<NOSMEM | SHFL | DEPTH4, 8>, 0, false},
      {"plain copy kernel (contig)", nullptr, 0, false},
  };
  const Variant run29[] = {
      {"kernel.cu", (const void*)tcpxr_unpack, 0, false},
      {"kernel.cu devrec", (const void*)tcpxr_unpack, 0, true},
      {"NOSMEM devrec +1000 cycles", (const void*)unpack_x<NOSMEM, 1, 1000>, 0, true},
      {"NOSMEM devrec +2000 cycles", (const void*)unpack_x<NOSMEM, 1, 2000>, 0, true},
      {"NOSMEM devrec +4000 cycles", (const void*)unpack_x<NOSMEM, 1, 4000>, 0, true},
      {"allfetch K=4, occ/1", (const void*)unpack_allfetch<4>, 1, false},
      {"allfetch K=4, occ/1 devrec", (const void*)unpack_allfetch<4>, 1, true},
      {"allfetch K=4, occ/2", (const void*)unpack_allfetch<4>, 2, false},
      {"allfetch K=2, occ/1", (const void*)unpack_allfetch<2>, 1, false},
  };
  const Variant run30[] = {
      {"kernel.cu", (const void*)tcpxr_unpack, 0, false},
      {"kernel.cu devrec", (const void*)tcpxr_unpack, 0, true},
      {"async min 4", (const void*)unpack_async<4>, 0, false},
      {"async min 5", (const void*)unpack_async<5>, 0, false},
      {"async min 6", (const void*)unpack_async<6>, 0, false},
      {"async min 6 devrec", (const void*)unpack_async<6>, 0, true},
      {"plain copy kernel (contig)", nullptr, 0, false},
  };
  const Variant run34[] = {
      {"kernel.cu", (const void*)tcpxr_unpack, 0, false},
      {"kernel.cu devrec", (const void*)tcpxr_unpack, 0, true},
      {"lookup search", (const void*)unpack_lookup<LOOKUP_SEARCH>, 0, false},
      {"lookup direct (bound)", (const void*)unpack_lookup<LOOKUP_DIRECT>, 0, false},
      {"lookup direct devrec", (const void*)unpack_lookup<LOOKUP_DIRECT>, 0, true},
      {"lookup ballot", (const void*)unpack_lookup<LOOKUP_BALLOT>, 0, false},
      {"lookup ballot devrec", (const void*)unpack_lookup<LOOKUP_BALLOT>, 0, true},
  };
  const Variant* variants = run == 22 ? run22 : run == 23 ? run23 : run == 29 ? run29 : run == 30 ? run30 : run34;
  const int nvariants = run == 22   ? sizeof run22 / sizeof run22[0]
                        : run == 23 ? sizeof run23 / sizeof run23[0]
                        : run == 29 ? sizeof run29 / sizeof run29[0]
                        : run == 30 ? sizeof run30 / sizeof run30[0]
                                    : sizeof run34 / sizeof run34[0];
  if (run == 29) {  // latency of one dependent read, host-mapped and device memory
    const int n = 4096, hops = 2000;
    std::vector<unsigned long long> chain(n);
    for (int i = 0; i < n; i++) chain[i] = (unsigned long long)((i + 1553) % n);  // 12 KiB apart
    unsigned long long *hchain, *hchain_dev, *dchain, *out;
    CK(cudaHostAlloc(&hchain, n * 8, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&hchain_dev, hchain, 0));
    memcpy(hchain, chain.data(), n * 8);
    CK(cudaMalloc(&dchain, n * 8)); CK(cudaMemcpy(dchain, chain.data(), n * 8, cudaMemcpyHostToDevice));
    CK(cudaMallocManaged(&out, 16));
    int khz; CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
    for (int where = 0; where < 2; where++) {
      unsigned long long best = ~0ull;
      for (int it = 0; it < 3; it++) {
        chase<<<1, 1>>>(where ? dchain : hchain_dev, hops, out);
        CK(cudaDeviceSynchronize());
        best = std::min(best, out[0]);
      }
      printf("one dependent 8-byte read of %s memory: %llu cycles = %.0f ns (SM clock %d MHz)\n",
             where ? "device" : "host-mapped", best, best * 1e6 / khz, khz / 1000);
    }
  }
  for (const Variant& v : std::vector<Variant>(variants, variants + nvariants)) {
    if (!v.fn) continue;
    cudaFuncAttributes a; CK(cudaFuncGetAttributes(&a, v.fn));
    int occ = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, v.fn, TCPXR_WARPS * 32, 0));
    printf("%-30s %3d registers, %4zu B local, %4zu B smem, %d blocks per SM\n", v.name, a.numRegs, a.localSizeBytes,
           a.sharedSizeBytes, occ);
  }
  std::vector<unsigned char> want(total), got(total);
  for (int round = 0; round < rounds; round++) {
    float memcpy_ms[2];
    for (int q = 0; q < 2; q++)
      memcpy_ms[q] = timeit(q, [&] { CK(cudaMemcpyAsync(dst, src, total, cudaMemcpyDeviceToDevice, st[0])); });
    printf("== round %d, %zu MiB, %d SMs, %dx%d kernel, %zu jobs/launch: memcpy D2D %.1f GB/s (host) %.1f GB/s (queued)\n",
           round, mib, sms, TCPXR_WARPS, TCPXR_RECORDS_PER_WARP, jobs_per_launch, gbs(memcpy_ms[0]), gbs(memcpy_ms[1]));
    for (int layout = 0; layout < 3; layout++) {  // aligned, misaligned 0-63 B, contig
      pg.layout(layout, &want);
      const char* lname = layout == 0 ? "aligned" : layout == 1 ? "misaligned" : "contig";
      for (const Variant& v : std::vector<Variant>(variants, variants + nvariants)) {
        if (!v.fn && layout != 2) continue;
        int occ = 0;
        if (v.fn) CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, v.fn, TCPXR_WARPS * 32, 0));
        const ulonglong2* recs = v.devrec ? pg.drec : pg.hrec_dev;
        float ms[2];
        for (int q = 0; q < 2; q++) {
          ms[q] = timeit(q, [&] {
            if (!v.fn) {
              plain_copy<<<sms * 4, 256, 0, st[0]>>>((const uint4*)src, (uint4*)dst, total / 16);
              return;
            }
            BatchFirst bf;  // a kernel taking a TcpxrBatch reads its leading part
            TcpxrBatch& b = bf.b;
            b.njobs = 0; b.total = 0;
            int k = 0;
            for (size_t c = 0; c < nchunks; c++) {
              bf.first[b.njobs] = b.total;
              TcpxrJob& j = b.jobs[b.njobs++];
              j.records = (unsigned long long)(recs + c * per_chunk); j.bounce = (unsigned long long)src;
              j.dst = (unsigned long long)dst; j.first = b.total; j.count = per_chunk; b.total += per_chunk;
              if (b.njobs == (int)jobs_per_launch || c + 1 == nchunks) {
                const unsigned cap = v.persistent ? (unsigned)(sms * occ / v.persistent) : (unsigned)sms * 16;
                const unsigned grid = std::min((b.total + TCPXR_TILE - 1) / TCPXR_TILE, cap);
                void* args[] = {&bf};
                CK(cudaLaunchKernel(v.fn, grid, TCPXR_WARPS * 32, args, 0, st[k & 1]));
                k++;
                b.njobs = 0; b.total = 0;
              }
            }
          });
        }
        CK(cudaMemcpy(got.data(), dst, total, cudaMemcpyDeviceToHost));
        const bool ok = got == want;
        CK(cudaMemset(dst, 0, total));
        printf("  %-30s %-10s host %7.1f GB/s %4.0f%%   queued %7.1f GB/s %4.0f%%   %s\n", v.name, lname, gbs(ms[0]),
               100 * memcpy_ms[0] / ms[0], gbs(ms[1]), 100 * memcpy_ms[1] / ms[1], ok ? "ok" : "WRONG");
      }
    }
  }
  return 0;
}
