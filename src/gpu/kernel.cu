// tcpxr's unpack kernel: scatter received fragments from a bounce buffer into their destinations.
//
// A launch covers a batch of jobs (one job = the fragments of one received chunk). The jobs travel
// in the launch's parameter block (constant memory: nothing to copy, nothing to fetch over PCIe).
// Each job points at its fragment records (NCCL's loadMeta layout: src_off u32, len u32, dst_off
// u64), usually in host memory mapped into the device, so no descriptor is copied per chunk. A block
// stages a tile of records with one coalesced 16-byte load per thread (ld.global.cv: the host
// rewrites them between launches); each warp then copies one of them: 16-byte accesses when
// source and destination share their alignment, funnel-shifted 4-byte words when they do not, and
// exact byte heads and tails, so any alignment and any length down to 1 byte is placed exactly.
// Each lane keeps up to eight loads in flight before it stores, so a warp is not one DRAM latency per
// 512 bytes.

struct TcpxrJob {
  unsigned long long records;  // device address of this job's loadMeta records
  unsigned long long bounce;   // base that src_off is relative to
  unsigned long long dst;      // base that dst_off is relative to
  unsigned int first;          // index of this job's first record in the batch
  unsigned int count;          // records in this job
};

// Must stay within the 4 KiB kernel parameter limit: 8 + 120 * 32 = 3848 bytes.
#define TCPXR_MAX_JOBS 120

struct TcpxrBatch {
  int njobs;
  unsigned int total;  // records in all jobs
  TcpxrJob jobs[TCPXR_MAX_JOBS];
};

__device__ __forceinline__ void tcpxr_copy_bytes(char* dst, const char* src, unsigned int n, int lane) {
  for (unsigned int i = lane; i < n; i += 32) dst[i] = src[i];
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
  } else if ((rel & 3) == 0) {
    unsigned int head = (unsigned int)((4 - (d & 3)) & 3);
    if (head > len) head = len;
    tcpxr_copy_bytes(dst, src, head, lane);
    const unsigned int n4 = (len - head) >> 2;
    const unsigned int* s4 = (const unsigned int*)(src + head);
    unsigned int* d4 = (unsigned int*)(dst + head);
    unsigned int i = lane;
    for (; i + 96 < n4; i += 128) {
      const unsigned int a = s4[i], b = s4[i + 32], c = s4[i + 64], e = s4[i + 96];
      d4[i] = a;
      d4[i + 32] = b;
      d4[i + 64] = c;
      d4[i + 96] = e;
    }
    for (; i < n4; i += 32) d4[i] = s4[i];
    const unsigned int done = head + (n4 << 2);
    tcpxr_copy_bytes(dst + done, src + done, len - done, lane);
  } else {
    // Align the destination to 4 bytes, then build each destination word from the two aligned
    // source words it straddles. The second word always holds at least one byte of the record,
    // so no load leaves the source's pages.
    unsigned int head = (unsigned int)((4 - (d & 3)) & 3);
    if (head > len) head = len;
    tcpxr_copy_bytes(dst, src, head, lane);
    const char* s2 = src + head;
    unsigned int* d4 = (unsigned int*)(dst + head);
    const unsigned int n4 = (len - head) >> 2;
    const unsigned int shift = (unsigned int)(((unsigned long long)s2 & 3) * 8);
    const unsigned int* sw = (const unsigned int*)((unsigned long long)s2 & ~3ull);
    unsigned int i = lane;
    for (; i + 96 < n4; i += 128) {
      const unsigned int a0 = sw[i], a1 = sw[i + 1], b0 = sw[i + 32], b1 = sw[i + 33];
      const unsigned int c0 = sw[i + 64], c1 = sw[i + 65], e0 = sw[i + 96], e1 = sw[i + 97];
      d4[i] = __funnelshift_r(a0, a1, shift);
      d4[i + 32] = __funnelshift_r(b0, b1, shift);
      d4[i + 64] = __funnelshift_r(c0, c1, shift);
      d4[i + 96] = __funnelshift_r(e0, e1, shift);
    }
    for (; i < n4; i += 32) d4[i] = __funnelshift_r(sw[i], sw[i + 1], shift);
    const unsigned int done = head + (n4 << 2);
    tcpxr_copy_bytes(dst + done, src + done, len - done, lane);
  }
}

#define TCPXR_WARPS 8
#define TCPXR_RECORDS_PER_WARP 1
#define TCPXR_TILE (TCPXR_WARPS * TCPXR_RECORDS_PER_WARP)

extern "C" __global__ void __launch_bounds__(TCPXR_WARPS * 32) tcpxr_unpack(const TcpxrBatch batch) {
  __shared__ TcpxrJob jobs[TCPXR_MAX_JOBS];
  __shared__ unsigned long long tile_src[TCPXR_TILE], tile_dst[TCPXR_TILE];
  __shared__ unsigned int tile_len[TCPXR_TILE];
  for (int i = threadIdx.x; i < batch.njobs; i += blockDim.x) jobs[i] = batch.jobs[i];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const unsigned int tiles = (batch.total + TCPXR_TILE - 1) / TCPXR_TILE;
  for (unsigned int t = blockIdx.x; t < tiles; t += gridDim.x) {
    __syncthreads();  // jobs are loaded; the previous tile is fully copied
    if (threadIdx.x < TCPXR_TILE) {
      const unsigned int r = t * TCPXR_TILE + threadIdx.x;
      unsigned int len = 0;
      unsigned long long src = 0, dst = 0;
      if (r < batch.total) {
        int lo = 0, hi = batch.njobs - 1;
        while (lo < hi) {  // the last job whose first record is <= r
          const int mid = (lo + hi + 1) >> 1;
          if (jobs[mid].first <= r) lo = mid; else hi = mid - 1;
        }
        const ulonglong2 m = __ldcv((const ulonglong2*)jobs[lo].records + (r - jobs[lo].first));
        len = (unsigned int)(m.x >> 32);
        src = jobs[lo].bounce + (unsigned int)(m.x & 0xffffffffull);
        dst = jobs[lo].dst + m.y;
      }
      tile_src[threadIdx.x] = src;
      tile_dst[threadIdx.x] = dst;
      tile_len[threadIdx.x] = len;
    }
    __syncthreads();
    for (int k = 0; k < TCPXR_RECORDS_PER_WARP; k++) {
      const int i = warp * TCPXR_RECORDS_PER_WARP + k;
      tcpxr_copy_warp((char*)tile_dst[i], (const char*)tile_src[i], tile_len[i], lane);
    }
  }
}
