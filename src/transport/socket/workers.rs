//! The socket transport's process-wide I/O pool: a few threads that drive stripes with a backlog,
//! and the two readiness sets every stripe's socket is in.
//!
//! * The **proxy set** (edge-triggered, always armed): NCCL's proxy thread asks it once per pass
//!   over its connections ([`Pool::poll_ready`], a zero-timeout `epoll_wait`) which sockets have
//!   become readable or writable, instead of one `recv` per posted receive per pass.
//! * The **worker set** (one-shot, armed only while a worker owns the stripe): a stripe handed to
//!   the pool is armed here ([`Registration::hand_off`]); the kernel gives its next readiness to
//!   exactly one idle worker, waking it only if it sleeps. A worker that still has a backlog after
//!   moving what it could re-arms the registration ([`Lease::rearm`]) and goes back to waiting.
//!   The epoll ready list is the queue between the proxy and the workers.
//!
//! **Spinning.** Waking a sleeping thread costs tens of microseconds on a virtual machine (an
//! inter-processor interrupt to a halted vCPU), which is what a hand-off paid on every NCCL message
//! of 128-512 KiB (a ping-pong of 128 KiB messages: 53 us one way through the pool against 32 with
//! NCCL's thread moving the bytes itself, measured on a VM of the GPU machine; a woken thread
//! started 18-20 us after its hand-off, run 173). So up to `spinners` idle workers keep looking
//! for work without sleeping for `spin` after they last had work, and the pool keeps at most that
//! many cores busy waiting, none once traffic has stopped for `spin`.
//!
//! **The hand-off queue.** While a worker spins, a hand-off skips the epoll set: the stripe's token
//! goes on `handed`, a queue the spinners check with one atomic load per turn of their loop, and
//! the first to see it takes it. Through the epoll set a spinner found its work only by a
//! zero-timeout `epoll_wait` (a syscall under the set's lock, which the proxy's `epoll_ctl` and
//! every other spinner contend for): at 4 ranks with 8 spinners that way a 1 MiB all_reduce took
//! 746-852 us, through the queue 605-640 (run 175). A spinner still polls the epoll set every
//! [`QUEUE_CHECKS`] turns, for the stripes that re-armed their socket and wait for it. The handover
//! between the two paths: the proxy pushes, then reads the spinner count; a spinner about to
//! sleep lowers the count, then looks at the queue once more (both sequentially consistent), so
//! at least one of the two sees the other. A proxy that finds no spinner left takes its token
//! back and arms the socket instead, unless a spinner has already taken it.
//!
//! Events name a registration by a token (slot index and generation), looked up in a registry
//! that holds the stripe's shared state, so an event that arrives after its stripe closed finds
//! nothing. Threads: the count the transport's plan fixed at the first connection (the configured
//! count, or the process's share of the host's cores: crate::settings::pool_movers), shared by
//! every comm of the process; they start with the pool
//! and are joined when the last stripe closes (NCCL may dlclose the plugin right after its last
//! comm goes).
use super::epoll::{Epoll, Latch, NO_EVENT};
use super::lock;
use super::pool_stats::{Found, PoolCounters};
use crate::error::{Error, Result};
use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How the process's pool is made: its threads, and how long an idle one keeps looking for work
/// before it sleeps (see "Spinning" above; zero: never).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolShape {
    /// 0: none, NCCL's proxy thread moves every byte.
    pub threads: usize,
    pub spin: Duration,
    /// How many idle threads may spin at once.
    pub spinners: usize,
    /// NCCL_TCPXR_STATS: log the pool's counters (pool_stats.rs) when it stops.
    pub stats: bool,
}

impl PoolShape {
    /// `threads` threads that sleep as soon as they are idle.
    pub fn threads(threads: usize) -> PoolShape {
        PoolShape {
            threads,
            spin: Duration::ZERO,
            spinners: 0,
            stats: false,
        }
    }
}

