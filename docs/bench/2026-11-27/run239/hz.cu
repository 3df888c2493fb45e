// Does an async H2D copy (or a kernel) on another stream complete while a kernel that waits
// for the host sits on the GPU? And what does a 512 KiB H2D copy cost, issue to event seen?
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <sys/mman.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
__global__ void spin(volatile int *flag) { while (*flag == 0) {} }
__global__ void touch(int *p) { p[threadIdx.x] = 1; }
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "copy";
  int *flag; CK(cudaHostAlloc(&flag, 4096, cudaHostAllocMapped)); *flag = 0;
  int *dflag; CK(cudaHostGetDevicePointer(&dflag, flag, 0));
  cudaStream_t s1, s2; int lo, hi; CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithPriority(&s2, cudaStreamNonBlocking, hi));
  size_t n = 64 << 20; char *h, *d; CK(cudaHostAlloc(&h, n, 0)); CK(cudaMalloc(&d, n)); memset(h, 7, n);
  cudaEvent_t ev; CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  spin<<<1, 1, 0, s1>>>(dflag);
  if (!strcmp(mode, "copy")) CK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s2));
  else touch<<<1, 32, 0, s2>>>((int *)d);
  CK(cudaEventRecord(ev, s2));
  double t0 = now(); bool done = false;
  while (now() - t0 < 3) { if (cudaEventQuery(ev) == cudaSuccess) { done = true; break; } }
  printf("%s beside a waiting kernel: %s after %.1f ms\n", mode, done ? "COMPLETED" : "BLOCKED", (now() - t0) * 1e3);
  *flag = 1; CK(cudaDeviceSynchronize());
  // latency of one 512 KiB copy, issue to event seen, and of 8 KiB
  for (size_t sz : {size_t(8192), size_t(65536), size_t(524288), size_t(4 << 20)}) {
    std::vector<double> t;
    for (int i = 0; i < 300; i++) {
      double a = now();
      CK(cudaMemcpyAsync(d + (i % 8) * sz % (n - sz), h, sz, cudaMemcpyHostToDevice, s2));
      CK(cudaEventRecord(ev, s2));
      while (cudaEventQuery(ev) != cudaSuccess) {}
      t.push_back((now() - a) * 1e6);
    }
    std::sort(t.begin(), t.end());
    printf("H2D %zu B: median %.1f us, p90 %.1f us, %.1f GB/s at median\n", sz, t[150], t[270], sz / t[150] / 1e3);
  }
  // the same from registered mmap'd memory (tcpxr's bounce arena is such memory)
  {
    size_t rn = 16 << 20;
    char *r = (char *)mmap(nullptr, rn, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(r, 3, rn);
    CK(cudaHostRegister(r, rn, cudaHostRegisterMapped | cudaHostRegisterPortable));
    for (size_t sz : {size_t(524288), size_t(1 << 20)}) {
      std::vector<double> t;
      for (int i = 0; i < 300; i++) {
        double a = now();
        CK(cudaMemcpyAsync(d + (i % 8) * sz, r + (i % 8) * sz, sz, cudaMemcpyHostToDevice, s2));
        CK(cudaEventRecord(ev, s2));
        while (cudaEventQuery(ev) != cudaSuccess) {}
        t.push_back((now() - a) * 1e6);
      }
      std::sort(t.begin(), t.end());
      printf("registered H2D %zu B: median %.1f us, p90 %.1f us\n", sz, t[150], t[270]);
    }
  }
  // throughput with 8 copies of 512 KiB in flight
  double a = now(); int reps = 2000;
  for (int i = 0; i < reps; i++) CK(cudaMemcpyAsync(d + (i % 64) * 524288, h + (i % 64) * 524288, 524288, cudaMemcpyHostToDevice, s2));
  CK(cudaStreamSynchronize(s2));
  printf("H2D 512 KiB back to back: %.1f GB/s\n", reps * 524288.0 / (now() - a) / 1e9);
  return 0;
}
