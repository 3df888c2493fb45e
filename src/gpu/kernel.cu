// tcpxr's unpack kernel: scatter received fragments from a bounce buffer into their destinations.
//
// A launch covers a batch of jobs (one job = the fragments of one received chunk). The jobs travel
// in the launch's parameter block (constant memory: nothing to copy, nothing to fetch over PCIe),
// and the kernel searches them where they are (__grid_constant__), rather than copying them into
// shared memory first: most blocks copy one tile and exit, and the copy and its barrier cost them
// 2-3 points of cudaMemcpy at 64 MiB (measured on one H200).
// Each job points at its fragment records (NCCL's loadMeta layout: src_off u32, len u32, dst_off
// u64), usually in host memory mapped into the device, so no descriptor is copied per chunk. A block
// stages a tile of records with one coalesced 16-byte load per thread (ld.global.cv: the host
// rewrites them between launches); each warp then copies one of them with 16-byte accesses: plain
// when source and destination share their alignment modulo 16, else each destination vector
// funnel-shifted out of the two aligned source vectors it straddles; exact byte heads and tails,
// so any alignment and any length down to 1 byte is placed exactly.
// Each lane keeps up to eight loads in flight before it stores, so a warp is not one DRAM latency per
// 512 bytes.

struct TcpxrJob {
  unsigned long long records;  // device address of this job's loadMeta records
  unsigned long long bounce;   // base that src_off is relative to
  unsigned long long dst;      // base that dst_off is relative to
  unsigned int first;          // index of this job's first record in the batch
  unsigned int count;          // records in this job
};

// Jobs per launch: 8 + 64 * 32 = 2056 bytes of parameters, within the 4 KiB limit. 64 rather than
// the 120 that would fit: a burst cut into launches of at most 32 MiB runs as two concurrent
// kernels on the two unpack streams: 3-6 points nearer cudaMemcpy at 64 MiB, 1-3 points further at
// 256 MiB (measured on one H200). (Overridable only for kernel experiments; unpack.rs's MAX_JOBS
// must match what tcpxr uses.)
#ifndef TCPXR_MAX_JOBS
#define TCPXR_MAX_JOBS 64
#endif

struct TcpxrBatch {
  int njobs;
  unsigned int total;  // records in all jobs
  TcpxrJob jobs[TCPXR_MAX_JOBS];
};

__device__ __forceinline__ void tcpxr_copy_bytes(char* dst, const char* src, unsigned int n, int lane) {
  for (unsigned int i = lane; i < n; i += 32) dst[i] = src[i];
}

// The 16 bytes starting q words and sh bits into the 32 bytes a:b (q < 4, sh < 32; q is the same
// for the whole warp, so the switch does not diverge).
__device__ __forceinline__ uint4 tcpxr_shift16(const uint4 a, const uint4 b, unsigned int q, unsigned int sh) {
  unsigned int w0, w1, w2, w3, w4;
  switch (q) {
    case 0: w0 = a.x; w1 = a.y; w2 = a.z; w3 = a.w; w4 = b.x; break;
    case 1: w0 = a.y; w1 = a.z; w2 = a.w; w3 = b.x; w4 = b.y; break;
    case 2: w0 = a.z; w1 = a.w; w2 = b.x; w3 = b.y; w4 = b.z; break;
    default: w0 = a.w; w1 = b.x; w2 = b.y; w3 = b.z; w4 = b.w; break;
  }
  uint4 o;
  o.x = __funnelshift_r(w0, w1, sh);
  o.y = __funnelshift_r(w1, w2, sh);
  o.z = __funnelshift_r(w2, w3, sh);
  o.w = __funnelshift_r(w3, w4, sh);
  return o;
}