/// What the pool drives: a stripe's shared state.
pub trait Work: Send + Sync {
    /// The proxy set reported the socket ready (may be spurious).
    fn ready(&self);
    /// A worker got the armed registration's event; `lease` re-arms it.
    fn work(&self, lease: &Lease<'_>);
    /// A worker's turn on it panicked: fail it, so that its comm reports an error instead of
    /// waiting for a worker that gave up.
    fn abandon(&self);
}

/// The token of the stop latch in the worker set; registry tokens never take this value.
const STOP: u64 = u64::MAX;

/// Registered stripes by token: slot index in the low half, the slot's generation in the high
/// half, so a reused slot does not answer to an old token.
#[derive(Default)]
struct Registry {
    slots: Vec<(u32, Option<Arc<dyn Work>>)>,
    free: Vec<u32>,
}

impl Registry {
    fn insert(&mut self, work: Arc<dyn Work>) -> u64 {
        let index = self.free.pop().unwrap_or_else(|| {
            self.slots.push((0, None));
            (self.slots.len() - 1) as u32
        });
        let slot = &mut self.slots[index as usize];
        slot.0 = slot.0.wrapping_add(1);
        slot.1 = Some(work);
        ((slot.0 as u64) << 32) | index as u64
    }

    fn get(&self, token: u64) -> Option<&Arc<dyn Work>> {
        let (gen, index) = ((token >> 32) as u32, token as u32);
        match self.slots.get(index as usize) {
            Some((g, Some(w))) if *g == gen => Some(w),
            _ => None,
        }
    }

    fn remove(&mut self, token: u64) {
        if self.get(token).is_some() {
            let index = token as u32;
            self.slots[index as usize].1 = None;
            self.free.push(index);
        }
    }
}

struct Shared {
    proxy_set: Epoll,
    worker_set: Epoll,
    stop_latch: Latch,
    stop: AtomicBool,
    registry: Mutex<Registry>,
    /// Zero-timeout polls of the proxy set so far (stripes use it to poll once per pass).
    polls: AtomicU64,
    /// How long an idle worker looks for work before it sleeps, and whether one is doing so now.
    spin: Duration,
    spinners: usize,
    spinning: AtomicUsize,
    /// Stripes handed off while a worker spins (tokens, oldest first), and how many: see "The
    /// hand-off queue" above.
    handed: Mutex<VecDeque<u64>>,
    handed_len: AtomicUsize,
    /// NCCL_TCPXR_STATS only: none are kept otherwise (a shared counter costs the hot path).
    counters: Option<PoolCounters>,
}

impl Shared {
    /// Counts with the pool's counters, if it keeps them.
    fn count(&self, f: impl FnOnce(&PoolCounters)) {
        if let Some(c) = &self.counters {
            f(c);
        }
    }
}

/// Atomic looks at the hand-off queue a spinner makes between two looks at the epoll set.
const QUEUE_CHECKS: u32 = 64;

pub struct Pool {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    shape: PoolShape,
    started: Instant,
}

/// The pool every stripe of the process shares while any is open.
static POOL: Mutex<Weak<Pool>> = Mutex::new(Weak::new());

/// The process's pool, started in `shape` (threads at most the cores) if none is running. A pool
/// that is running keeps the shape it started with.
pub fn pool(shape: PoolShape) -> Result<Arc<Pool>> {
    let mut current = lock(&POOL);
    if let Some(p) = current.upgrade() {
        return Ok(p);
    }
    let p = Arc::new(Pool::start(shape)?);
    *current = Arc::downgrade(&p);
    Ok(p)
}

impl Pool {
    fn start(shape: PoolShape) -> Result<Pool> {
        fn os(what: &'static str) -> impl Fn(std::io::Error) -> Error {
            move |e| Error::os(what, e)
        }
        let shared = Arc::new(Shared {
            proxy_set: Epoll::new().map_err(os("epoll_create"))?,
            worker_set: Epoll::new().map_err(os("epoll_create"))?,
            stop_latch: Latch::new().map_err(os("eventfd"))?,
            stop: AtomicBool::new(false),
            registry: Mutex::new(Registry::default()),
            polls: AtomicU64::new(0),
            spin: shape.spin,
            spinners: shape.spinners,
            spinning: AtomicUsize::new(0),
            handed: Mutex::new(VecDeque::new()),
            handed_len: AtomicUsize::new(0),
            counters: shape.stats.then(PoolCounters::default),
        });
        // Level-triggered: once set, every waiter of the worker set sees it, now and later.
        shared
            .worker_set
            .add(shared.stop_latch.raw(), libc::EPOLLIN as u32, STOP)
            .map_err(os("epoll_ctl"))?;
        let mut pool = Pool {
            shared,
            threads: Vec::new(),
            shape,
            started: Instant::now(),
        };
        for i in 0..shape.threads {
            let shared = pool.shared.clone();
            let t = std::thread::Builder::new()
                .name(format!("tcpxr-io{i}"))
                .spawn(move || worker(&shared))
                .map_err(|e| Error::os("cannot start a tcpxr I/O thread", e))?;
            pool.threads.push(t);
        }
        log::debug!(target: "tcpxr::socket", "I/O pool started: {shape:?}");
        Ok(pool)
    }

