/* Ping-pong of SIZE-byte messages over loopback TCP between two threads (two connections each way,
 * non-blocking sockets polled, TCP_NODELAY), one-way latency = half a round trip. Usage: pp SIZE MODE,
 * HL=header bytes (default 16). Modes: 0 payload alone; 1 header + payload in one gathered sendmsg,
 * received scattered the same way; 2 a header on a second "control" connection first, then header +
 * payload on the data connection; 3 header + payload gathered on send, one flat receive; 4 one flat
 * send, scattered receive; 5 payload then header (a trailer). Written for docs/BENCHMARKS.md section 22:
 * does a small first iovec slow the kernel's copy of the payload that follows it? */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <time.h>
static int SIZE, MODE, ITERS=3000;
static void pair(int*a,int*b){int l=socket(AF_INET,SOCK_STREAM,0);struct sockaddr_in s={0};s.sin_family=AF_INET;s.sin_addr.s_addr=htonl(0x7f000001);bind(l,(void*)&s,sizeof s);listen(l,4);socklen_t n=sizeof s;getsockname(l,(void*)&s,&n);*a=socket(AF_INET,SOCK_STREAM,0);connect(*a,(void*)&s,sizeof s);*b=accept(l,0,0);close(l);int one=1;setsockopt(*a,6,TCP_NODELAY,&one,4);setsockopt(*b,6,TCP_NODELAY,&one,4);fcntl(*a,F_SETFL,O_NONBLOCK);fcntl(*b,F_SETFL,O_NONBLOCK);}
static void sendall(int fd, struct iovec*iov,int n){size_t tot=0;for(int i=0;i<n;i++)tot+=iov[i].iov_len;struct msghdr m={0};size_t done=0;while(done<tot){struct iovec v[2];int k=0;size_t skip=done;for(int i=0;i<n;i++){if(skip>=iov[i].iov_len){skip-=iov[i].iov_len;continue;}v[k].iov_base=(char*)iov[i].iov_base+skip;v[k].iov_len=iov[i].iov_len-skip;skip=0;k++;}m.msg_iov=v;m.msg_iovlen=k;ssize_t r=sendmsg(fd,&m,MSG_DONTWAIT|MSG_NOSIGNAL);if(r>0)done+=r;else if(errno!=EAGAIN){perror("send");exit(1);}}}
static void recvall(int fd, struct iovec*iov,int n){size_t tot=0;for(int i=0;i<n;i++)tot+=iov[i].iov_len;struct msghdr m={0};size_t done=0;while(done<tot){struct iovec v[2];int k=0;size_t skip=done;for(int i=0;i<n;i++){if(skip>=iov[i].iov_len){skip-=iov[i].iov_len;continue;}v[k].iov_base=(char*)iov[i].iov_base+skip;v[k].iov_len=iov[i].iov_len-skip;skip=0;k++;}m.msg_iov=v;m.msg_iovlen=k;ssize_t r=recvmsg(fd,&m,MSG_DONTWAIT);if(r>0)done+=r;else if(r==0){exit(2);}else if(errno!=EAGAIN){perror("recv");exit(1);}}}
typedef struct {int ctl, data;} conn;
static char hdr[4096]; static int HL=16;
static char*big;
static void msg_send(conn c, char*buf){ if(MODE==5){struct iovec v[2]={{buf,SIZE},{hdr,HL}};sendall(c.data,v,2);return;} if(MODE==3){struct iovec v[2]={{hdr,HL},{buf,SIZE}};sendall(c.data,v,2);return;} if(MODE==4){struct iovec v={buf,SIZE+16};sendall(c.data,&v,1);return;} if(MODE==0){struct iovec v={buf,SIZE};sendall(c.data,&v,1);} else if(MODE==1){struct iovec v[2]={{hdr,HL},{buf,SIZE}};sendall(c.data,v,2);} else {struct iovec h={hdr,16};sendall(c.ctl,&h,1);struct iovec v[2]={{hdr,HL},{buf,SIZE}};sendall(c.data,v,2);} }
static void msg_recv(conn c, char*buf){ if(MODE==5){struct iovec v[2]={{buf,SIZE},{hdr+2048,HL}};recvall(c.data,v,2);return;} if(MODE==3){struct iovec v={buf,SIZE+HL};recvall(c.data,&v,1);return;} if(MODE==4){char h[16];struct iovec v[2]={{h,16},{buf,SIZE}};recvall(c.data,v,2);return;} if(MODE==0){struct iovec v={buf,SIZE};recvall(c.data,&v,1);} else if(MODE==1){struct iovec v[2]={{hdr,HL},{buf,SIZE}};recvall(c.data,v,2);} else {char h2[16];struct iovec h={h2,16};recvall(c.ctl,&h,1);char h3[16];struct iovec v[2]={{hdr,HL},{buf,SIZE}};recvall(c.data,v,2);} }
static conn ab_s, ab_r, ba_s, ba_r;
static void* pong(void*x){char*buf=aligned_alloc(4096,SIZE+4096);for(int i=0;i<ITERS+300;i++){msg_recv(ab_r,buf);msg_send(ba_s,buf);}return 0;}
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){ if(getenv("HL"))HL=atoi(getenv("HL"));SIZE=atoi(argv[1]);MODE=atoi(argv[2]);
 pair(&ab_s.ctl,&ab_r.ctl);pair(&ab_s.data,&ab_r.data);pair(&ba_s.ctl,&ba_r.ctl);pair(&ba_s.data,&ba_r.data);
 pthread_t t;pthread_create(&t,0,pong,0);char*buf=aligned_alloc(4096,SIZE+4096);memset(buf,1,SIZE);double*r=malloc(sizeof(double)*ITERS);
 for(int i=0;i<ITERS+300;i++){double s=now();msg_send(ab_s,buf);msg_recv(ba_r,buf);if(i>=300)r[i-300]=(now()-s)/2;}
 pthread_join(t,0);qsort(r,ITERS,sizeof(double),cmp);printf("size %d mode %d: median %.1f us min %.1f p99 %.1f\n",SIZE,MODE,r[ITERS/2],r[0],r[ITERS*99/100]);}
