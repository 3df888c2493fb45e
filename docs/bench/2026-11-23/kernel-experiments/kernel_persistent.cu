// The rejected variant of run 14: a persistent grid of warps, each taking TCPXR_GROUP records per
// pass and fetching its next group's records while it copies the current one. Measured slower than
// tcpxr's tiled kernel (docs/BENCHMARKS.md section 2b). It reuses the job layout and the per-warp
// copy and the record lookup (tcpxr_record) of src/gpu/kernel.cu, which unpack_variants.cu includes
// first; only its own kernel is here.

// Records a warp takes per pass: lanes 0..GROUP-1 read them with one coalesced load from the
// host-mapped ring, and the warp then copies them one after the other.
#ifndef TCPXR_GROUP
#define TCPXR_GROUP 4
#endif

// A persistent grid: each warp takes groups of TCPXR_GROUP records, group g, g + all warps, ...
// and fetches its next group's records while it copies the current one.
extern "C" __global__ void __launch_bounds__(TCPXR_WARPS * 32) tcpxr_unpack_persistent(const TcpxrBatch batch) {
  __shared__ TcpxrJob jobs[TCPXR_MAX_JOBS];
  for (int i = threadIdx.x; i < batch.njobs; i += blockDim.x) jobs[i] = batch.jobs[i];
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const unsigned int warps = gridDim.x * (blockDim.x >> 5);
  const unsigned int groups = (batch.total + TCPXR_GROUP - 1) / TCPXR_GROUP;
  unsigned int g = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
  unsigned long long src, dst;
  unsigned int len;
  tcpxr_record(jobs, batch.njobs, batch.total, lane < TCPXR_GROUP ? g * TCPXR_GROUP + lane : ~0u, src, dst, len);
  while (g < groups) {
    const unsigned int next = g + warps;
    unsigned long long next_src, next_dst;
    unsigned int next_len;
    tcpxr_record(jobs, batch.njobs, batch.total,
                 (lane < TCPXR_GROUP && next < groups) ? next * TCPXR_GROUP + lane : ~0u, next_src, next_dst,
                 next_len);
#pragma unroll 1
    for (int k = 0; k < TCPXR_GROUP; k++) {
      const unsigned long long s = __shfl_sync(0xffffffffu, src, k);
      const unsigned long long d = __shfl_sync(0xffffffffu, dst, k);
      const unsigned int n = __shfl_sync(0xffffffffu, len, k);
      tcpxr_copy_warp((char*)d, (const char*)s, n, lane);
    }
    g = next;
    src = next_src;
    dst = next_dst;
    len = next_len;
  }
}