    /// I/O threads in the pool (0: the proxy thread moves every byte).
    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    /// Adds `fd` to both sets: armed in the proxy set with the interest `events` (EPOLLIN,
    /// EPOLLOUT and friends), disarmed in the worker set until handed off. `work` is what events
    /// reach.
    pub fn register(&self, fd: RawFd, events: u32, work: Arc<dyn Work>) -> Result<Registration> {
        let token = lock(&self.shared.registry).insert(work);
        let reg = Registration {
            shared: self.shared.clone(),
            token,
            fd,
            in_proxy_set: false,
            in_worker_set: false,
        };
        self.add(reg, events)
    }

    fn add(&self, mut reg: Registration, events: u32) -> Result<Registration> {
        let s = &self.shared;
        s.proxy_set
            .add(reg.fd, events | libc::EPOLLET as u32, reg.token)
            .map_err(|e| Error::os("epoll_ctl add", e))?;
        reg.in_proxy_set = true;
        // One-shot with no interest: only an error or hang-up could fire, once, and a worker
        // ignores a stripe it does not own.
        s.worker_set
            .add(reg.fd, libc::EPOLLONESHOT as u32, reg.token)
            .map_err(|e| Error::os("epoll_ctl add", e))?;
        reg.in_worker_set = true;
        Ok(reg)
    }

    /// Marks every stripe the proxy set reports ready. One zero-timeout `epoll_wait`.
    pub fn poll_ready(&self) {
        let s = &self.shared;
        let mut events = [NO_EVENT; 64];
        let n = s.proxy_set.wait(&mut events, 0).unwrap_or(0);
        if n > 0 {
            let registry = lock(&s.registry);
            for ev in &events[..n] {
                if let Some(w) = registry.get(ev.u64) {
                    w.ready();
                }
            }
        }
        s.polls.fetch_add(1, Ordering::AcqRel);
    }

    /// How many times `poll_ready` has run in the process.
    pub fn polls(&self) -> u64 {
        self.shared.polls.load(Ordering::Acquire)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if self.shared.stop_latch.set().is_err() {
            // Cannot happen for an eventfd counter far below its limit; without the latch the
            // threads could not be woken, so leave them rather than wait forever.
            log::warn!(target: "tcpxr::socket", "cannot wake the I/O threads to stop them");
            return;
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        if let Some(c) = &self.shared.counters {
            let (s, secs) = (&self.shape, self.started.elapsed().as_secs_f64());
            log::info!(target: "tcpxr::socket", "{}", c.line(s.threads, s.spinners, secs));
        }
    }
}

/// A socket's place in the pool's sets. Dropping it removes the socket from both and forgets its
/// token; the caller keeps the socket open until then.
pub struct Registration {
    shared: Arc<Shared>,
    token: u64,
    fd: RawFd,
    in_proxy_set: bool,
    in_worker_set: bool,
}

impl Registration {
    /// Gives the stripe to the workers: to a spinning one through the hand-off queue, or else by
    /// arming the worker set for this socket with the interest `events` (the next time it is ready
    /// so, one worker gets it).
    pub fn hand_off(&self, events: u32) -> Result<()> {
        let s = &self.shared;
        let mut taken_back = false;
        if s.spinning.load(Ordering::SeqCst) > 0 {
            {
                // Counted under the lock, so the count never runs behind the queue.
                let mut q = lock(&s.handed);
                q.push_back(self.token);
                s.handed_len.fetch_add(1, Ordering::SeqCst);
            }
            s.count(|c| c.queued());
            if s.spinning.load(Ordering::SeqCst) > 0 {
                return Ok(());
            }
            // Every spinner may have gone to sleep meanwhile: take the token back, unless one
            // took it before it went.
            let mut q = lock(&s.handed);
            let Some(at) = q.iter().position(|&t| t == self.token) else {
                return Ok(());
            };
            q.remove(at);
            s.handed_len.fetch_sub(1, Ordering::SeqCst);
            taken_back = true;
        }
        s.count(|c| c.armed(taken_back));
        arm(s, self.fd, events, self.token)
    }
}

fn arm(s: &Shared, fd: RawFd, events: u32, token: u64) -> Result<()> {
    s.worker_set
        .modify(fd, events | libc::EPOLLONESHOT as u32, token)
        .map_err(|e| Error::os("epoll_ctl arm", e))
}

impl Drop for Registration {
    fn drop(&mut self) {
        let s = &self.shared;
        if self.in_proxy_set {
            let _ = s.proxy_set.delete(self.fd);
        }
        if self.in_worker_set {
            let _ = s.worker_set.delete(self.fd);
        }
        lock(&s.registry).remove(self.token);
    }
}

/// What a worker holds while it drives a stripe: the means to re-arm its registration.
pub struct Lease<'a> {
    shared: &'a Shared,
    token: u64,
}

impl Lease<'_> {
    /// Arms the stripe's registration again, with the interest `events`.
    pub fn rearm(&self, fd: RawFd, events: u32) -> Result<()> {
        arm(self.shared, fd, events, self.token)
    }
}

