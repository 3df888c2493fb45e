//! One stripe of the socket transport: a non-blocking TCP connection, driven by NCCL's proxy
//! thread inside `post` and `test_oldest`, or by one thread of the I/O pool while it has a
//! backlog.
//!
//! **Proxy first.** A posted chunk goes out at once in one gathered `sendmsg` (frame header and
//! payload, mover.rs) when the socket takes it; a receive reads what has arrived when the pool's
//! readiness poll says the socket is readable. No hand-off, no wake-up, for the chunk the socket
//! moves at once.
//!
//! **Hand-off.** With a pool to hand to, the proxy moves at most `handoff_bytes` of a stripe per
//! turn (one large chunk must not hold up the other connections NCCL's thread serves, and bulk
//! traffic needs several threads copying). A stripe left with a backlog of at least that much
//! (bytes not yet sent, or the rest of a receive that has started to arrive) goes to the pool: its
//! socket is armed in the workers' epoll set and the next readiness wakes one worker, which moves
//! bytes until the backlog is gone, re-arming while it waits. It gives the stripe back when
//! everything posted has moved, or (receive) when the socket is empty at a chunk boundary. A
//! smaller backlog the proxy finishes as the socket allows.
//!
//! **Ownership.** Whoever holds `mover` drives; `with_worker` says who may take it. It changes
//! only under both `mover` and `queue`: the proxy sets it (while driving) to hand off, the worker
//! clears it (while driving) to give back. The rule that keeps every chunk moving: a chunk in
//! `queue` or `mover` is always someone's job, and never waits for a call that may not come.
//! * `with_worker` set: the pool's. A worker's turn ends only by re-arming the registration (a
//!   later turn goes on) or by giving the stripe back, and it gives a sending stripe back only
//!   after finding `queue` empty under the queue lock. A post pushes its chunk and reads
//!   `with_worker` under that same lock, so a chunk posted during a give-back is either found by
//!   the worker, which moves it too, or posted once the stripe is back.
//! * `with_worker` clear: the proxy's. `post` drives the stripe at once, and `test` whenever its
//!   oldest chunk has not finished; a drive leaves a chunk only while the socket is known to be
//!   blocked (`maybe_ready` clear), until the readiness poll in `test` reports it.
//! * The hand-back between the two: the worker sets `maybe_ready`, clears `with_worker` and lets
//!   go of `mover`, all before it lets go of `queue`. So a post that sees the stripe back finds
//!   `mover` free and the socket worth a try, and its own drive moves its chunk or hands it on; it
//!   does not wait for a later `test` of this stripe, which a caller waiting only for the peer
//!   (the peer's receive needs this chunk) would never make.
//!
//! The proxy only ever `try_lock`s `mover`, so it never waits for a worker (a `test` that reads
//! `with_worker` while the worker is letting go finds `mover` taken and drives on its next call).
//!
//! **Close.** `drop` marks the stripe closing, empties the queue, then takes `mover` (waiting at
//! most for a worker's current non-blocking syscalls) and forgets the frames: from then on no thread
//! touches the engine's buffers, since a worker checks `closing` under `mover` before every pump.
//! Then the socket leaves the pool's sets, and a sending stripe whose receiver has a window waits,
//! holding no lock, for the receiver's kernel to acknowledge its last bytes (bounded; grant.rs,
//! "Close"). The socket itself closes with the last reference to the shared state, which a worker
//! may hold for a moment longer; nothing blocks but that bounded wait, so nothing hangs.
use super::demote;
use super::grant::WindowBounds;
use super::lock;
use super::mover::{Frame, Mover, Outcome, Wire};
use super::workers::{self, Lease, Pool, PoolShape, Registration, Work};
use crate::error::{Error, Result};
use crate::net::conn::Direction;
use crate::net::sys;
use crate::transport::{ChunkTimes, InnerMr, InnerRecv, InnerSend, InnerStripe, StripeProgress};
use std::collections::VecDeque;
use std::io::Read;
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;

/// Chunks posted and not yet taken over by the driver, and who may drive.
struct Queue {
    frames: VecDeque<Frame>,
    with_worker: bool,
}

/// Finish times kept per stripe: more than the chunks a window lets be in flight (at most 64).
const DONE_RING: usize = 64;

/// Bytes a worker moves for one stripe before it lets the other ready stripes go first.
const WORKER_TURN_BYTES: usize = 4 << 20;

/// What a send short of the receiver's grant waits for: the grant (readable bytes) or the peer
/// closing (grant.rs).
const GRANT_EVENTS: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP) as u32;

/// The part of a stripe the proxy thread and the pool's workers share.
struct Core {
    stream: TcpStream,
    /// The readiness a drive that found the socket would block waits for (EPOLLIN or EPOLLOUT and
    /// friends); a send short of the receiver's grant waits for [`GRANT_EVENTS`] instead.
    events: u32,
    /// The most the proxy thread moves for the stripe in one turn, and the backlog from which it
    /// hands the stripe to a worker.
    handoff_bytes: usize,
    queue: Mutex<Queue>,
    /// The frames being moved; held by the thread driving the stripe while it drives.
    mover: Mutex<Mover>,
    /// Mirrors `Queue::with_worker` for reads without the lock.
    with_worker: AtomicBool,
    /// Set by readiness events, cleared before each pump: false means the last pump found the
    /// socket would block and no readiness has been reported since.
    maybe_ready: AtomicBool,
    closing: AtomicBool,
    /// Chunks moved, in posting order; their bytes; time spent in syscalls that moved bytes.
    finished: AtomicU64,
    done_bytes: AtomicU64,
    io_nanos: AtomicU64,
    /// When the proxy last handed the stripe to the pool ([`since_start`] nanoseconds, 0: not
    /// since a worker took it), and the hand-offs a worker has taken and how long each waited
    /// (NCCL_TCPXR_STATS): on a sending stripe a worker's wake-up, on a receiving one also the
    /// wait for the chunk's first bytes.
    handed_at: AtomicU64,
    handoffs: AtomicU64,
    handoff_wait_nanos: AtomicU64,
    /// A send's waits for the receiver's grant (NCCL_TCPXR_STATS): when the current one began
    /// ([`since_start`], 0: none), and the waits ended so far with their nanoseconds.
    starved_at: AtomicU64,
    grant_waits: AtomicU64,
    grant_wait_nanos: AtomicU64,
    /// NCCL_TCPXR_STATS: whether the times above and below, and `io_nanos`, are taken (clock
    /// reads per syscall, chunk and hand-off that nothing else needs).
    timed: bool,
    /// When each chunk finished ([`since_start`]), by its place in posting order modulo
    /// [`DONE_RING`]: written by the mover before it counts the chunk in `finished`.
    done_at: [AtomicU64; DONE_RING],
    failure: OnceLock<Error>,
    /// Test only: run by a worker once it has given the stripe back, as the last thing of its
    /// turn (tests hold the worker there to post while it lets go).
    #[cfg(test)]
    after_give_back: OnceLock<Box<dyn Fn() + Send + Sync>>,
}

/// Nanoseconds since the first call in this process, plus one (so that 0 can mean "none").
fn since_start() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64 + 1
}

/// The socket as a [`Wire`], counting the time of the calls that move bytes when `io_nanos` is
/// given (NCCL_TCPXR_STATS).
struct SocketWire<'a> {
    fd: RawFd,
    io_nanos: Option<&'a AtomicU64>,
}

