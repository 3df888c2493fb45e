// Loopback throughput: send() copy vs vmsplice+splice (one copy, receiver's), with app acks.
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#ifdef USE_CUDA
#include <cuda.h>
#include <cuda_runtime.h>
#endif
static size_t MSG = 512 << 10; static int SLOTS = 8; static int SPLICE = 0; static double SECS = 1.5;
static int MEM = 0; // 0 malloc, 1 cudaHostAlloc, 2 cuMem host
static volatile int stop_flag = 0;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void *alloc(size_t n){
#ifdef USE_CUDA
  if (MEM==1){void*p; if(cudaHostAlloc(&p,n,0)){fprintf(stderr,"cudaHostAlloc failed\n");exit(1);} return p;}
  if (MEM==2){CUmemGenericAllocationHandle h; CUmemAllocationProp pr={0}; pr.type=CU_MEM_ALLOCATION_TYPE_PINNED;
    pr.location.type=CU_MEM_LOCATION_TYPE_HOST_NUMA; pr.location.id=0; size_t g=0;
    cuMemGetAllocationGranularity(&g,&pr,CU_MEM_ALLOC_GRANULARITY_MINIMUM); n=(n+g-1)/g*g;
    if(cuMemCreate(&h,n,&pr,0)){fprintf(stderr,"cuMemCreate failed\n");exit(1);}
    CUdeviceptr d; cuMemAddressReserve(&d,n,g,0,0); cuMemMap(d,n,0,h,0);
    CUmemAccessDesc a={0}; a.location.type=CU_MEM_LOCATION_TYPE_HOST_NUMA; a.location.id=0; a.flags=CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CUmemAccessDesc b={0}; b.location.type=CU_MEM_LOCATION_TYPE_DEVICE; b.location.id=0; b.flags=CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CUmemAccessDesc ab[2]={a,b}; if(cuMemSetAccess(d,n,ab,2)){fprintf(stderr,"cuMemSetAccess failed\n");exit(1);}
    return (void*)d;}
#endif
  void*p; posix_memalign(&p,4096,n); memset(p,1,n); return p;}
struct pair { int s, r; uint64_t bytes; };
static void wr(int fd,const void*b,size_t n){const char*p=b;while(n){ssize_t k=write(fd,p,n);if(k<=0){perror("write");exit(1);}p+=k;n-=k;}}
static void rd(int fd,void*b,size_t n){char*p=b;while(n){ssize_t k=read(fd,p,n);if(k<=0){perror("read");exit(1);}p+=k;n-=k;}}
static void *sender(void *a){ struct pair *pp=a; char *buf=alloc(MSG*SLOTS); int pfd[2]={-1,-1};
  if(SPLICE){ if(pipe(pfd)){perror("pipe");exit(1);} if(fcntl(pfd[1],F_SETPIPE_SZ,1<<20)<0) perror("F_SETPIPE_SZ"); }
  uint64_t sent=0, acked=0;
  while(!stop_flag){
    if(sent-acked>=(uint64_t)SLOTS){uint64_t x; rd(pp->s,&x,8); acked++; }
    char *m=buf+(sent%SLOTS)*MSG; m[0]=(char)sent;
    if(!SPLICE) wr(pp->s,m,MSG);
    else { size_t off=0; while(off<MSG){ struct iovec v={m+off,MSG-off}; ssize_t k=vmsplice(pfd[1],&v,1,0);
        if(k<0){perror("vmsplice");exit(1);} off+=k; size_t left=k; while(left){ssize_t z=splice(pfd[0],0,pp->s,0,left,SPLICE_F_MORE);
          if(z<=0){perror("splice");exit(1);} left-=z;} } }
    sent++; pp->bytes+=MSG; }
  while(acked<sent){uint64_t x; rd(pp->s,&x,8); acked++;}
  uint64_t end=~0ull; wr(pp->s,&end,0); shutdown(pp->s,SHUT_WR); return 0; }
static void *spinner(void *a){ (void)a; volatile unsigned long x=0; while(!stop_flag) x++; return 0; }
static void *receiver(void *a){ struct pair *pp=a; char *buf=alloc(MSG*SLOTS); uint64_t i=0;
  for(;;){ char *m=buf+(i%SLOTS)*MSG; size_t got=0; while(got<MSG){ssize_t k=recv(pp->r,m+got,MSG-got,0); if(k<=0) return 0; got+=k;}
    if(m[0]!=(char)i){fprintf(stderr,"corrupt message %lu\n",(unsigned long)i);exit(2);} wr(pp->r,&i,8); i++; } }
int main(int argc,char**argv){ int streams=atoi(argv[1]); SPLICE=atoi(argv[2]); MSG=(size_t)atol(argv[3])<<10; if(argc>4) MEM=atoi(argv[4]);
#ifdef USE_CUDA
  cudaSetDevice(0); cudaFree(0);
#endif
  int l=socket(AF_INET,SOCK_STREAM,0); struct sockaddr_in ad={.sin_family=AF_INET,.sin_addr.s_addr=htonl(0x7f000001)}; socklen_t al=sizeof ad;
  bind(l,(void*)&ad,al); listen(l,64); getsockname(l,(void*)&ad,&al);
  struct pair *ps=calloc(streams,sizeof *ps); pthread_t t[128];
  for(int i=0;i<streams;i++){ ps[i].s=socket(AF_INET,SOCK_STREAM,0); connect(ps[i].s,(void*)&ad,al); ps[i].r=accept(l,0,0);
    int one=1; setsockopt(ps[i].s,IPPROTO_TCP,TCP_NODELAY,&one,4); setsockopt(ps[i].r,IPPROTO_TCP,TCP_NODELAY,&one,4);}
  struct rusage r0,r1; getrusage(RUSAGE_SELF,&r0); double t0=now();
  int spin=getenv("SPIN")?atoi(getenv("SPIN")):0; pthread_t st[64];
  for(int i=0;i<spin;i++) pthread_create(&st[i],0,spinner,0);
  for(int i=0;i<streams;i++){pthread_create(&t[2*i],0,sender,&ps[i]);pthread_create(&t[2*i+1],0,receiver,&ps[i]);}
  usleep((useconds_t)(SECS*1e6)); stop_flag=1; for(int i=0;i<2*streams;i++) pthread_join(t[i],0); for(int i=0;i<spin;i++) pthread_join(st[i],0);
  double dt=now()-t0; getrusage(RUSAGE_SELF,&r1); uint64_t b=0; for(int i=0;i<streams;i++) b+=ps[i].bytes;
  double cpu=(r1.ru_utime.tv_sec-r0.ru_utime.tv_sec)+(r1.ru_stime.tv_sec-r0.ru_stime.tv_sec)+1e-6*((r1.ru_utime.tv_usec-r0.ru_utime.tv_usec)+(r1.ru_stime.tv_usec-r0.ru_stime.tv_usec));
  printf("spinners=%d streams=%d mode=%s msg=%zuK mem=%d: %.2f GB/s, %.2f cores busy, %.2f GB/s per core\n",spin,streams,SPLICE?"splice":"copy",MSG>>10,MEM,b/dt/1e9,cpu/dt,b/cpu/1e9); return 0; }
