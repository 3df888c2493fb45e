/* NCCL's traffic class through tcpxr, end to end: one rank of a two-rank communicator made with
 * ncclCommInitRankConfig and config.trafficClass (NCCL 2.26+; nccl-tests cannot set it), one
 * all_reduce, then the process's IPv4 sockets whose IP TOS byte is that class are counted.
 *
 *   nvcc -o traffic_class traffic_class.c -lnccl
 *   NCCL_NET=tcpxr NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo ... \
 *     NCCL_HOSTID=a ./traffic_class 0 96 /tmp/id & NCCL_HOSTID=b ./traffic_class 1 96 /tmp/id
 *
 * Arguments: rank (0 or 1), traffic class (0-255, or -1 for none), a file through which rank 0
 * hands rank 1 the communicator's id. Prints one line and exits 0 when the sum is right. */
#include <cuda_runtime.h>
#include <dirent.h>
#include <netinet/in.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHECK(cmd, what)                                                         \
  do {                                                                           \
    if ((cmd) != 0) { fprintf(stderr, "%s failed\n", what); return 1; }          \
  } while (0)

/* Open IPv4 sockets of this process whose IP_TOS is `tos`. */
static int sockets_with_tos(int tos) {
  DIR* d = opendir("/proc/self/fd");
  struct dirent* e;
  int n = 0;
  while (d && (e = readdir(d))) {
    int fd = atoi(e->d_name), v = -1;
    socklen_t len = sizeof v;
    if (e->d_name[0] != '.' && getsockopt(fd, IPPROTO_IP, IP_TOS, &v, &len) == 0 && v == tos) n++;
  }
  if (d) closedir(d);
  return n;
}

int main(int argc, char** argv) {
  if (argc != 4) { fprintf(stderr, "usage: %s RANK TRAFFIC_CLASS ID_FILE\n", argv[0]); return 2; }
  int rank = atoi(argv[1]), tclass = atoi(argv[2]);
  const char* idfile = argv[3];
  ncclUniqueId id;
  if (rank == 0) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", idfile);
    CHECK(ncclGetUniqueId(&id), "ncclGetUniqueId");
    FILE* f = fopen(tmp, "wb");
    CHECK(!f || fwrite(&id, sizeof id, 1, f) != 1 || fclose(f), "writing the id");
    CHECK(rename(tmp, idfile), "renaming the id file");
  } else {
    FILE* f = NULL;
    for (int i = 0; i < 600 && !(f = fopen(idfile, "rb")); i++) usleep(100000);
    CHECK(!f || fread(&id, sizeof id, 1, f) != 1, "reading the id");
    fclose(f);
  }
  CHECK(cudaSetDevice(0), "cudaSetDevice");
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  if (tclass >= 0) config.trafficClass = tclass;
  ncclComm_t comm;
  CHECK(ncclCommInitRankConfig(&comm, 2, id, rank, &config), "ncclCommInitRankConfig");
  const size_t count = 1 << 18;
  float* buf;
  float* host = malloc(count * sizeof(float));
  for (size_t i = 0; i < count; i++) host[i] = (float)(rank + 1);
  CHECK(cudaMalloc((void**)&buf, count * sizeof(float)), "cudaMalloc");
  CHECK(cudaMemcpy(buf, host, count * sizeof(float), cudaMemcpyHostToDevice), "upload");
  CHECK(ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, 0), "ncclAllReduce");
  CHECK(cudaStreamSynchronize(0), "cudaStreamSynchronize");
  CHECK(cudaMemcpy(host, buf, count * sizeof(float), cudaMemcpyDeviceToHost), "download");
  size_t wrong = 0;
  for (size_t i = 0; i < count; i++) wrong += host[i] != 3.0f;
  /* Counted while the communicator's connections are open. */
  int marked = tclass >= 0 ? sockets_with_tos(tclass) : 0;
  printf("rank %d: all_reduce of %zu floats %s, trafficClass %d, %d sockets with IP_TOS %d\n", rank, count,
         wrong ? "WRONG" : "ok", tclass, marked, tclass);
  ncclCommDestroy(comm);
  return wrong != 0;
}
