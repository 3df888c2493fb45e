// What the kernel experiments share: tcpxr's kernel, error checks, the bytes `tcpxr-bench gpu`
// places (4 KiB fragments from shuffled places 4160 B apart, written contiguously, jobs of
// 512 KiB), and the two-stream timing. Not part of tcpxr; see README.md beside this file.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "../../../../src/gpu/kernel.cu"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

static unsigned long long rng_state = 0x12345678;
static unsigned long long rnd() { rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17; return rng_state; }

// Holds a stream until the host sets *flag.
__global__ void gate(volatile int* flag) {
  while (*flag == 0) {
  }
}

// The source (bounce) buffer in device memory, the destination, and the records, host-mapped
// (`hrec`, `hrec_dev`) and in device memory (`drec`, filled by layout()).
struct Pages {
  const size_t total, frag = 4096, stride = 4096 + 64, chunk = 512 << 10;
  const size_t nfrag, per_chunk, nchunks, src_len;
  std::vector<unsigned char> hsrc;
  unsigned char *src, *dst;
  ulonglong2 *hrec, *hrec_dev, *drec;

  explicit Pages(size_t mib)
      : total(mib << 20), nfrag(total / frag), per_chunk(chunk / frag), nchunks(nfrag / per_chunk),
        src_len(nfrag * stride + 4096), hsrc(src_len) {
    for (size_t i = 0; i < src_len; i++) hsrc[i] = (unsigned char)(i * 7 + i / 4093);
    CK(cudaMalloc(&src, src_len));
    CK(cudaMalloc(&dst, total));
    CK(cudaMemcpy(src, hsrc.data(), src_len, cudaMemcpyHostToDevice));
    CK(cudaHostAlloc(&hrec, nfrag * 16, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&hrec_dev, hrec, 0));
    CK(cudaMalloc(&drec, nfrag * 16));
  }

  // Writes the records of one layout, 0: shuffled and aligned, 1: shuffled, 0-63 B off, 2: in
  // order and adjacent (a plain contiguous copy cut into pages), and the bytes they should place
  // into `want` (when given).
  void layout(int l, std::vector<unsigned char>* want) {
    std::vector<size_t> order(nfrag);
    for (size_t i = 0; i < nfrag; i++) order[i] = i;
    if (l < 2)
      for (size_t i = nfrag - 1; i > 0; i--) std::swap(order[i], order[rnd() % (i + 1)]);
    for (size_t i = 0; i < nfrag; i++) {
      const unsigned long long so = l == 2 ? i * frag : order[i] * stride + (l == 1 ? rnd() % 64 : 0);
      hrec[i].x = so | ((unsigned long long)frag << 32);
      hrec[i].y = i * frag;
      if (want) memcpy(&(*want)[i * frag], &hsrc[so], frag);
    }
    CK(cudaMemcpy(drec, hrec, nfrag * 16, cudaMemcpyHostToDevice));
  }
};

// Two non-blocking streams of the highest priority and the events to time work issued on them.
struct Timing {
  cudaStream_t st[2];
  cudaEvent_t e0, e1, fork, join;
  int *flag, *flag_dev;

  Timing() {
    int lo_prio, hi_prio;
    CK(cudaDeviceGetStreamPriorityRange(&lo_prio, &hi_prio));
    for (auto& s : st) CK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, hi_prio));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    CK(cudaHostAlloc(&flag, 4, cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&flag_dev, flag, 0));
  }

  // Milliseconds of what f issues on st[0] and st[1], best of 10 after 2 warm-ups. "host": the
  // clock starts, then f issues; "queued": the streams wait behind a gate until f has issued
  // everything, so the figure is the GPU's time alone.
  template <class F>
  float operator()(bool queued, F f) {
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
  }
};