impl SocketWire<'_> {
    fn timed(&self, call: impl FnOnce() -> std::io::Result<usize>) -> std::io::Result<usize> {
        let Some(io_nanos) = self.io_nanos else {
            return call();
        };
        let start = Instant::now();
        let r = call();
        if matches!(r, Ok(n) if n > 0) {
            io_nanos.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
        r
    }
}

impl Wire for SocketWire<'_> {
    unsafe fn send(&mut self, iov: &[libc::iovec]) -> std::io::Result<usize> {
        // SAFETY: forwarded from this method's own contract.
        self.timed(|| unsafe { sys::send_iov(self.fd, iov) })
    }
    unsafe fn recv(&mut self, iov: &[libc::iovec]) -> std::io::Result<usize> {
        // SAFETY: forwarded from this method's own contract.
        self.timed(|| unsafe { sys::recv_iov(self.fd, iov) })
    }
}

impl Core {
    /// Moves what the socket takes or has, `budget` bytes at most, of the chunks in `mover`; the
    /// caller holds `mover` and has taken the chunks posted so far into it (`take_posted`).
    fn pump(&self, mover: &mut Mover, budget: usize) -> Result<Outcome> {
        let mut wire = SocketWire {
            fd: self.stream.as_raw_fd(),
            io_nanos: self.timed.then_some(&self.io_nanos),
        };
        let before = mover.moved();
        let outcome = mover.pump(&mut wire, budget, |len| {
            self.done_bytes.fetch_add(len as u64, Ordering::Relaxed);
            // Only the holder of `mover` counts chunks, so this is the next chunk's place.
            if self.timed {
                let n = self.finished.load(Ordering::Relaxed) as usize;
                self.done_at[n % DONE_RING].store(since_start(), Ordering::Relaxed);
            }
            // Release: a receive's bytes are in place (and its finish time written) before the
            // proxy sees the chunk done.
            self.finished.fetch_add(1, Ordering::Release);
        });
        if self.timed {
            self.time_grant_waits(mover.moved() != before, matches!(outcome, Ok(Outcome::Starved)));
        }
        outcome
    }

    /// NCCL_TCPXR_STATS: a wait for the receiver's grant ends with the first pump that moves bytes
    /// after it began, and begins with a pump that ends short of a grant. Only the holder of
    /// `mover` calls this.
    fn time_grant_waits(&self, moved: bool, starved: bool) {
        let now = since_start();
        let began = self.starved_at.load(Ordering::Relaxed);
        if began != 0 && moved {
            self.grant_waits.fetch_add(1, Ordering::Relaxed);
            self.grant_wait_nanos.fetch_add(now - began, Ordering::Relaxed);
            self.starved_at.store(0, Ordering::Relaxed);
        }
        if starved && (began == 0 || moved) {
            self.starved_at.store(now, Ordering::Relaxed);
        }
    }

    /// The readiness the stripe waits for now that a pump has stopped short; the caller holds
    /// `mover`.
    fn wait_events(&self, mover: &Mover) -> u32 {
        if mover.starved() {
            GRANT_EVENTS
        } else {
            self.events
        }
    }

    /// Moves the chunks posted since into the mover; the caller holds `mover`.
    fn take_posted(&self, mover: &mut Mover) {
        for f in lock(&self.queue).frames.drain(..) {
            mover.push(f);
        }
    }

    fn fail(&self, e: Error) {
        let _ = self.failure.set(e);
    }

    /// Sets who may drive; the caller holds `mover`.
    fn set_with_worker(&self, q: &mut Queue, with_worker: bool) {
        q.with_worker = with_worker;
        self.with_worker.store(with_worker, Ordering::Release);
    }

    /// A worker returns the stripe to the proxy: `mover` is the worker's guard, `q` the queue's,
    /// taken after it. Both are let go here, `mover` first: a post reads `with_worker` under the
    /// queue lock, so once it sees the stripe back, `mover` is free and `maybe_ready` set, and its
    /// own drive moves the chunk.
    fn give_back_locked(&self, mover: MutexGuard<'_, Mover>, mut q: MutexGuard<'_, Queue>) {
        // What the worker consumed may have left a readiness edge behind; look once more.
        self.maybe_ready.store(true, Ordering::Release);
        self.set_with_worker(&mut q, false);
        drop(mover);
        drop(q);
        self.gave_back();
    }

    /// [`Core::give_back_locked`], taking the queue lock.
    fn give_back(&self, mover: MutexGuard<'_, Mover>) {
        let q = lock(&self.queue);
        self.give_back_locked(mover, q);
    }

    /// The test hook at the end of a give-back (nothing outside tests).
    fn gave_back(&self) {
        #[cfg(test)]
        if let Some(hook) = self.after_give_back.get() {
            hook();
        }
    }
}

impl Work for Core {
    fn ready(&self) {
        self.maybe_ready.store(true, Ordering::Release);
    }

    fn work(&self, lease: &Lease<'_>) {
        if self.closing.load(Ordering::Acquire) || !self.with_worker.load(Ordering::Acquire) {
            return; // closed, or a stale event of a stripe the proxy drives
        }
        let handed_at = if self.timed {
            self.handed_at.swap(0, Ordering::Relaxed)
        } else {
            0
        };
        if handed_at != 0 {
            self.handoffs.fetch_add(1, Ordering::Relaxed);
            let waited = since_start().saturating_sub(handed_at);
            self.handoff_wait_nanos.fetch_add(waited, Ordering::Relaxed);
        }
        let mut mover = lock(&self.mover);
        loop {
            // Checked under `mover`: close takes it before it forgets the frames.
            if self.closing.load(Ordering::Acquire) || !self.with_worker.load(Ordering::Acquire) {
                return;
            }
            self.take_posted(&mut mover);
            match self.pump(&mut mover, WORKER_TURN_BYTES) {
                Err(e) => {
                    self.fail(e);
                    self.give_back(mover);
                    return;
                }
                // Blocked with a backlog, or a receive waiting for a chunk the proxy would hand
                // straight back (larger than `handoff_bytes`), or a send waiting for the
                // receiver's grant: wait for the socket. Turn over: let the other ready stripes
                // have this thread first (re-arming a ready socket queues it at once).
                Ok(Outcome::Blocked) if mover.backlog() > 0 || mover.head_unmoved() > self.handoff_bytes => {
                    if let Err(e) = lease.rearm(self.stream.as_raw_fd(), self.events) {
                        self.fail(e);
                        self.give_back(mover);
                    }
                    return;
                }
                Ok(Outcome::Starved | Outcome::Budget) => {
                    if let Err(e) = lease.rearm(self.stream.as_raw_fd(), self.wait_events(&mover)) {
                        self.fail(e);
                        self.give_back(mover);
                    }
                    return;
                }
                // A receive waiting at a chunk boundary for a small chunk: the proxy reads it.
                Ok(Outcome::Blocked) => {
                    self.give_back(mover);
                    return;
                }
                Ok(Outcome::Drained) => {
                    let q = lock(&self.queue);
                    if q.frames.is_empty() {
                        // Nothing posted meanwhile (a post pushes under this lock): done.
                        self.give_back_locked(mover, q);
                        return;
                    }
                    // Chunks were posted meanwhile: move them too.
                }
            }
        }
    }

    fn abandon(&self) {
        self.fail(Error::internal(
            "a tcpxr I/O thread panicked while moving this stripe's bytes",
        ));
        self.give_back(lock(&self.mover));
    }
}