__device__ void tcpxr_copy_warp(char* dst, const char* src, unsigned int len, int lane) {
  const unsigned long long d = (unsigned long long)dst, s = (unsigned long long)src;
  const unsigned int rel = (unsigned int)((d ^ s) & 15);
  if (rel == 0) {
    unsigned int head = (unsigned int)((16 - (d & 15)) & 15);
    if (head > len) head = len;
    tcpxr_copy_bytes(dst, src, head, lane);
    const unsigned int n16 = (len - head) >> 4;
    const uint4* s16 = (const uint4*)(src + head);
    uint4* d16 = (uint4*)(dst + head);
    unsigned int i = lane;
    // A whole 4 KiB page is eight 16-byte loads per lane: issue them all, then store.
    for (; i + 224 < n16; i += 256) {
      uint4 v[8];
#pragma unroll
      for (int k = 0; k < 8; k++) v[k] = s16[i + 32 * k];
#pragma unroll
      for (int k = 0; k < 8; k++) d16[i + 32 * k] = v[k];
    }
    for (; i + 96 < n16; i += 128) {
      const uint4 a = s16[i], b = s16[i + 32], c = s16[i + 64], e = s16[i + 96];
      d16[i] = a;
      d16[i + 32] = b;
      d16[i + 64] = c;
      d16[i + 96] = e;
    }
    for (; i < n16; i += 32) d16[i] = s16[i];
    const unsigned int done = head + (n16 << 4);
    tcpxr_copy_bytes(dst + done, src + done, len - done, lane);
  } else {
    // Source and destination disagree modulo 16. Align the destination to 16 bytes; then each
    // 16-byte destination vector is built from the two aligned 16-byte source vectors it
    // straddles (q whole words and 8 * (r & 3) bits in). The second vector always holds at least
    // one byte of the record and is aligned, so no load leaves the source's pages.
    unsigned int head = (unsigned int)((16 - (d & 15)) & 15);
    if (head > len) head = len;
    tcpxr_copy_bytes(dst, src, head, lane);
    const char* s2 = src + head;
    uint4* d16 = (uint4*)(dst + head);
    const unsigned int n16 = (len - head) >> 4;
    const unsigned int r = (unsigned int)((unsigned long long)s2 & 15);
    const unsigned int q = r >> 2, sh = (r & 3) * 8;
    const uint4* sv = (const uint4*)((unsigned long long)s2 & ~15ull);
    unsigned int i = lane;
    for (; i + 96 < n16; i += 128) {
      uint4 a[4], b[4];
#pragma unroll
      for (int k = 0; k < 4; k++) {
        a[k] = sv[i + 32 * k];
        b[k] = sv[i + 32 * k + 1];
      }
#pragma unroll
      for (int k = 0; k < 4; k++) d16[i + 32 * k] = tcpxr_shift16(a[k], b[k], q, sh);
    }
    for (; i < n16; i += 32) d16[i] = tcpxr_shift16(sv[i], sv[i + 1], q, sh);
    const unsigned int done = head + (n16 << 4);
    tcpxr_copy_bytes(dst + done, src + done, len - done, lane);
  }
}

// Warps per block and records each warp copies per tile (overridable for the kernel experiments
// only, like TCPXR_MAX_JOBS; unpack.rs's TILE must match what tcpxr uses).
#ifndef TCPXR_WARPS
#define TCPXR_WARPS 8
#endif
#ifndef TCPXR_RECORDS_PER_WARP
#define TCPXR_RECORDS_PER_WARP 1
#endif
#define TCPXR_TILE (TCPXR_WARPS * TCPXR_RECORDS_PER_WARP)
// Blocks per SM the compiler must fit (registers), for the kernel experiments; 1 = no constraint.
#ifndef TCPXR_MIN_BLOCKS
#define TCPXR_MIN_BLOCKS 1
#endif

// Record r of the batch, or a zero length past its end: the job holding it (the last whose first
// record is <= r, by binary search over the jobs), then its 16 bytes from the job's records.
__device__ __forceinline__ void tcpxr_record(const TcpxrJob* jobs, int njobs, unsigned int total, unsigned int r,
                                             unsigned long long& src, unsigned long long& dst, unsigned int& len) {
  src = 0;
  dst = 0;
  len = 0;
  if (r >= total) return;
  int lo = 0, hi = njobs - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (jobs[mid].first <= r) lo = mid; else hi = mid - 1;
  }
  const ulonglong2 m = __ldcv((const ulonglong2*)jobs[lo].records + (r - jobs[lo].first));
  len = (unsigned int)(m.x >> 32);
  src = jobs[lo].bounce + (unsigned int)(m.x & 0xffffffffull);
  dst = jobs[lo].dst + m.y;
}

// __grid_constant__ (compute capability 7.0, CUDA 11.7) says the search reads the parameter block
// in place. NVRTC 13.0 builds byte-identical code with or without it (63 registers, no local
// memory, checked with NVRTC's output); a compiler
// that copied the parameters into local memory instead would be slower, still exact.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700 && \
    (__CUDACC_VER_MAJOR__ > 11 || (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ >= 7))
#define TCPXR_GRID_CONSTANT __grid_constant__
#else
#define TCPXR_GRID_CONSTANT
#endif

extern "C" __global__ void __launch_bounds__(TCPXR_WARPS * 32, TCPXR_MIN_BLOCKS)
    tcpxr_unpack(const TCPXR_GRID_CONSTANT TcpxrBatch batch) {
  __shared__ unsigned long long tile_src[TCPXR_TILE], tile_dst[TCPXR_TILE];
  __shared__ unsigned int tile_len[TCPXR_TILE];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
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
    for (int k = 0; k < TCPXR_RECORDS_PER_WARP; k++) {
      const int i = warp * TCPXR_RECORDS_PER_WARP + k;
      tcpxr_copy_warp((char*)tile_dst[i], (const char*)tile_src[i], tile_len[i], lane);
    }
    if (t + gridDim.x < tiles) __syncthreads();  // the tile is copied before the next overwrites it
  }
}

// tcpxr's RMA signal in GPU memory (rma/stage.rs): adds `v` to the 64-bit signal at `p` with a
// device atomic, launched <<<1,1>>> on the RMA group's stream behind the copies of the put it
// signals, so stream order puts the put's bytes (and every earlier put's) before it; the fence
// makes them visible to every reader before the add. An atomic on the word itself, never a stored
// value, so NCCL may reset the signal between puts. A NULL `p` does nothing (the warm-up launch that loads
// the kernel before anything waits on it).
extern "C" __global__ void tcpxr_signal_add(unsigned long long* p, unsigned long long v) {
  if (p == 0) return;
  __threadfence_system();
  atomicAdd(p, v);
  __threadfence_system();
}
