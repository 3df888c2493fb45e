/*
 * A net plugin library that exports only ncclNetPlugin_v6, a copy of tcpxr's v6 table.
 *
 * NCCL 2.26-2.29 take the newest table a library exports (v11 from tcpxr), and with it NCCL's
 * device unpack. Through this shim NCCL takes v6, which has no device unpack: with
 * NCCL_TCPXR_GPU_BUFFERS=1 received GPU pages are then placed by tcpxr's own unpack kernel, the
 * path issue 13 found can deadlock beside NCCL's kernel when both share a hardware queue
 * (CUDA_DEVICE_MAX_CONNECTIONS=1, MPS). ncclTests/hazard/run.sh drives NCCL through it to show
 * that hazard and that the v7+ path does not have it.
 *
 * TCPXR_SHIM_TARGET names tcpxr's library (default: libnccl-net-tcpxr.so on the library path).
 * Build: cc -O2 -fPIC -shared -o libnccl-net-tcpxr-v6.so v6_shim.c -ldl
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sizeof(ncclNet_v6_t) on x86-64: a name and 16 function pointers (src/abi/layout_tests.rs). */
#define NET_V6_BYTES 136

__attribute__((visibility("default"))) void *ncclNetPlugin_v6[NET_V6_BYTES / sizeof(void *)];

__attribute__((constructor)) static void copy_tcpxr_v6(void) {
  const char *target = getenv("TCPXR_SHIM_TARGET");
  if (target == NULL || target[0] == '\0') target = "libnccl-net-tcpxr.so";
  void *lib = dlopen(target, RTLD_NOW | RTLD_LOCAL);
  void *table = lib ? dlsym(lib, "ncclNetPlugin_v6") : NULL;
  if (table == NULL) {
    fprintf(stderr, "tcpxr v6 shim: cannot take ncclNetPlugin_v6 from %s: %s\n", target, dlerror());
    abort();
  }
  memcpy(ncclNetPlugin_v6, table, NET_V6_BYTES);
}