/// How long closing a sending stripe whose receiver has a window waits for the receiver's kernel
/// to acknowledge what the sender's still holds (see `Drop`): at most [`CLOSE_ACK_WAIT`] in all,
/// and no longer than [`CLOSE_ACK_STALL`] without an acknowledgement, which covers a
/// retransmission (Linux's shortest timeout is 200 ms). With windows fitted to the receivers'
/// buffers ([`WindowBounds::fitted`]) a receiver's kernel takes every granted byte whether or not
/// it reads, so the wait is a round trip, and a stopped receiver does not hold up NCCL's teardown.
/// What is not acknowledged by then may be lost to a reset, which the receiver reports as a remote
/// error.
const CLOSE_ACK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
const CLOSE_ACK_STALL: std::time::Duration = std::time::Duration::from_millis(250);

/// Reads and drops the grants waiting on a closing sender's socket; false once the receiver has
/// closed its end or the connection failed (nothing it sends later matters then).
fn drain_grants(stream: &TcpStream) -> bool {
    let mut scratch = [0u8; 256];
    loop {
        match (&*stream).read(&mut scratch) {
            Ok(0) => return false,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return e.kind() == std::io::ErrorKind::WouldBlock,
        }
    }
}

/// `window` as `stream`'s receive buffer can honour it; the first stripe that has to cap it says
/// so once (a WARN: the windows the user set are not what the stripes use).
fn fit_window(stream: &TcpStream, window: WindowBounds) -> Result<WindowBounds> {
    if window.most == 0 {
        return Ok(window);
    }
    let kept = sys::kept_receive_buffer(stream).map_err(|e| Error::os("SO_RCVBUF", e))?;
    let fitted = window.fitted(kept);
    static SAID: std::sync::Once = std::sync::Once::new();
    if fitted != window {
        SAID.call_once(|| {
            log::warn!(
                target: "tcpxr::socket",
                "NCCL_TCPXR_UNREAD_BYTES / NCCL_TCPXR_UNREAD_MAX_BYTES: a receiving stripe asked for an \
                 SO_RCVBUF of at least twice its window ({} bytes) and the kernel kept {kept} \
                 (net.core.rmem_max caps it), which holds a window of {} bytes at most: the stripes' \
                 windows are {}-{} bytes instead of {}-{}; raise net.core.rmem_max to keep them",
                2 * window.most,
                fitted.most,
                fitted.least,
                fitted.most,
                window.least,
                window.most
            )
        });
    }
    Ok(fitted)
}

/// The stripe as the engine holds it (one end of one stripe of one comm).
pub struct Stripe {
    core: Arc<Core>,
    /// The socket's place in the pool's readiness sets; None once closing.
    reg: Option<Registration>,
    pool: Arc<Pool>,
    next_seq: u64,
    posted: u64,
    posted_bytes: u64,
    retired: u64,
    /// The pool's poll count when this stripe last looked at readiness: if no poll has happened
    /// since, a new pass over the connections has begun and this stripe polls.
    seen_polls: u64,
    /// When each chunk not yet retired was posted ([`since_start`]), oldest first; and the times
    /// of the chunks retired so far (NCCL_TCPXR_STATS).
    posted_at: VecDeque<u64>,
    times: ChunkTimes,
    /// NCCL_TCPXR_BOUNCE_DEMOTE: receives into the engine's bounce memory are demoted as they
    /// land (demote.rs), and the bytes of those posted so far.
    demote_bounce: bool,
    demoted_bytes: u64,
}

impl Stripe {
    /// The sending end of a connected stream, in the process's I/O pool (started in `pool`'s
    /// shape if it is not running). A backlog of `handoff_bytes` or more goes to a worker. Nothing
    /// goes before the receiver's first grant.
    pub fn sending(stream: TcpStream, pool: PoolShape, handoff_bytes: usize) -> Result<Stripe> {
        Stripe::start(stream, Mover::sender(), pool, handoff_bytes)
    }

    /// The receiving end, as [`Stripe::sending`], letting the sender have a window of unread
    /// bytes on the wire within `window` (0: no limit). Its first grant is written here.
    /// The window is capped to what the socket's receive buffer holds ([`WindowBounds::fitted`]).
    pub fn receiving(stream: TcpStream, pool: PoolShape, handoff_bytes: usize, window: WindowBounds) -> Result<Stripe> {
        let window = fit_window(&stream, window)?;
        Stripe::start(stream, Mover::receiver(window), pool, handoff_bytes)
    }

    fn start(stream: TcpStream, mut mover: Mover, pool: PoolShape, handoff_bytes: usize) -> Result<Stripe> {
        stream
            .set_nonblocking(true)
            .map_err(|e| Error::os("set_nonblocking", e))?;
        let mut wire = SocketWire {
            fd: stream.as_raw_fd(),
            io_nanos: None,
        };
        // Eight bytes into a socket nothing else has written to.
        if !mover.flush_grant(&mut wire)? {
            return Err(Error::internal("a new stripe's socket did not take its first grant"));
        }
        // The proxy set's interest: a send also hears of grants, and of the peer closing, which
        // it sees as readable.
        let (events, proxy_events) = match mover.direction() {
            Direction::Send => (libc::EPOLLOUT as u32, libc::EPOLLOUT as u32 | GRANT_EVENTS),
            Direction::Recv => {
                let readable = (libc::EPOLLIN | libc::EPOLLRDHUP) as u32;
                (readable, readable)
            }
        };
        let timed = pool.stats;
        let pool = workers::pool(pool)?;
        let core = Arc::new(Core {
            stream,
            events,
            handoff_bytes: handoff_bytes.max(1),
            queue: Mutex::new(Queue {
                frames: VecDeque::new(),
                with_worker: false,
            }),
            mover: Mutex::new(mover),
            with_worker: AtomicBool::new(false),
            maybe_ready: AtomicBool::new(true),
            closing: AtomicBool::new(false),
            finished: AtomicU64::new(0),
            done_bytes: AtomicU64::new(0),
            io_nanos: AtomicU64::new(0),
            handed_at: AtomicU64::new(0),
            handoffs: AtomicU64::new(0),
            handoff_wait_nanos: AtomicU64::new(0),
            starved_at: AtomicU64::new(0),
            grant_waits: AtomicU64::new(0),
            grant_wait_nanos: AtomicU64::new(0),
            timed,
            done_at: std::array::from_fn(|_| AtomicU64::new(0)),
            failure: OnceLock::new(),
            #[cfg(test)]
            after_give_back: OnceLock::new(),
        });
        let reg = pool.register(core.stream.as_raw_fd(), proxy_events, core.clone())?;
        Ok(Stripe {
            core,
            reg: Some(reg),
            pool,
            next_seq: 0,
            posted: 0,
            posted_bytes: 0,
            retired: 0,
            seen_polls: u64::MAX,
            posted_at: VecDeque::new(),
            times: ChunkTimes::default(),
            demote_bounce: false,
            demoted_bytes: 0,
        })
    }

    /// With `on`, receives posted into the engine's bounce memory ([`InnerRecv::post_bounce`])
    /// are demoted from the reading core's caches as they land (demote.rs), where the CPU can.
    pub fn demoting_bounce(mut self, on: bool) -> Stripe {
        self.demote_bounce = on && demote::supported();
        self
    }