fn worker(s: &Shared) {
    // One event per wait: each ready stripe goes to a different sleeping worker.
    let mut events = [NO_EVENT; 1];
    while !s.stop.load(Ordering::Acquire) {
        let n = match next_event(s, &mut events) {
            Ok(n) => n,
            Err(e) => {
                log::warn!(target: "tcpxr::socket", "I/O thread: epoll_wait failed: {e}");
                return;
            }
        };
        for ev in &events[..n] {
            let token = ev.u64;
            if token == STOP {
                continue;
            }
            // Cloned out of the registry, so the stripe's shared state outlives this turn even if
            // its stripe closes meanwhile; the stripe's close waits for a turn that is moving
            // bytes and makes a later one do nothing.
            let work = lock(&s.registry).get(token).cloned();
            if let Some(w) = work {
                let turn = std::panic::AssertUnwindSafe(|| w.work(&Lease { shared: s, token }));
                if std::panic::catch_unwind(turn).is_err() {
                    log::warn!(target: "tcpxr::socket", "a tcpxr I/O thread panicked while moving a stripe's bytes");
                    w.abandon();
                }
            }
        }
    }
}

/// The oldest stripe in the hand-off queue, as an event of the worker set.
fn take_handed(s: &Shared, events: &mut [libc::epoll_event]) -> Option<usize> {
    if s.handed_len.load(Ordering::SeqCst) == 0 {
        return None;
    }
    let token = {
        let mut q = lock(&s.handed);
        let token = q.pop_front()?;
        s.handed_len.fetch_sub(1, Ordering::SeqCst);
        token
    };
    events[0].u64 = token;
    Some(1)
}

