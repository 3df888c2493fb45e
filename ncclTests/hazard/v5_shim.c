/*
 * A net plugin library that exports only ncclNetPlugin_v5, a copy of tcpxr's v5 table.
 *
 * NCCL 2.19-2.25 take the newest table a library exports among those they know (v7, v8 or v9
 * from tcpxr); NCCL 2.12 knows only v5. Through this shim every release that still loads v5
 * (2.12 through 2.25.1; 2.26 dropped it) takes tcpxr's v5 table, which issue 35 wants proven
 * under a real NCCL. Built NCCL releases: ncclTests/build_nccl.sh.
 *
 * TCPXR_SHIM_TARGET names tcpxr's library (default: libnccl-net-tcpxr.so on the library path).
 * Build: cc -O2 -fPIC -shared -o libnccl-net-tcpxr-v5.so v5_shim.c -ldl
 * Use: put its folder and tcpxr's on LD_LIBRARY_PATH and set NCCL_NET_PLUGIN=tcpxr-v5 (NCCL
 * 2.12 and 2.19 only take a name here, which they make libnccl-net-NAME.so of).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sizeof(ncclNet_v5_t) on x86-64: a name and 15 function pointers (src/abi/layout_tests.rs). */
#define NET_V5_BYTES 128

__attribute__((visibility("default"))) void *ncclNetPlugin_v5[NET_V5_BYTES / sizeof(void *)];

__attribute__((constructor)) static void copy_tcpxr_v5(void) {
  const char *target = getenv("TCPXR_SHIM_TARGET");
  if (target == NULL || target[0] == '\0') target = "libnccl-net-tcpxr.so";
  void *lib = dlopen(target, RTLD_NOW | RTLD_LOCAL);
  void *table = lib ? dlsym(lib, "ncclNetPlugin_v5") : NULL;
  if (table == NULL) {
    fprintf(stderr, "tcpxr v5 shim: cannot take ncclNetPlugin_v5 from %s: %s\n", target, dlerror());
    abort();
  }
  memcpy(ncclNetPlugin_v5, table, NET_V5_BYTES);
}