    /// Posts chunk `len` bytes at `ptr`, its lines demoted as they land if `demote` (a receive).
    ///
    /// # Safety
    /// As [`Frame::new`]: the engine keeps `ptr .. ptr + len` valid until the chunk is reported
    /// done (or the stripe is dropped).
    unsafe fn post_frame(&mut self, ptr: usize, len: usize, demote: bool) -> Result<bool> {
        self.check()?;
        // SAFETY: forwarded from this function's contract.
        let frame = unsafe { Frame::new(ptr, len, self.next_seq)? };
        let frame = match demote {
            true => {
                self.demoted_bytes += len as u64;
                frame.demoted()
            }
            false => frame,
        };
        self.next_seq += 1;
        self.posted += 1;
        if self.core.timed {
            self.posted_at.push_back(since_start());
        }
        self.posted_bytes += len as u64;
        let with_worker = {
            let mut q = lock(&self.core.queue);
            q.frames.push_back(frame);
            q.with_worker
        };
        // Straight out (or in) if the socket may be ready; otherwise the next test looks.
        if !with_worker {
            self.drive(false);
        }
        Ok(true)
    }

    fn test_oldest_frame(&mut self) -> Result<bool> {
        if self.retired == self.posted {
            return Err(Error::internal("test on a stripe with nothing posted"));
        }
        if !self.retire_finished() {
            self.check()?;
            if self.core.with_worker.load(Ordering::Acquire) {
                return Ok(false);
            }
            self.drive(true);
            if !self.retire_finished() {
                self.check()?;
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn retire_finished(&mut self) -> bool {
        if self.core.finished.load(Ordering::Acquire) > self.retired {
            if let Some(posted) = self.posted_at.pop_front() {
                let done = self.core.done_at[self.retired as usize % DONE_RING].load(Ordering::Relaxed);
                let t = &mut self.times;
                t.chunks += 1;
                t.post_to_done_nanos += done.saturating_sub(posted);
                t.done_to_seen_nanos += since_start().saturating_sub(done);
            }
            self.retired += 1;
            true
        } else {
            false
        }
    }

    /// The proxy thread's turn: move what the socket takes or has, then hand the stripe to a worker
    /// if a large backlog is left. Never blocks. `poll`: when the socket is not known to be ready,
    /// ask the pool's readiness set (once per pass over the connections, for all of them).
    fn drive(&mut self, poll: bool) {
        let core = &*self.core;
        if !core.maybe_ready.load(Ordering::Acquire) {
            if !poll {
                return;
            }
            if self.seen_polls == self.pool.polls() {
                self.pool.poll_ready();
            }
            self.seen_polls = self.pool.polls();
            if !core.maybe_ready.load(Ordering::Acquire) {
                return;
            }
        }
        // Held now only by a worker in the last steps of its give-back (`test` reads
        // `with_worker` without the queue lock; a post cannot get here then): try again on the
        // next call.
        let Ok(mut mover) = core.mover.try_lock() else { return };
        if core.with_worker.load(Ordering::Acquire) {
            return;
        }
        // Cleared before the syscalls: an edge reported after them sets it again.
        core.maybe_ready.store(false, Ordering::Release);
        // With workers to hand the rest to, the proxy moves at most `handoff_bytes` per turn, so
        // that one large chunk does not hold up every other connection NCCL's thread serves; a
        // chunk larger than that goes to a worker whole (moving its first part here only delays
        // it), so NCCL's thread moves small chunks and no part of large ones.
        let with_pool = self.pool.threads() > 0;
        let budget = if with_pool { core.handoff_bytes } else { usize::MAX };
        // The chunk just posted counts too: otherwise its first `budget` bytes (one, with every
        // chunk for the pool) would go from here, a tiny segment that wakes the receiver's worker
        // once more for nothing, and a receive would reach the pool only once data is there.
        core.take_posted(&mut mover);
        let whole_to_pool = with_pool && mover.head_unmoved() > core.handoff_bytes;
        let mut starved = false;
        if whole_to_pool {
            // Unmoved bytes stay: whoever drives next must look (the worker, or this thread
            // once the stripe is back).
            core.maybe_ready.store(true, Ordering::Release);
        } else {
            match core.pump(&mut mover, budget) {
                Ok(Outcome::Drained | Outcome::Budget) => core.maybe_ready.store(true, Ordering::Release),
                Ok(Outcome::Blocked) => {}
                Ok(Outcome::Starved) => starved = true,
                Err(e) => {
                    core.fail(e);
                    return;
                }
            }
        }
        // A send waiting for the receiver's grant goes to a worker whatever its backlog: the
        // grant comes when the peer reads, and a caller waiting only for the peer makes no more
        // calls on this stripe.
        if with_pool && (whole_to_pool || starved || mover.backlog() >= core.handoff_bytes) {
            // Before the stripe is the workers': the first turn any of them takes reads it.
            if core.timed {
                core.handed_at.store(since_start(), Ordering::Relaxed);
            }
            let events = core.wait_events(&mover);
            core.set_with_worker(&mut lock(&core.queue), true);
            drop(mover);
            if let Some(reg) = &self.reg {
                if let Err(e) = reg.hand_off(events) {
                    core.fail(e);
                }
            }
        }
    }

    fn check(&self) -> Result<()> {
        match self.core.failure.get() {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn progress_counts(&self) -> StripeProgress {
        StripeProgress {
            posted_bytes: self.posted_bytes,
            done_bytes: self.core.done_bytes.load(Ordering::Acquire),
            with_worker: self.core.with_worker.load(Ordering::Acquire),
        }
    }
}

impl Drop for Stripe {
    fn drop(&mut self) {
        let core = &self.core;
        core.closing.store(true, Ordering::Release);
        lock(&core.queue).frames.clear();
        // Waits for a worker moving bytes of this stripe right now (non-blocking syscalls, so not
        // long); a worker that comes later sees `closing` under this lock and touches nothing.
        let mut mover = lock(&core.mover);
        mover.clear();
        let sending = mover.direction() == Direction::Send;
        let grants_may_come = mover.grants_may_come();
        // From here no worker touches the socket (it finds `closing` under this lock), so the
        // wait below holds no lock a worker serving other stripes could block on.
        drop(mover);
        // Out of the readiness sets while the socket is still open (`core` holds it).
        self.reg = None;
        let core = &self.core;
        if sending {
            // Grants left unread would make the close a reset, and a reset discards what the
            // kernel has not sent yet, bytes whose chunks NCCL already counts as sent (grant.rs).
            // A grant can also arrive after the close, so while the receiver may still write them
            // the close waits until its kernel has acknowledged every byte (the reset then discards
            // nothing the receiver lacks), as long as acknowledgements keep coming and the
            // receiver has not closed (see CLOSE_ACK_WAIT).
            if grants_may_come {
                let fd = core.stream.as_raw_fd();
                let (mut unacked, started) = (usize::MAX, Instant::now());
                let mut progress_at = started;
                loop {
                    let receiver_open = drain_grants(&core.stream);
                    let now_unacked = sys::unacknowledged(fd).unwrap_or(0);
                    let now = Instant::now();
                    if now_unacked < unacked {
                        (unacked, progress_at) = (now_unacked, now);
                    }
                    if !receiver_open
                        || unacked == 0
                        || now - progress_at >= CLOSE_ACK_STALL
                        || now - started >= CLOSE_ACK_WAIT
                    {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_micros(100));
                }
            }
            drain_grants(&core.stream);
        }
    }
}

impl InnerStripe for Stripe {
    fn io_nanos(&self) -> Option<u64> {
        Some(self.core.io_nanos.load(Ordering::Relaxed))
    }

    fn fd(&self) -> std::ffi::c_int {
        self.core.stream.as_raw_fd()
    }

    fn progress(&self) -> Option<StripeProgress> {
        Some(self.progress_counts())
    }

    fn chunk_times(&self) -> Option<ChunkTimes> {
        Some(self.times)
    }

    fn handoffs(&self) -> Option<(u64, u64)> {
        let core = &self.core;
        Some((
            core.handoffs.load(Ordering::Relaxed),
            core.handoff_wait_nanos.load(Ordering::Relaxed),
        ))
    }

    fn window_growth(&self) -> Option<(u64, u64)> {
        lock(&self.core.mover).window_growth()
    }

    fn demoted_bytes(&self) -> Option<u64> {
        Some(self.demoted_bytes)
    }

    fn grant_waits(&self) -> Option<(u64, u64)> {
        let core = &self.core;
        Some((
            core.grant_waits.load(Ordering::Relaxed),
            core.grant_wait_nanos.load(Ordering::Relaxed),
        ))
    }
}

impl InnerSend for Stripe {
    fn post(&mut self, ptr: *const u8, len: usize, _mr: InnerMr) -> Result<bool> {
        // SAFETY: the InnerSend contract: the memory stays valid until the send completes.
        unsafe { self.post_frame(ptr as usize, len, false) }
    }

    fn test_oldest(&mut self) -> Result<bool> {
        self.test_oldest_frame()
    }
}

impl InnerRecv for Stripe {
    fn post(&mut self, ptr: *mut u8, len: usize, _mr: InnerMr) -> Result<bool> {
        // SAFETY: the InnerRecv contract: the memory stays valid and is the engine's to give
        // until the receive completes; each destination range is posted to one stripe only.
        unsafe { self.post_frame(ptr as usize, len, false) }
    }

    fn post_bounce(&mut self, ptr: *mut u8, len: usize) -> Result<bool> {
        // SAFETY: as for `post`.
        unsafe { self.post_frame(ptr as usize, len, self.demote_bounce) }
    }

    fn test_oldest(&mut self) -> Result<bool> {
        self.test_oldest_frame()
    }

    fn consumed(&mut self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::frame;
    use super::*;
    use crate::abi::ncclResult_t;
    use std::io::Write;
    use std::net::TcpListener;
    use std::time::Duration;

    /// A connected loopback pair; `buffers` > 0 shrinks both socket buffers, so that a large
    /// chunk cannot go in one write.
    fn tcp_pair(l: &TcpListener, buffers: usize) -> (TcpStream, TcpStream) {
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        for s in [&a, &b] {
            s.set_nodelay(true).unwrap();
            sys::set_buffers(s, buffers, buffers).unwrap();
        }
        (a, b)
    }

    /// The window the tests' stripes run with (NCCL_TCPXR_UNREAD_BYTES; off by default, but
    /// these tests are the window's too).
    const WINDOW: u64 = 256 << 10;

    /// A stripe pair in a pool of 2 threads, timed as under NCCL_TCPXR_STATS (the tests read
    /// the hand-off and chunk times), with the default window.
    fn stripes(l: &TcpListener, buffers: usize, handoff: usize) -> (Stripe, Stripe) {
        stripes_with(l, buffers, handoff, WindowBounds::fixed(WINDOW))
    }

    /// As [`stripes`], the receiver's SO_RCVBUF raised for `window` as the transport's accept
    /// does ([`WindowBounds::receive_buffer`]).
    fn stripes_with(l: &TcpListener, buffers: usize, handoff: usize, window: WindowBounds) -> (Stripe, Stripe) {
        let (a, b) = tcp_pair(l, buffers);
        sys::set_buffers(&b, 0, window.receive_buffer(buffers)).unwrap();
        let shape = PoolShape {
            stats: true,
            ..PoolShape::threads(2)
        };
        (
            Stripe::sending(a, shape, handoff).unwrap(),
            receiving(b, shape, handoff, window),
        )
    }

    /// The receiving end of `b`. Its window is fitted to the socket's receive buffer, and the
    /// first stripe whose window that caps logs a WARN (asserted in tests/faults.rs): a test that
    /// shrinks the buffer, or a host whose net.core.rmem_max is small, provokes it.
    fn receiving(b: TcpStream, shape: PoolShape, handoff: usize, window: WindowBounds) -> Stripe {
        crate::testlog::allow("net.core.rmem_max caps it");
        Stripe::receiving(b, shape, handoff, window).unwrap()
    }

    fn send(tx: &mut Stripe, data: &[u8]) {
        assert!(InnerSend::post(tx, data.as_ptr(), data.len(), InnerMr::NONE).unwrap());
    }

    fn recv(rx: &mut Stripe, out: &mut [u8]) {
        assert!(InnerRecv::post(rx, out.as_mut_ptr(), out.len(), InnerMr::NONE).unwrap());
    }

    /// Tests the oldest receive until it completes or fails (10 s at most).
    fn wait_recv(rx: &mut Stripe) -> Result<()> {
        let start = Instant::now();
        while !InnerRecv::test_oldest(rx)? {
            assert!(start.elapsed() < Duration::from_secs(10), "receive did not complete");
        }
        Ok(())
    }

    fn wait_send(tx: &mut Stripe) {
        let start = Instant::now();
        while !InnerSend::test_oldest(tx).unwrap() {
            assert!(start.elapsed() < Duration::from_secs(10), "send did not complete");
        }
    }

    fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
        let start = Instant::now();
        while !cond() {
            assert!(start.elapsed() < Duration::from_secs(10), "{what}");
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    fn data(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| ((i * 7) as u8) ^ seed).collect()
    }

    /// Bytes waiting unread in a socket's receive queue.
    fn unread(fd: RawFd) -> usize {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer, which points at `n`.
        assert_eq!(unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) }, 0);
        n as usize
    }

    #[test]
    fn a_receiver_that_reads_nothing_has_one_window_queued_and_the_rest_waits_with_the_sender() {
        const W: u64 = 16 << 10;
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let payload = data(1 << 20, 3);
        // Proxy-driven, then through a worker.
        for handoff in [usize::MAX, 1] {
            let (mut tx, mut rx) = stripes_with(&l, 0, handoff, WindowBounds::fixed(W));
            send(&mut tx, &payload);
            wait_until("the sender fills the window", || {
                let _ = InnerSend::test_oldest(&mut tx);
                unread(InnerStripe::fd(&rx)) == W as usize
            });
            let until = Instant::now() + Duration::from_millis(100);
            while Instant::now() < until {
                assert!(
                    !InnerSend::test_oldest(&mut tx).unwrap(),
                    "handoff {handoff}: sent past the grant"
                );
                assert_eq!(unread(InnerStripe::fd(&rx)), W as usize, "handoff {handoff}");
            }
            let mut out = vec![0u8; payload.len()];
            recv(&mut rx, &mut out);
            wait_recv(&mut rx).unwrap();
            wait_send(&mut tx);
            assert!(out == payload, "handoff {handoff}");
            // NCCL_TCPXR_STATS counts the waits: the first for the opening grant perhaps, and the
            // one of 100 ms and more that the unread window held the sender.
            let (waits, nanos) = InnerStripe::grant_waits(&tx).unwrap();
            assert!(
                waits >= 1 && nanos >= 100_000_000,
                "handoff {handoff}: {waits} waits, {nanos} ns"
            );
            assert_eq!(
                InnerStripe::grant_waits(&rx),
                Some((0, 0)),
                "a receiver waits for no grant"
            );
        }
        // Without a window TCP alone decides, and it takes far more than 16 KiB unread.
        let (mut tx, rx) = stripes_with(&l, 0, usize::MAX, WindowBounds::fixed(0));
        send(&mut tx, &payload);
        wait_until("TCP takes more than a window", || {
            let _ = InnerSend::test_oldest(&mut tx);
            unread(InnerStripe::fd(&rx)) > 4 * W as usize
        });
    }

    #[test]
    fn many_chunks_through_a_small_window_arrive_whole_in_order_both_ways_of_driving() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let growing = WindowBounds {
            least: 16 << 10,
            most: 1 << 20,
        };
        for (handoff, window) in [
            (usize::MAX, WindowBounds::fixed(16 << 10)),
            (1, WindowBounds::fixed(16 << 10)),
            (64 << 10, WindowBounds::fixed(100_000)),
            (usize::MAX, growing),
            (1, growing),
        ] {
            let (mut tx, mut rx) = stripes_with(&l, 0, handoff, window);
            let payloads: Vec<Vec<u8>> = (0..24).map(|i| data(1000 + i * 37_001, i as u8)).collect();
            let mut outs: Vec<Vec<u8>> = payloads.iter().map(|p| vec![0u8; p.len()]).collect();
            // Receives posted in two halves, the second after the sender has run ahead.
            for o in &mut outs[..12] {
                recv(&mut rx, o);
            }
            for p in &payloads {
                send(&mut tx, p);
            }
            for o in &mut outs[12..] {
                recv(&mut rx, o);
            }
            let (mut sent, mut got) = (0, 0);
            let start = Instant::now();
            while sent < payloads.len() || got < outs.len() {
                assert!(
                    start.elapsed() < Duration::from_secs(20),
                    "handoff {handoff}: stuck at {sent} sent, {got} received"
                );
                if sent < payloads.len() && InnerSend::test_oldest(&mut tx).unwrap() {
                    sent += 1;
                }
                if got < outs.len() && InnerRecv::test_oldest(&mut rx).unwrap() {
                    got += 1;
                }
            }
            assert!(outs == payloads, "handoff {handoff} window {window:?}");
            // 16 KiB against chunks of up to 850 KiB read as they come: the sender stops at
            // nearly every grant while the receiver waits, so a window that may grow does.
            let (growths, largest) = InnerStripe::window_growth(&rx).unwrap();
            if window.most > window.least {
                assert!(growths > 0 && largest <= window.most, "{growths} growths to {largest}");
            } else {
                assert_eq!((growths, largest), (0, window.least));
            }
        }
    }

    #[test]
    fn a_chunk_the_socket_takes_at_once_moves_on_the_calling_thread_and_its_io_time_is_counted() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let (mut tx, mut rx) = stripes(&l, 0, usize::MAX);
        let payload = data(100 << 10, 1);
        let mut out = vec![0u8; payload.len()];
        assert_eq!(InnerStripe::io_nanos(&rx), Some(0));
        recv(&mut rx, &mut out);
        send(&mut tx, &payload);
        assert!(
            InnerSend::test_oldest(&mut tx).unwrap(),
            "100 KiB fit the socket: sent within post, no hand-off"
        );
        wait_recv(&mut rx).unwrap();
        assert!(out == payload);
        assert!(InnerStripe::io_nanos(&tx).unwrap() > 0 && InnerStripe::io_nanos(&rx).unwrap() > 0);
        let p = InnerStripe::progress(&tx).unwrap();
        assert_eq!(
            (p.posted_bytes, p.done_bytes, p.with_worker),
            (100 << 10, 100 << 10, false)
        );
        let p = InnerStripe::progress(&rx).unwrap();
        assert_eq!(
            (p.posted_bytes, p.done_bytes, p.with_worker),
            (100 << 10, 100 << 10, false)
        );
    }

    #[test]
    fn bounce_receives_land_whole_and_count_as_demoted_only_where_demoting_is_on_and_the_cpu_can() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        for on in [true, false] {
            let (mut tx, rx) = stripes(&l, 0, usize::MAX);
            let mut rx = rx.demoting_bounce(on);
            let (a, b) = (data(300 << 10, 3), data(5000, 4));
            let (mut out_a, mut out_b) = (vec![0u8; a.len()], vec![0u8; b.len()]);
            assert!(InnerRecv::post_bounce(&mut rx, out_a.as_mut_ptr(), out_a.len()).unwrap());
            recv(&mut rx, &mut out_b);
            send(&mut tx, &a);
            send(&mut tx, &b);
            wait_recv(&mut rx).unwrap();
            InnerRecv::consumed(&mut rx).unwrap();
            wait_recv(&mut rx).unwrap();
            wait_send(&mut tx);
            assert!(out_a == a && out_b == b, "demote {on}");
            // Only the bounce receive, and only where cldemote runs; never a plain receive.
            let demoted = if on && demote::supported() { a.len() as u64 } else { 0 };
            assert_eq!(InnerStripe::demoted_bytes(&rx), Some(demoted), "demote {on}");
            assert_eq!(InnerStripe::demoted_bytes(&tx), Some(0));
        }
    }

    #[test]
    fn a_chunks_time_splits_at_its_last_byte_into_moving_and_waiting_for_nccls_test() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        // Every chunk to a worker, so it finishes without a test.
        let (mut tx, mut rx) = stripes(&l, 0, 1);
        let ms = |ns: u64| ns / 1_000_000;
        let payload = data(64 << 10, 3);
        let mut out = vec![0u8; payload.len()];
        recv(&mut rx, &mut out);
        std::thread::sleep(Duration::from_millis(40)); // the data comes 40 ms after the post
        send(&mut tx, &payload);
        wait_until("the worker has read the chunk", || {
            InnerStripe::progress(&rx).unwrap().done_bytes == payload.len() as u64
        });
        wait_until("the worker has sent the chunk", || {
            InnerStripe::progress(&tx).unwrap().done_bytes == payload.len() as u64
        });
        std::thread::sleep(Duration::from_millis(30)); // NCCL's thread looks 30 ms later
        assert_eq!(InnerStripe::chunk_times(&rx).unwrap().chunks, 0, "not seen yet");
        wait_recv(&mut rx).unwrap();
        wait_send(&mut tx);
        assert!(out == payload);
        let r = InnerStripe::chunk_times(&rx).unwrap();
        assert_eq!(r.chunks, 1);
        assert!((40..5000).contains(&ms(r.post_to_done_nanos)), "{r:?}");
        assert!((30..5000).contains(&ms(r.done_to_seen_nanos)), "{r:?}");
        let t = InnerStripe::chunk_times(&tx).unwrap();
        assert_eq!(t.chunks, 1);
        assert!(ms(t.post_to_done_nanos) < 30, "sent at once: {t:?}");
        assert!((30..5000).contains(&ms(t.done_to_seen_nanos)), "{t:?}");
    }

