// pp.c: one-way latency of a loopback TCP ping-pong, message size S, moved four ways:
//   block   blocking send/recv (MSG_WAITALL)
//   spin    non-blocking send/recv retried in a loop (a thread that owns its socket and spins)
//   uring   io_uring, one ring per side: io_uring_enter submits, then the thread spins calling
//           io_uring_enter(GETEVENTS, min 0), which runs the ring's completion work, until the CQE
//   wait    io_uring, io_uring_enter submits and waits for the completion (min_complete 1: sleeps)
//   sqpoll  io_uring with a kernel SQ-polling thread per ring, which issues and completes the
//           operations: no syscall on the hot path, the CQ polled from user space
// Each side is one thread; side A sends S bytes, side B receives them and sends them back.
// Prints median and p99 of half the round trip, in microseconds.
// Build: gcc -O2 -pthread -o pp pp.c     Run: ./pp MODE SIZE ITERS
#define _GNU_SOURCE
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int mode; // 0 block, 1 spin, 2 uring, 3 sqpoll, 4 wait
static size_t size;
static int iters;

static void die(const char *what) { perror(what); exit(1); }
static double now_us(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

struct ring {
  int fd;
  unsigned *sq_head, *sq_tail, *sq_mask, *sq_flags, *sq_array;
  unsigned *cq_head, *cq_tail, *cq_mask;
  struct io_uring_sqe *sqes;
  struct io_uring_cqe *cqes;
};

static void ring_init(struct ring *r, int sqpoll) {
  struct io_uring_params p; memset(&p, 0, sizeof p);
  if (sqpoll) { p.flags = IORING_SETUP_SQPOLL; p.sq_thread_idle = 2000; }
  r->fd = syscall(__NR_io_uring_setup, 8, &p);
  if (r->fd < 0) die("io_uring_setup");
  size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  size_t cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  char *sq = mmap(0, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
  char *cq = mmap(0, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
  r->sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                 r->fd, IORING_OFF_SQES);
  if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED) die("mmap ring");
  r->sq_head = (unsigned *)(sq + p.sq_off.head); r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
  r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask); r->sq_flags = (unsigned *)(sq + p.sq_off.flags);
  r->sq_array = (unsigned *)(sq + p.sq_off.array);
  r->cq_head = (unsigned *)(cq + p.cq_off.head); r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
  r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask); r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
}

// One send or recv of exactly len bytes through the ring; returns when its completion is seen.
static void ring_io(struct ring *r, int op, int fd, char *buf, size_t len) {
  while (len > 0) {
    unsigned tail = atomic_load_explicit((_Atomic unsigned *)r->sq_tail, memory_order_relaxed);
    unsigned idx = tail & *r->sq_mask;
    struct io_uring_sqe *e = &r->sqes[idx]; memset(e, 0, sizeof *e);
    e->opcode = op; e->fd = fd; e->addr = (uintptr_t)buf; e->len = len;
    e->msg_flags = op == IORING_OP_RECV ? MSG_WAITALL : MSG_NOSIGNAL;
    r->sq_array[idx] = idx;
    atomic_store_explicit((_Atomic unsigned *)r->sq_tail, tail + 1, memory_order_release);
    unsigned head = *r->cq_head;
    if (mode == 3) {
      if (atomic_load_explicit((_Atomic unsigned *)r->sq_flags, memory_order_acquire) & IORING_SQ_NEED_WAKEUP)
        syscall(__NR_io_uring_enter, r->fd, 0, 0, IORING_ENTER_SQ_WAKEUP, 0, 0);
      while (atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire) == head) __builtin_ia32_pause();
    } else if (mode == 4) {
      if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, 0, 0) < 0) die("io_uring_enter");
    } else {
      if (syscall(__NR_io_uring_enter, r->fd, 1, 0, 0, 0, 0) < 0) die("io_uring_enter");
      while (atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire) == head)
        syscall(__NR_io_uring_enter, r->fd, 0, 0, IORING_ENTER_GETEVENTS, 0, 0);
    }
    while (atomic_load_explicit((_Atomic unsigned *)r->cq_tail, memory_order_acquire) == head) __builtin_ia32_pause();
    int res = r->cqes[head & *r->cq_mask].res;
    atomic_store_explicit((_Atomic unsigned *)r->cq_head, head + 1, memory_order_release);
    if (res <= 0) { errno = -res; die(op == IORING_OP_RECV ? "uring recv" : "uring send"); }
    buf += res; len -= res;
  }
}

static void plain_io(int send_side, int fd, char *buf, size_t len) {
  while (len > 0) {
    ssize_t n = send_side ? send(fd, buf, len, MSG_NOSIGNAL | (mode == 1 ? MSG_DONTWAIT : 0))
                          : recv(fd, buf, len, mode == 1 ? MSG_DONTWAIT : MSG_WAITALL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) { __builtin_ia32_pause(); continue; }
    if (n <= 0) die(send_side ? "send" : "recv");
    buf += n; len -= n;
  }
}

struct side { int fd; int initiator; double *samples; };

static void *run_side(void *arg) {
  struct side *s = arg;
  char *buf = malloc(size); memset(buf, 1, size);
  struct ring r = {0};
  if (mode >= 2) ring_init(&r, mode == 3);
  for (int i = -iters / 10 - 1; i < iters; i++) {  // a tenth as warm-up
    double t0 = now_us();
    for (int step = 0; step < 2; step++) {
      int send_now = (step == 0) == s->initiator;
      if (mode >= 2) ring_io(&r, send_now ? IORING_OP_SEND : IORING_OP_RECV, s->fd, buf, size);
      else plain_io(send_now, s->fd, buf, size);
    }
    if (s->initiator && i >= 0) s->samples[i] = (now_us() - t0) / 2;
  }
  return 0;
}

static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return (x > y) - (x < y); }

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: pp block|spin|uring|sqpoll|wait SIZE ITERS\n"); return 2; }
  const char *names[] = {"block", "spin", "uring", "sqpoll", "wait"};
  mode = -1; for (int i = 0; i < 5; i++) if (!strcmp(argv[1], names[i])) mode = i;
  size = strtoull(argv[2], 0, 0); iters = atoi(argv[3]);
  if (mode < 0 || size == 0 || iters <= 0) { fprintf(stderr, "usage: pp block|spin|uring|sqpoll|wait SIZE ITERS\n"); return 2; }
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (bind(l, (void *)&a, sizeof a) || listen(l, 1) || getsockname(l, (void *)&a, &al)) die("listen");
  int c = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(c, (void *)&a, sizeof a)) die("connect");
  int d = accept(l, 0, 0); if (d < 0) die("accept");
  int one = 1; setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); setsockopt(d, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  double *samples = calloc(iters, sizeof(double));
  struct side sa = {c, 1, samples}, sb = {d, 0, 0};
  pthread_t ta, tb;
  pthread_create(&tb, 0, run_side, &sb); pthread_create(&ta, 0, run_side, &sa);
  pthread_join(ta, 0); pthread_join(tb, 0);
  qsort(samples, iters, sizeof(double), cmp);
  printf("%-6s %8zu B  one-way median %8.2f us  p99 %8.2f us  (%d round trips)\n", names[mode], size,
         samples[iters / 2], samples[iters * 99 / 100], iters);
  return 0;
}
