/* run 353's note: the cost of one call of tcpxr's tuner (getCollInfo of the v4 table, an all_reduce
   of 8-64 B on 4 ranks), outside NCCL. cc -O2 tuner-call.c -o tuner-call -ldl &&
   NCCL_TCPXR_IFNAME=lo ./tuner-call target/release/libnccl-net-tcpxr.so (2026-11-28, this repository's
   2-core CPU host, main e027b869: 31.7 ns a call). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
typedef void (*logger_t)(int, unsigned long, const char*, int, const char*, ...);
static void lg(int l, unsigned long f, const char* fi, int li, const char* fmt, ...) {}
typedef struct { const char* name; int (*init)(size_t, size_t, logger_t, void**);
  int (*getCollInfo)(void*, int, size_t, int, float**, int, int, int, int*); int (*destroy)(void*); } t4;
int main(int argc, char** argv) {
  void* h = dlopen(argv[1], RTLD_NOW); if (!h) { printf("%s\n", dlerror()); return 1; }
  t4* t = dlsym(h, "ncclTunerPlugin_v4"); void* ctx = 0;
  printf("init %d\n", t->init(4, 4, lg, &ctx));
  float cost[7*3]; int nch = 0; struct timespec a, b; long n = 1000000;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; i++) { for (int k = 0; k < 21; k++) cost[k] = -1; cost[0*3+0] = 10; cost[1*3+0] = 5; cost[1*3+2] = 20;
    nch = 0; t->getCollInfo(ctx, 4, 8 + (i & 7) * 8, 1, (float**)cost, 7, 3, 0, &nch); }
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.1f ns per getCollInfo (nch %d)\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n, nch);
  return 0; }
