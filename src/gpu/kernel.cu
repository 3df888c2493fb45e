// tcpxr's unpack kernel: scatter received fragments from a bounce buffer into their destinations.
//
// A launch covers a batch of jobs (one job = the fragments of one received chunk). Each job points
// at its fragment records (NCCL's loadMeta layout: src_off u32, len u32, dst_off u64), usually in
// host memory mapped into the device, so no descriptor is ever copied per chunk. Warps take records
// round-robin over the whole batch; a warp copies one record with 16-byte accesses when source and
// destination share their alignment, 4-byte funnel-shifted words when they do not, and exact byte
// heads and tails, so any alignment and any length down to 1 byte is placed exactly.

struct TcpxrJob {
  unsigned long long records;  // device address of this job's loadMeta records
  unsigned long long bounce;   // base that src_off is relative to
  unsigned long long dst;      // base that dst_off is relative to
  unsigned int first;          // index of this job's first record in the batch
  unsigned int count;          // records in this job
};

struct TcpxrLoadMeta {
  unsigned int src_off;
  unsigned int len;
  unsigned long long dst_off;
};

#define TCPXR_MAX_JOBS 256

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
    for (unsigned int i = lane; i < n16; i += 32) d16[i] = s16[i];
    const unsigned int done = head + (n16 << 4);
    tcpxr_copy_bytes(dst + done, src + done, len - done, lane);
  } else if ((rel & 3) == 0) {
    unsigned int head = (unsigned int)((4 - (d & 3)) & 3);
    if (head > len) head = len;
    tcpxr_copy_bytes(dst, src, head, lane);
    const unsigned int n4 = (len - head) >> 2;
    const unsigned int* s4 = (const unsigned int*)(src + head);
    unsigned int* d4 = (unsigned int*)(dst + head);
    for (unsigned int i = lane; i < n4; i += 32) d4[i] = s4[i];
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
    for (unsigned int i = lane; i < n4; i += 32) d4[i] = __funnelshift_r(sw[i], sw[i + 1], shift);
    const unsigned int done = head + (n4 << 2);
    tcpxr_copy_bytes(dst + done, src + done, len - done, lane);
  }
}

extern "C" __global__ void tcpxr_unpack(const TcpxrJob* __restrict__ jobs, int njobs, unsigned int total) {
  __shared__ TcpxrJob sjobs[TCPXR_MAX_JOBS];
  // Jobs and records usually live in host memory mapped into the device and rewritten between
  // launches: read them with ld.global.cv so no stale cached line is ever used.
  for (int i = threadIdx.x; i < njobs; i += blockDim.x) {
    sjobs[i].records = __ldcv(&jobs[i].records);
    sjobs[i].bounce = __ldcv(&jobs[i].bounce);
    sjobs[i].dst = __ldcv(&jobs[i].dst);
    sjobs[i].first = __ldcv(&jobs[i].first);
    sjobs[i].count = __ldcv(&jobs[i].count);
  }
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const unsigned int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const unsigned int nwarps = (gridDim.x * blockDim.x) >> 5;
  int j = 0;
  for (unsigned int r = warp; r < total; r += nwarps) {
    while (j + 1 < njobs && r >= sjobs[j + 1].first) j++;
    const TcpxrJob job = sjobs[j];
    const TcpxrLoadMeta* rec = (const TcpxrLoadMeta*)job.records + (r - job.first);
    unsigned int src_off = 0, len = 0;
    unsigned long long dst_off = 0;
    if (lane == 0) {
      src_off = __ldcv(&rec->src_off);
      len = __ldcv(&rec->len);
      dst_off = __ldcv(&rec->dst_off);
    }
    src_off = __shfl_sync(0xffffffffu, src_off, 0);
    len = __shfl_sync(0xffffffffu, len, 0);
    dst_off = __shfl_sync(0xffffffffu, dst_off, 0);
    tcpxr_copy_warp((char*)(job.dst + dst_off), (const char*)(job.bounce + src_off), len, lane);
  }
}