    #[test]
    fn a_backlog_goes_to_a_worker_and_the_stripe_comes_back_once_it_is_gone() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let (mut tx, mut rx) = stripes(&l, 64 << 10, 1);
        let chunks: Vec<Vec<u8>> = (0..8).map(|i| data(1 << 20, i)).collect();
        let mut outs = vec![vec![0u8; 1 << 20]; 8];
        for o in &mut outs {
            recv(&mut rx, o);
        }
        assert!(
            InnerStripe::progress(&rx).unwrap().with_worker,
            "a receive larger than the hand-off size is the pool's from its post, before any byte"
        );
        for c in &chunks {
            send(&mut tx, c);
        }
        for _ in 0..8 {
            let start = Instant::now();
            while !InnerRecv::test_oldest(&mut rx).unwrap() {
                assert!(start.elapsed() < Duration::from_secs(10));
            }
        }
        for _ in 0..8 {
            wait_send(&mut tx);
        }
        assert!(outs == chunks);
        // Counted by the stripe itself: sampling `with_worker` from here can miss a worker that
        // ran while this thread was descheduled.
        let (handoffs, _) = InnerStripe::handoffs(&rx).unwrap();
        assert!(handoffs >= 1, "a 1 MiB chunk arriving in pieces goes to a worker");
        wait_until("the sender comes back to the proxy", || {
            !InnerStripe::progress(&tx).unwrap().with_worker
        });
        wait_until("the receiver comes back to the proxy", || {
            !InnerStripe::progress(&rx).unwrap().with_worker
        });
        // Back with the proxy, the stripes still move data, on the calling thread again.
        let small = data(1000, 9);
        let mut out = vec![0u8; 1000];
        recv(&mut rx, &mut out);
        send(&mut tx, &small);
        wait_recv(&mut rx).unwrap();
        wait_send(&mut tx);
        assert!(out == small);
        let p = InnerStripe::progress(&rx).unwrap();
        assert_eq!(p.posted_bytes, p.done_bytes);
        assert_eq!(p.done_bytes, (8 << 20) + 1000);
        // 8 MiB cannot fit a 64 KiB socket: the rest was a worker's. Read from the stripe's count:
        // with the receiver's worker draining the socket meanwhile, the sender's may finish and
        // give the stripe back before this thread could sample `with_worker`.
        let (n, waited) = InnerStripe::handoffs(&tx).unwrap();
        assert!(
            n >= 1 && waited > 0,
            "the sender's hand-offs are counted: {n}, {waited} ns"
        );
    }

    #[test]
    fn chunks_posted_while_a_worker_gives_the_stripe_back_are_never_lost() {
        // Many rounds of: a backlog goes to a worker, and more chunks are posted while the worker
        // may be giving the stripe back. Every chunk must arrive, and the sender is tested only
        // for its oldest chunk: a chunk must not wait for a later test of the sender.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let (mut tx, mut rx) = stripes(&l, 16 << 10, 1);
        // A worker preempted at the end of its give-back, made likely: each give-back of the
        // sender ends with a pause, so that posts land in it.
        let pause = || std::thread::sleep(Duration::from_micros(50));
        assert!(tx.core.after_give_back.set(Box::new(pause)).is_ok());
        let chunk = data(48 << 10, 3);
        let mut outs = vec![vec![0u8; chunk.len()]; 4];
        for round in 0..300 {
            for o in &mut outs {
                recv(&mut rx, o);
            }
            for _ in 0..4 {
                send(&mut tx, &chunk);
                // Give the worker a chance to catch up and give the stripe back.
                if round % 3 == 0 {
                    std::thread::yield_now();
                }
            }
            for _ in 0..4 {
                wait_recv(&mut rx).unwrap();
                wait_send(&mut tx);
            }
            assert!(outs.iter().all(|o| *o == chunk), "round {round}");
        }
    }

    /// Holds a stripe's workers at the end of each give-back (the `after_give_back` hook) until
    /// the test releases that give-back: give-back n (from 1) waits for `release(n)`, 5 s at most.
    struct GiveBackGate {
        arrived: AtomicU64,
        released: AtomicU64,
    }

    impl GiveBackGate {
        fn install(stripe: &Stripe) -> Arc<GiveBackGate> {
            let gate = Arc::new(GiveBackGate {
                arrived: AtomicU64::new(0),
                released: AtomicU64::new(0),
            });
            let g = gate.clone();
            let hook = move || {
                let n = g.arrived.fetch_add(1, Ordering::AcqRel) + 1;
                let start = Instant::now();
                while g.released.load(Ordering::Acquire) < n && start.elapsed() < Duration::from_secs(5) {
                    std::thread::sleep(Duration::from_micros(50));
                }
            };
            assert!(stripe.core.after_give_back.set(Box::new(hook)).is_ok());
            gate
        }

        /// Waits until give-back `n` has happened (its worker is then held).
        fn wait_for(&self, n: u64) {
            wait_until("the sender's worker gives the stripe back", || {
                self.arrived.load(Ordering::Acquire) >= n
            });
        }

        fn release(&self, n: u64) {
            self.released.fetch_max(n, Ordering::AcqRel);
        }
    }

    #[test]
    fn a_chunk_posted_as_a_worker_gives_the_stripe_back_leaves_from_its_own_post() {
        // The sender's worker sends chunk A, gives the stripe back and is held right there, at
        // the end of its turn; chunk B is posted then, and the sender is not tested again until
        // both chunks have arrived: B must leave from its post (or be handed on from there),
        // not wait for a later test of the sender.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let (mut tx, mut rx) = stripes(&l, 16 << 10, 1);
        let gate = GiveBackGate::install(&tx);
        let (a, b) = (data(48 << 10, 4), data(48 << 10, 5));
        let mut outs = vec![vec![0u8; a.len()]; 2];
        for round in 0..50u64 {
            for o in &mut outs {
                o.fill(0);
                recv(&mut rx, o);
            }
            send(&mut tx, &a);
            gate.wait_for(2 * round + 1);
            send(&mut tx, &b);
            gate.release(2 * round + 1);
            wait_recv(&mut rx).unwrap();
            wait_recv(&mut rx).unwrap();
            wait_send(&mut tx);
            wait_send(&mut tx);
            assert!(outs[0] == a && outs[1] == b, "round {round}");
            // B's own give-back.
            gate.wait_for(2 * round + 2);
            gate.release(2 * round + 2);
        }
        gate.release(u64::MAX);
    }

    #[test]
    fn a_chunk_the_receiver_did_not_post_is_a_remote_error() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let (mut tx, mut rx) = stripes(&l, 0, usize::MAX);
        let payload = data(100, 1);
        let mut out = vec![0u8; 200];
        recv(&mut rx, &mut out);
        send(&mut tx, &payload);
        let e = wait_recv(&mut rx).unwrap_err();
        assert_eq!(e.code, ncclResult_t::ncclRemoteError);
        assert!(e.msg.contains("out of step"), "{}", e.msg);
        // The error stays.
        assert_eq!(InnerRecv::test_oldest(&mut rx).unwrap_err(), e);
    }

    #[test]
    fn a_peer_that_closes_mid_chunk_is_a_remote_error_for_the_proxy_and_for_a_worker() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        for handoff in [usize::MAX, 1] {
            let (mut a, b) = tcp_pair(&l, 0);
            let mut rx = receiving(b, PoolShape::threads(2), handoff, WindowBounds::fixed(WINDOW));
            let mut out = vec![0u8; 1 << 20];
            recv(&mut rx, &mut out);
            a.write_all(&frame::encode(0, 1 << 20)).unwrap();
            a.write_all(&[1u8; 1000]).unwrap();
            if handoff == 1 {
                // The proxy reads the first bytes and hands the rest of the chunk to a worker,
                // which then waits for it.
                wait_until("the receive goes to a worker", || {
                    let _ = InnerRecv::test_oldest(&mut rx);
                    InnerStripe::progress(&rx).unwrap().with_worker
                });
            }
            // As a tcpxr sender does before it closes: read the grant, so the close is an EOF.
            let mut grant = [0u8; 8];
            a.read_exact(&mut grant).unwrap();
            drop(a);
            let e = wait_recv(&mut rx).unwrap_err();
            assert_eq!(e.code, ncclResult_t::ncclRemoteError, "handoff {handoff}");
            assert!(e.msg.contains("in the middle of chunk 0"), "{}", e.msg);
        }
    }

    /// Aborts the test process if it is still alive after `limit`: a hang fails loudly instead of
    /// stalling the test run.
    struct Watchdog(Arc<AtomicBool>);

    impl Watchdog {
        fn new(limit: Duration, what: &'static str) -> Watchdog {
            let done = Arc::new(AtomicBool::new(false));
            let d = done.clone();
            std::thread::spawn(move || {
                let start = Instant::now();
                while !d.load(Ordering::Acquire) {
                    if start.elapsed() > limit {
                        eprintln!("{what} (after {limit:?}): aborting");
                        std::process::abort();
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
            Watchdog(done)
        }
    }

    impl Drop for Watchdog {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }

    #[test]
    fn closing_idle_sleeping_and_busy_stripes_never_hangs_and_never_writes_after_close() {
        let _watchdog = Watchdog::new(Duration::from_secs(120), "a stripe close hung");
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        const CHUNK: usize = 128 << 10;
        let payload = data(CHUNK, 5);
        // Receive buffers of the previous round, overwritten with a canary after their stripes
        // closed: a worker that wrote after close would change them.
        let mut closed: Vec<Vec<u8>> = vec![];
        let start = Instant::now();
        for round in 0..1500 {
            // Idle: nothing posted.
            let (idle_tx, idle_rx) = stripes(&l, 0, 1);
            // Sleeping: a chunk has started to arrive and its rest never comes; a worker waits
            // for it in epoll.
            let (mut raw, b) = tcp_pair(&l, 0);
            let mut sleeper = receiving(b, PoolShape::threads(2), 1, WindowBounds::fixed(WINDOW));
            let mut sleep_buf = vec![0u8; CHUNK];
            recv(&mut sleeper, &mut sleep_buf);
            raw.write_all(&frame::encode(0, CHUNK)).unwrap();
            raw.write_all(&payload[..100]).unwrap();
            wait_until("the waiting receive goes to a worker", || {
                let _ = InnerRecv::test_oldest(&mut sleeper);
                InnerStripe::progress(&sleeper).unwrap().with_worker
            });
            // Busy: small socket buffers, chunks posted on both ends, workers moving them.
            let (mut btx, mut brx) = stripes(&l, 16 << 10, 1);
            let mut busy_bufs = vec![vec![0u8; CHUNK]; 4];
            for b in &mut busy_bufs {
                recv(&mut brx, b);
            }
            for _ in 0..4 {
                send(&mut btx, &payload);
            }
            let _ = InnerRecv::test_oldest(&mut brx);
            // Close in an order that changes from round to round.
            match round % 3 {
                0 => {
                    drop((btx, brx, sleeper));
                    drop((idle_tx, idle_rx));
                }
                1 => {
                    drop((brx, sleeper, idle_rx));
                    drop((btx, idle_tx));
                }
                _ => {
                    drop((idle_rx, sleeper, btx));
                    drop((brx, idle_tx));
                }
            }
            drop(raw);
            for b in &closed {
                assert!(b.iter().all(|x| *x == 0xC5), "round {round}: written after close");
            }
            closed = busy_bufs;
            closed.push(sleep_buf);
            for b in &mut closed {
                b.fill(0xC5);
            }
        }
        eprintln!(
            "1500 rounds of 3 stripe pairs opened and closed in {:?}",
            start.elapsed()
        );
    }

    /// A sender that closes as soon as its chunk counts as sent (in its kernel) loses none of it,
    /// though the reading receiver's grants may still arrive after the close (a reset would
    /// discard what the sender's kernel holds): where the receiver's kernel keeps less than the
    /// window asks (net.core.rmem_max caps SO_RCVBUF; here the test lowers it, before the
    /// stripe starts or after), the window is fitted to it, and the close waits for the receiver's
    /// kernel to acknowledge what is left.
    #[test]
    fn a_sender_closing_at_once_loses_nothing_to_a_later_grant_whatever_the_receive_buffer() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let shape = PoolShape::threads(2);
        // (window, the receiver's SO_RCVBUF before its stripe starts, and after, 0: unchanged)
        for (window, before, after) in [
            (WINDOW, 64 << 10, 0),
            (4 << 20, 212_992, 0),
            (4 << 20, 8 << 20, 256 << 10),
        ] {
            let (a, b) = tcp_pair(&l, 0);
            sys::set_buffers(&b, 0, before).unwrap();
            let kept = sys::kept_receive_buffer(&b).unwrap();
            let b_fd = b.as_raw_fd();
            let mut rx = receiving(b, shape, usize::MAX, WindowBounds::fixed(window));
            let mut tx = Stripe::sending(a, shape, usize::MAX).unwrap();
            assert_eq!(
                InnerStripe::window_growth(&rx),
                Some((0, WindowBounds::fixed(window).fitted(kept).most))
            );
            if after > 0 {
                // SAFETY: b_fd is rx's socket, open until rx drops at the end of the round.
                let b =
                    std::mem::ManuallyDrop::new(unsafe { <TcpStream as std::os::fd::FromRawFd>::from_raw_fd(b_fd) });
                sys::set_buffers(&b, 0, after).unwrap();
            }
            let payload = data(3 * window as usize / 4, 9);
            let mut out = vec![0u8; payload.len()];
            recv(&mut rx, &mut out);
            std::thread::scope(|s| {
                let reader = s.spawn(|| wait_recv(&mut rx));
                send(&mut tx, &payload);
                wait_send(&mut tx);
                drop(tx);
                let got = reader.join().unwrap();
                assert!(
                    got.is_ok(),
                    "window {window}, receive buffer {before} then {after}: {got:?}"
                );
            });
            assert!(out == payload, "window {window}: the chunk arrived changed");
        }
    }

    #[test]
    fn a_window_is_fitted_to_a_quarter_of_the_buffer_the_kernel_keeps() {
        let window = WindowBounds {
            least: 64 << 10,
            most: 1 << 20,
        };
        assert_eq!(window.receive_buffer(0), 2 << 20);
        assert_eq!(window.receive_buffer(8 << 20), 8 << 20);
        assert_eq!(WindowBounds::fixed(0).receive_buffer(0), 0);
        // The kernel keeps twice what was asked: the window as asked fits.
        assert_eq!(window.fitted(4 << 20), window);
        // A stock net.core.rmem_max (212992) keeps 425984 whatever was asked.
        let stock = window.fitted(425_984);
        assert_eq!((stock.least, stock.most), (64 << 10, 106_496));
        let small = window.fitted(128 << 10);
        assert_eq!((small.least, small.most), (32 << 10, 32 << 10));
        assert_eq!(window.fitted(0).most, super::super::grant::MIN_FITTED_WINDOW);
        assert_eq!(WindowBounds::fixed(0).fitted(4096), WindowBounds::fixed(0));
    }
}