/// The next piece of work: looked for without sleeping for `spin` if fewer than `spinners` other
/// workers are doing so (in the hand-off queue, and now and then in the worker set), then waited
/// for in the worker set.
fn next_event(s: &Shared, events: &mut [libc::epoll_event]) -> std::io::Result<usize> {
    let may_spin = !s.spin.is_zero()
        && s.spinning
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < s.spinners).then_some(n + 1)
            })
            .is_ok();
    if may_spin {
        let start = Instant::now();
        let found = 'spin: loop {
            for _ in 0..QUEUE_CHECKS {
                if let Some(n) = take_handed(s, events) {
                    break 'spin Ok((n, Found::Queue));
                }
                std::hint::spin_loop();
            }
            match s.worker_set.wait(events, 0) {
                Ok(0) if start.elapsed() < s.spin => {}
                other => break other.map(|n| (n, Found::SpinPoll)),
            }
        };
        s.spinning.fetch_sub(1, Ordering::SeqCst);
        s.count(|c| c.spun(start.elapsed()));
        match found {
            Ok((0, _)) => {}
            Ok((n, how)) => {
                if events[0].u64 != STOP {
                    s.count(|c| c.turn(how));
                }
                return Ok(n);
            }
            Err(e) => return Err(e),
        }
        // A hand-off that saw this worker still spinning left its stripe in the queue.
        if let Some(n) = take_handed(s, events) {
            s.count(|c| c.turn(Found::Queue));
            return Ok(n);
        }
    }
    s.count(|c| c.sleep());
    let n = s.worker_set.wait(events, -1)?;
    if n > 0 && events[0].u64 != STOP {
        s.count(|c| c.turn(Found::Wake));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nothing;
    impl Work for Nothing {
        fn ready(&self) {}
        fn work(&self, _: &Lease<'_>) {}
        fn abandon(&self) {}
    }

    #[test]
    fn a_token_answers_only_while_its_registration_lives() {
        let mut r = Registry::default();
        let a = r.insert(Arc::new(Nothing));
        assert!(r.get(a).is_some());
        r.remove(a);
        assert!(r.get(a).is_none());
        let b = r.insert(Arc::new(Nothing));
        assert_eq!(a as u32, b as u32, "the slot is reused");
        assert!(r.get(a).is_none() && r.get(b).is_some(), "under a new generation");
        r.remove(a);
        assert!(r.get(b).is_some(), "removing a stale token removes nothing");
        assert!(r.get(STOP).is_none());
    }

    /// Panics on its first turn, then counts turns; records being abandoned.
    #[derive(Default)]
    struct Panicky {
        turns: std::sync::atomic::AtomicUsize,
        abandoned: AtomicBool,
    }
    impl Work for Panicky {
        fn ready(&self) {}
        fn work(&self, _: &Lease<'_>) {
            if self.turns.fetch_add(1, Ordering::AcqRel) == 0 {
                panic!("deliberate panic in a test stripe's turn");
            }
        }
        fn abandon(&self) {
            self.abandoned.store(true, Ordering::Release);
        }
    }

    #[test]
    fn idle_workers_spin_at_most_spinners_at_a_time_for_the_spin_time_then_sleep() {
        #[derive(Default)]
        struct Count(std::sync::atomic::AtomicUsize);
        impl Work for Count {
            fn ready(&self) {}
            fn work(&self, _: &Lease<'_>) {
                self.0.fetch_add(1, Ordering::AcqRel);
            }
            fn abandon(&self) {}
        }
        let spin = Duration::from_millis(300);
        let pool = Pool::start(PoolShape {
            threads: 3,
            spin,
            spinners: 1,
            stats: true,
        })
        .unwrap();
        let spinning = || pool.shared.spinning.load(Ordering::Acquire);
        let wait = |what: &str, cond: &dyn Fn() -> bool| {
            let start = Instant::now();
            while !cond() {
                assert!(start.elapsed() < Duration::from_secs(10), "{what}");
                assert!(spinning() <= 1, "never more than NCCL_TCPXR_IO_SPIN_THREADS spin");
                std::thread::sleep(Duration::from_micros(200));
            }
        };
        // Idle from the start: one of the three looks for work, then all sleep.
        wait("one idle worker spins", &|| spinning() == 1);
        wait("the spin ends without work", &|| spinning() == 0);
        std::thread::sleep(spin / 2);
        assert_eq!(spinning(), 0, "asleep until work comes");
        // Work wakes one; after its turn it spins again, for the spin time only.
        let fd = Latch::new().unwrap();
        fd.set().unwrap();
        let work = Arc::new(Count::default());
        let reg = pool.register(fd.raw(), libc::EPOLLIN as u32, work.clone()).unwrap();
        reg.hand_off(libc::EPOLLIN as u32).unwrap();
        wait("the hand-off is taken", &|| work.0.load(Ordering::Acquire) == 1);
        // Nobody spun: the hand-off armed the socket and woke a sleeping worker.
        assert_counts(&pool, (0, 0, 1), (0, 0, 1));
        wait("the worker spins after its turn", &|| spinning() == 1);
        wait("and sleeps again", &|| spinning() == 0);
        drop(reg);
        drop(pool);
    }

    /// Counts its turns.
    #[derive(Default)]
    struct Turns(AtomicUsize);
    impl Work for Turns {
        fn ready(&self) {}
        fn work(&self, _: &Lease<'_>) {
            self.0.fetch_add(1, Ordering::AcqRel);
        }
        fn abandon(&self) {}
    }

    /// The pool's NCCL_TCPXR_STATS counters as its line gives them: turns (from the queue, found
    /// spinning, after a wake-up) and hand-offs (queued, taken back, armed with none spinning).
    fn assert_counts(pool: &Pool, turns: (u64, u64, u64), hand_offs: (u64, u64, u64)) {
        let line = pool
            .shared
            .counters
            .as_ref()
            .expect("a pool with stats")
            .line(1, 1, 1.0);
        let ((q, p, w), (queued, back, armed)) = (turns, hand_offs);
        for want in [
            format!("turns {q} from the hand-off queue, {p} found spinning in the epoll set, {w} after a wake-up"),
            format!("hand-offs {queued} queued to a spinner ({back} of them taken back"),
            format!("{armed} armed in the epoll set with none spinning"),
        ] {
            assert!(line.contains(&want), "{want:?} missing from {line:?}");
        }
    }

    fn wait_for(what: &str, cond: impl Fn() -> bool) {
        let start = Instant::now();
        while !cond() {
            assert!(start.elapsed() < Duration::from_secs(10), "{what}");
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_hand_off_while_a_worker_spins_reaches_it_through_the_queue_not_the_epoll_set() {
        let pool = Pool::start(PoolShape {
            threads: 1,
            spin: Duration::from_secs(5),
            spinners: 1,
            stats: true,
        })
        .unwrap();
        wait_for("the idle worker spins", || {
            pool.shared.spinning.load(Ordering::Acquire) == 1
        });
        // Never readable: through the epoll set this hand-off would never reach a worker.
        let fd = Latch::new().unwrap();
        let work = Arc::new(Turns::default());
        let reg = pool.register(fd.raw(), libc::EPOLLIN as u32, work.clone()).unwrap();
        reg.hand_off(libc::EPOLLIN as u32).unwrap();
        wait_for("the spinner takes the stripe from the queue", || {
            work.0.load(Ordering::Acquire) == 1
        });
        assert_eq!(pool.shared.handed_len.load(Ordering::Acquire), 0);
        assert_counts(&pool, (1, 0, 0), (1, 0, 0));
        drop(reg);
        drop(pool);
    }

    #[test]
    fn every_hand_off_reaches_one_worker_once_while_spinners_come_and_go() {
        // Spins short enough that many hand-offs meet a spinner going to sleep: each must then be
        // taken from the queue by that spinner or handed back to the epoll set, never lost, and
        // never both (the socket is always readable, so an armed one fires at once).
        let pool = Pool::start(PoolShape {
            threads: 2,
            spin: Duration::from_micros(20),
            spinners: 2,
            stats: false,
        })
        .unwrap();
        let fd = Latch::new().unwrap();
        fd.set().unwrap();
        let work = Arc::new(Turns::default());
        let reg = pool.register(fd.raw(), libc::EPOLLIN as u32, work.clone()).unwrap();
        let rounds = 20_000;
        for i in 1..=rounds {
            // Hand off at every point of a spinner's 20 us, its end included.
            let at = Instant::now();
            while at.elapsed() < Duration::from_micros((i % 31) as u64) {
                std::hint::spin_loop();
            }
            reg.hand_off(libc::EPOLLIN as u32).unwrap();
            wait_for("the hand-off is taken", || work.0.load(Ordering::Acquire) >= i);
            if i % 2000 == 0 {
                // Now and then a pause, so the spinners have all gone to sleep.
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(work.0.load(Ordering::Acquire), rounds, "one turn per hand-off");
        drop(reg);
        drop(pool);
    }

    #[test]
    fn a_panicking_turn_abandons_its_stripe_and_the_worker_lives_on() {
        crate::log::install_fallback();
        let pool = Pool::start(PoolShape::threads(1)).unwrap();
        let fd = Latch::new().unwrap();
        fd.set().unwrap(); // readable from now on
        let work = Arc::new(Panicky::default());
        let reg = pool.register(fd.raw(), libc::EPOLLIN as u32, work.clone()).unwrap();
        let wait = |what: &str, cond: &dyn Fn() -> bool| {
            let start = std::time::Instant::now();
            while !cond() {
                assert!(start.elapsed() < std::time::Duration::from_secs(10), "{what}");
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        };
        reg.hand_off(libc::EPOLLIN as u32).unwrap();
        wait("abandoned", &|| work.abandoned.load(Ordering::Acquire));
        crate::testlog::expect("a tcpxr I/O thread panicked while moving a stripe's bytes");
        reg.hand_off(libc::EPOLLIN as u32).unwrap();
        wait("a second turn by the same thread", &|| {
            work.turns.load(Ordering::Acquire) == 2
        });
        drop(reg);
        drop(pool); // joins the thread: it survived the panic
    }
}
