//! The RMA table (`ncclRmaPlugin_v14`) driven as NCCL's GIN and RMA proxies drive it: ranks on
//! threads (or a child process) over loopback, each calling init, listen, connect with every
//! rank's handle, createContext, regMrSym in the same order, then puts, signals and gets, polling
//! test and rmaProgress. Checks data, the ordering of strong signals, weak signals, gets, a
//! killed peer (ncclRemoteError within seconds) and bad arguments (a WARN and the right code).
mod common;
use common::*;
use nccl_net_tcpxr::abi::*;
use std::ffi::{c_int, c_void};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

const CHILD_VAR: &str = "TCPXR_RMA_CHILD";
/// A child that plays rank 1 with NCCL_TCPXR_STRIPES=2 against a parent's 4.
const LANES_VAR: &str = "TCPXR_RMA_LANES_CHILD";
/// A child that reports how many RMA devices tcpxr offers under its environment.
const OFF_VAR: &str = "TCPXR_RMA_DEVICES_CHILD";

// Before main: RMA on; in the child, play rank 1 of the killed-peer test; in the test process,
// nothing more.
before_main! {
    // tcpxr offers its RMA table only when asked (NCCL_TCPXR_RMA's doc says why). Sound: before
    // main, so before this process has a second thread; the children inherit it.
    if std::env::var_os("NCCL_TCPXR_RMA").is_none() {
        std::env::set_var("NCCL_TCPXR_RMA", "1");
    }
    run_child_case(OFF_VAR, |_| {
        let mut init = NULL;
        let mut n: c_int = -1;
        // SAFETY: tcpxr's table, called with valid out-pointers.
        unsafe {
            assert_eq!(rma().init.unwrap()(&mut init, 0x1234, None), OK);
            assert_eq!(rma().devices.unwrap()(&mut n), OK);
        }
        println!("DEVICES {n}");
    });
    run_child_case(LANES_VAR, |parent_handle| {
        let mut r = Rank::listen();
        println!("HANDLE {}", hex(&r.handle));
        let _ = std::io::stdout().flush();
        r.connect(&[unhex(parent_handle), r.handle], 1);
        let mut win = vec![7u8; 4096];
        let mh = r.reg(win.as_mut_ptr() as *mut c_void, win.len());
        println!("READY");
        let _ = std::io::stdout().flush();
        // Serve the parent (its puts land and its get is answered only while this rank
        // progresses) until its last put sets byte 1 to 10.
        let start = Instant::now();
        let mut told = false;
        loop {
            assert_eq!(r.progress(), OK);
            // SAFETY: bytes of the window the parent's puts write; read, never referenced.
            let (b0, b1) = unsafe {
                (
                    std::ptr::read_volatile(win.as_ptr()),
                    std::ptr::read_volatile(win.as_ptr().add(1)),
                )
            };
            if b0 == 9 && !told {
                told = true;
                println!("GOT");
                let _ = std::io::stdout().flush();
            }
            if b1 == 10 {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the parent's puts never came"
            );
        }
        r.close(&[mh]);
        let _ = &mut win;
    });
    run_child_case(CHILD_VAR, |parent_handle| {
        let handles = [unhex(parent_handle), [0u8; 128]];
        let mut r = Rank::listen();
        println!("HANDLE {}", hex(&r.handle));
        let _ = std::io::stdout().flush();
        r.connect(&[handles[0], r.handle], 1);
        let mut win = vec![7u8; 4096];
        let _mh = r.reg(win.as_mut_ptr() as *mut c_void, win.len());
        println!("READY");
        let _ = std::io::stdout().flush();
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    });
}

fn rma() -> &'static ncclRma_v14_t {
    table::<ncclRma_v14_t>("ncclRmaPlugin_v14")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> [u8; 128] {
    let mut out = [0u8; 128];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
    }
    out
}

/// One rank's objects, made through the exported table.
struct Rank {
    init: *mut c_void,
    listen: *mut c_void,
    handle: [u8; 128],
    coll: *mut c_void,
    ctx: *mut c_void,
}

// SAFETY: the tokens are plain integers to the test; tcpxr's table is thread-safe.
unsafe impl Send for Rank {}

const NULL: *mut c_void = std::ptr::null_mut();

impl Rank {
    fn listen() -> Rank {
        let t = rma();
        let mut init = NULL;
        // SAFETY: tcpxr's table, called with valid out-pointers.
        assert_eq!(unsafe { t.init.unwrap()(&mut init, 0x1234, None) }, OK);
        let mut n: c_int = 0;
        // SAFETY: as above.
        assert_eq!(unsafe { t.devices.unwrap()(&mut n) }, OK);
        assert!(n >= 1, "no RMA device over lo");
        let mut handle = [0u8; 128];
        let mut listen = NULL;
        // SAFETY: as above; the handle buffer is 128 bytes.
        let r = unsafe { t.listen.unwrap()(init, 0, handle.as_mut_ptr() as *mut c_void, &mut listen) };
        assert_eq!(r, OK);
        Rank {
            init,
            listen,
            handle,
            coll: NULL,
            ctx: NULL,
        }
    }

    fn connect(&mut self, handles: &[[u8; 128]], rank: usize) {
        let t = rma();
        let mut ptrs: Vec<*mut c_void> = handles.iter().map(|h| h.as_ptr() as *mut c_void).collect();
        // SAFETY: every handle is 128 bytes; out-pointers valid.
        let r = unsafe {
            t.connect.unwrap()(
                NULL,
                ptrs.as_mut_ptr(),
                handles.len() as c_int,
                rank as c_int,
                self.listen,
                &mut self.coll,
            )
        };
        assert_eq!(r, OK, "connect of rank {rank}");
        // SAFETY: as above.
        assert_eq!(unsafe { t.closeListen.unwrap()(self.listen) }, OK);
        let mut cfg = ncclRmaConfig_v14_t {
            // 4: the lanes a pair has by default (NCCL_TCPXR_STRIPES), so tests reach each.
            nContexts: 4,
            trafficClass: 0,
            rankStride: 1,
        };
        // SAFETY: as above.
        let r = unsafe { t.createContext.unwrap()(self.coll, &mut cfg, &mut self.ctx) };
        assert_eq!(r, OK);
    }

    fn reg(&self, data: *mut c_void, size: usize) -> *mut c_void {
        self.reg_as(data, size, NCCL_PTR_HOST, 0)
    }

    /// regMrSym of memory of `ty` (NCCL_PTR_HOST / NCCL_PTR_CUDA) with NCCL's mrFlags.
    fn reg_as(&self, data: *mut c_void, size: usize, ty: c_int, flags: u64) -> *mut c_void {
        let mut mh = NULL;
        // SAFETY: `data` is `size` bytes the caller keeps alive while registered.
        let r = unsafe { rma().regMrSym.unwrap()(self.coll, data, size, ty, flags, &mut mh) };
        assert_eq!(r, OK);
        mh
    }

    #[allow(clippy::too_many_arguments)]
    fn put_signal(
        &self,
        context: c_int,
        src: (*mut c_void, u64),
        size: usize,
        dst: (*mut c_void, u64),
        rank: usize,
        signal: Option<(*mut c_void, u64, bool)>,
    ) -> (R, *mut c_void) {
        let t = rma();
        let mut req = NULL;
        // SAFETY: handles from regMrSym; out-pointer valid.
        let r = unsafe {
            match signal {
                None => t.iput.unwrap()(
                    self.ctx,
                    context,
                    src.1,
                    src.0,
                    size,
                    dst.1,
                    dst.0,
                    rank as u32,
                    &mut req,
                ),
                Some((smh, soff, strong)) => t.iputSignal.unwrap()(
                    self.ctx,
                    context,
                    src.1,
                    src.0,
                    size,
                    dst.1,
                    dst.0,
                    rank as u32,
                    soff,
                    smh,
                    1,
                    NCCL_NET_SIGNAL_OP_ADD,
                    strong,
                    &mut req,
                ),
            }
        };
        (r, req)
    }

    /// An iget on context 0 of `size` bytes at `src` of `rank`'s window into `dst` here.
    fn get(&self, src: (*mut c_void, u64), size: usize, dst: (*mut c_void, u64), rank: usize) -> (R, *mut c_void) {
        let mut req = NULL;
        // SAFETY: handles from regMrSym; out-pointer valid.
        let r = unsafe { rma().iget.unwrap()(self.ctx, 0, src.1, src.0, size, dst.1, dst.0, rank as u32, &mut req) };
        (r, req)
    }

    fn test(&self, req: *mut c_void) -> (R, bool) {
        let mut done: c_int = 0;
        // SAFETY: out-pointer valid.
        let r = unsafe { rma().test.unwrap()(self.coll, req, &mut done) };
        (r, done == 1)
    }

    fn progress(&self) -> R {
        // SAFETY: a context token from createContext.
        unsafe { rma().rmaProgress.unwrap()(self.ctx) }
    }

    /// Tests `reqs` (progressing) until all are done.
    fn wait_all(&self, mut reqs: Vec<*mut c_void>) {
        let start = Instant::now();
        while !reqs.is_empty() {
            assert_eq!(self.progress(), OK);
            reqs.retain(|&q| {
                let (r, done) = self.test(q);
                assert_eq!(r, OK);
                !done
            });
            assert!(start.elapsed() < Duration::from_secs(20), "requests never completed");
        }
    }

    /// Marks this rank's own requests done in `arrived` and keeps progressing until all `n`
    /// ranks have: a rank serves the gets others asked of it only while it calls in (tcpxr has
    /// no thread; NCCL's proxy thread calls rmaProgress throughout), and an answer from GPU memory
    /// leaves piece by piece as its copies complete, so a rank that waited at a plain barrier
    /// once its own gets were done would leave its peers' gets unanswered, and the test hung.
    fn settle(&self, arrived: &AtomicUsize, n: usize) {
        arrived.fetch_add(1, Ordering::AcqRel);
        let start = Instant::now();
        while arrived.load(Ordering::Acquire) < n {
            assert_eq!(self.progress(), OK);
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "peers' requests never completed"
            );
        }
    }

    /// Progresses until `signal` reaches `want`.
    fn wait_signal(&self, signal: &AtomicU64, want: u64) {
        let start = Instant::now();
        while signal.load(Ordering::Acquire) < want {
            assert_eq!(self.progress(), OK);
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "signal stuck at {}",
                signal.load(Ordering::Relaxed)
            );
        }
    }

    /// deregMrSym of each of `windows`, registered on this rank's group.
    fn dereg(&self, windows: &[*mut c_void]) {
        for &w in windows {
            // SAFETY: a window token of this rank's group, deregistered once.
            assert_eq!(unsafe { rma().deregMrSym.unwrap()(self.coll, w) }, OK);
        }
    }

    fn close(self, windows: &[*mut c_void]) {
        self.dereg(windows);
        let t = rma();
        // SAFETY: tokens from this rank's calls, each closed once.
        unsafe {
            assert_eq!(t.destroyContext.unwrap()(self.ctx), OK);
            assert_eq!(t.closeColl.unwrap()(self.coll), OK);
            assert_eq!(t.finalize.unwrap()(self.init), OK);
        }
    }
}

/// The ranks' barrier: std's, except that a rank that panics (a failed assertion, a guard that
/// ran out) fails the ranks waiting at it, and a wait longer than [`BARRIER_LIMIT`] fails too.
/// With std's barrier a rank's failure left the others waiting for it for good: the test hung
/// (its panic message captured with its output, so nothing showed) instead of failing.
struct Barrier {
    n: usize,
    /// Ranks arrived in this generation, and the generation.
    state: Mutex<(usize, u64)>,
    turned: Condvar,
    failed: AtomicBool,
}

/// The longest a rank waits at a barrier for the others (longer than any guarded wait between
/// two barriers).
const BARRIER_LIMIT: Duration = Duration::from_secs(120);

impl Barrier {
    fn new(n: usize) -> Barrier {
        Barrier {
            n,
            state: Mutex::new((0, 0)),
            turned: Condvar::new(),
            failed: AtomicBool::new(false),
        }
    }

    fn wait(&self) {
        let start = Instant::now();
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let generation = st.1;
        st.0 += 1;
        if st.0 == self.n {
            *st = (0, generation + 1);
            self.turned.notify_all();
            return;
        }
        while st.1 == generation {
            assert!(
                !self.failed.load(Ordering::Acquire),
                "another rank failed: this one stops waiting for it at the barrier"
            );
            assert!(
                start.elapsed() < BARRIER_LIMIT,
                "the other ranks never reached the barrier ({} of {} did)",
                st.0,
                self.n
            );
            st = self
                .turned
                .wait_timeout(st, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn fail(&self) {
        self.failed.store(true, Ordering::Release);
        self.turned.notify_all();
    }
}

/// Fails the barriers when the rank's thread unwinds.
struct FailOnPanic<'a>(&'a [&'a Barrier]);

impl Drop for FailOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            for b in self.0 {
                b.fail();
            }
        }
    }
}

/// Runs `body(rank, nranks, Rank)` on `n` threads once their group is connected. A rank that
/// panics fails the others at their next barrier, so the test fails rather than hangs.
fn group(n: usize, body: impl Fn(usize, &Rank, &Barrier) + Sync) {
    group_closing_itself(n, |rank, r, barrier| {
        body(rank, &r, barrier);
        barrier.wait();
        // Nothing is owed: peers that close first leave the others without an error.
        r.close(&[]);
    });
}

/// [`group`], where `body` owns its rank's objects and closes them itself (when it chooses).
fn group_closing_itself(n: usize, body: impl Fn(usize, Rank, &Barrier) + Sync) {
    let handles = Mutex::new(vec![[0u8; 128]; n]);
    let gathered = Barrier::new(n);
    let barrier = Barrier::new(n);
    std::thread::scope(|s| {
        for rank in 0..n {
            let (handles, gathered, barrier, body) = (&handles, &gathered, &barrier, &body);
            s.spawn(move || {
                let both = [gathered, barrier];
                let _fail = FailOnPanic(&both);
                let mut r = Rank::listen();
                handles.lock().unwrap()[rank] = r.handle;
                gathered.wait();
                let all = handles.lock().unwrap().clone();
                r.connect(&all, rank);
                body(rank, r, barrier);
            });
        }
    });
}

/// A rank that fails makes the group's test fail, not hang: the other ranks stop waiting for it
/// at their next barrier (with std's barrier this test itself hung).
#[test]
fn a_failing_rank_fails_its_group_instead_of_hanging() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(|| {
            group(2, |rank, _r, barrier| {
                assert!(rank != 1, "rank 1 fails on purpose");
                barrier.wait();
            })
        });
        let _ = tx.send(r.is_err());
    });
    let failed = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("rank 0 still waits at the barrier for rank 1, which panicked");
    assert!(failed, "the group's panic reached its caller");
}

const CHUNK: usize = 64 << 10;

fn pattern(from: usize, to: usize, round: usize) -> u8 {
    (from * 31 + to * 7 + round * 13) as u8 | 1
}

/// Every rank puts a chunk into every rank (itself too) and raises that rank's signal for it;
/// when a signal is seen, the chunk it covers is there.
fn all_to_all(n: usize, strong: bool) {
    group(n, |rank, r, barrier| {
        let mut data = vec![0u8; n * CHUNK];
        let mut src = vec![0u8; n * CHUNK];
        let signals: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
        let dmh = r.reg(data.as_mut_ptr() as *mut c_void, data.len());
        let smh = r.reg(src.as_mut_ptr() as *mut c_void, src.len());
        let sigmh = r.reg(signals.as_ptr() as *mut c_void, n * 8);
        for round in 1..=3 {
            for to in 0..n {
                src[to * CHUNK..(to + 1) * CHUNK].fill(pattern(rank, to, round));
            }
            barrier.wait();
            let mut reqs = Vec::new();
            for k in 0..n {
                let to = (rank + k) % n;
                let off = (to * CHUNK) as u64;
                let at = (rank * CHUNK) as u64;
                let sig = Some((sigmh, (rank * 8) as u64, strong));
                let (res, q) = r.put_signal((round % 2) as c_int, (smh, off), CHUNK, (dmh, at), to, sig);
                assert_eq!(res, OK);
                assert!(!q.is_null(), "a put's request is never NULL");
                reqs.push(q);
            }
            for (from, s) in signals.iter().enumerate() {
                r.wait_signal(s, round as u64);
                // SAFETY: the signal says rank `from`'s chunk has landed; read it now.
                let got = unsafe { std::slice::from_raw_parts(data.as_ptr().add(from * CHUNK), CHUNK) };
                let want = pattern(from, rank, round);
                assert!(
                    got.iter().all(|&b| b == want),
                    "rank {rank}: chunk from {from} round {round} not there when signalled"
                );
            }
            r.wait_all(reqs);
            barrier.wait();
        }
        barrier.wait();
        let _ = &mut data;
        r.dereg(&[dmh, smh, sigmh]);
    });
}

#[test]
fn puts_with_strong_signals_reach_every_rank_at_2_3_and_4_ranks() {
    for n in [2, 3, 4] {
        all_to_all(n, true);
    }
}

#[test]
fn weak_signals_cover_their_own_put() {
    all_to_all(3, false);
}

/// Many puts, then one strong signal of no bytes: when it is seen, every put before it is there.
#[test]
fn a_strong_signal_follows_every_earlier_put_on_its_context() {
    const PUTS: usize = 48;
    const SIZE: usize = 256 << 10;
    group(2, |rank, r, barrier| {
        let mut window = vec![0u8; PUTS * SIZE];
        let signal = AtomicU64::new(0);
        let wmh = r.reg(window.as_mut_ptr() as *mut c_void, window.len());
        let smh = r.reg(&signal as *const AtomicU64 as *mut c_void, 8);
        for round in 1..=4u64 {
            if rank == 0 {
                window.fill(round as u8);
                let mut reqs = Vec::new();
                for i in 0..PUTS {
                    let off = (i * SIZE) as u64;
                    let (res, q) = r.put_signal(1, (wmh, off), SIZE, (wmh, off), 1, None);
                    assert_eq!(res, OK);
                    reqs.push(q);
                }
                let (res, q) = r.put_signal(1, (NULL, 0), 0, (NULL, 0), 1, Some((smh, 0, true)));
                assert_eq!(res, OK);
                reqs.push(q);
                r.wait_all(reqs);
            } else {
                r.wait_signal(&signal, round);
                // SAFETY: read the window the signal covers.
                let got = unsafe { std::slice::from_raw_parts(window.as_ptr(), window.len()) };
                assert!(
                    got.iter().all(|&b| b == round as u8),
                    "round {round}: a put before the signal is missing"
                );
            }
            barrier.wait();
        }
        r.dereg(&[wmh, smh]);
    });
}

/// Contexts are not ordered with each other (NCCL's contract), and tcpxr gives each its own
/// connection to a peer (context c on lane c mod NCCL_TCPXR_STRIPES, 4 here): a small put with a
/// strong signal on context 1 lands while a 64 MiB put posted before it on context 0 is still
/// arriving, instead of queueing behind it on one stream.
#[test]
fn a_context_is_not_held_behind_another_contexts_large_put() {
    const BIG: usize = 64 << 20;
    group(2, |rank, r, barrier| {
        let mut big = vec![0u8; BIG];
        let mut small = vec![0u8; 4096];
        let signal = AtomicU64::new(0);
        let bmh = r.reg(big.as_mut_ptr() as *mut c_void, BIG);
        let smh = r.reg(small.as_mut_ptr() as *mut c_void, small.len());
        let sig = r.reg(&signal as *const AtomicU64 as *mut c_void, 8);
        if rank == 0 {
            big.fill(0xb1);
            small.fill(0x5a);
            let (res, q_big) = r.put_signal(0, (bmh, 0), BIG, (bmh, 0), 1, None);
            assert_eq!(res, OK);
            let (res, q_small) = r.put_signal(1, (smh, 0), small.len(), (smh, 0), 1, Some((sig, 0, true)));
            assert_eq!(res, OK);
            // One pass: context 0's connection fills its socket, context 1's small put goes out.
            assert_eq!(r.progress(), OK);
            barrier.wait();
            r.wait_all(vec![q_big, q_small]);
        } else {
            barrier.wait();
            r.wait_signal(&signal, 1);
            // SAFETY: the signal covers the small put only; the big one is read racily on
            // purpose (bytes, no references held), to see it has not all landed yet.
            let (small_now, big_tail) = unsafe {
                (
                    std::slice::from_raw_parts(small.as_ptr(), small.len()).to_vec(),
                    std::ptr::read_volatile(big.as_ptr().add(BIG - 1)),
                )
            };
            assert!(
                small_now.iter().all(|&b| b == 0x5a),
                "context 1's put is there with its signal"
            );
            assert_eq!(
                big_tail, 0,
                "context 1's signal waited for all of context 0's 64 MiB: the contexts share one stream"
            );
            let start = Instant::now();
            // SAFETY: as above, a volatile byte read while the put lands.
            while unsafe { std::ptr::read_volatile(big.as_ptr().add(BIG - 1)) } != 0xb1 {
                assert_eq!(r.progress(), OK);
                assert!(start.elapsed() < Duration::from_secs(20), "the big put never landed");
            }
            assert!(big.iter().all(|&b| b == 0xb1), "the big put landed whole");
        }
        barrier.wait();
        r.dereg(&[bmh, smh, sig]);
    });
}

#[test]
fn iget_reads_a_peers_window() {
    let arrived = AtomicUsize::new(0);
    group(3, |rank, r, barrier| {
        let mut window: Vec<u8> = (0..CHUNK).map(|i| (i as u8) ^ (rank as u8 * 40)).collect();
        let mut local = vec![0u8; 3 * CHUNK];
        let wmh = r.reg(window.as_mut_ptr() as *mut c_void, window.len());
        let lmh = r.reg(local.as_mut_ptr() as *mut c_void, local.len());
        barrier.wait();
        let mut reqs = Vec::new();
        for from in 0..3 {
            let (res, req) = r.get((wmh, 0), CHUNK, (lmh, (from * CHUNK) as u64), from);
            assert_eq!(res, OK);
            reqs.push(req);
        }
        r.wait_all(reqs);
        r.settle(&arrived, 3);
        for from in 0..3 {
            let want: Vec<u8> = (0..CHUNK).map(|i| (i as u8) ^ (from as u8 * 40)).collect();
            assert!(
                local[from * CHUNK..(from + 1) * CHUNK] == want[..],
                "rank {rank}: get from {from}"
            );
        }
        barrier.wait();
        r.dereg(&[wmh, lmh]);
    });
}

/// A rank that only tests its own pending request (no rmaProgress) still serves the gets other
/// ranks asked of it: test moves every connection. Rank 0 waits on a get from rank 1, which
/// answers only once rank 2's get from rank 0 is done; before, rank 0's test moved only its
/// connection to rank 1, and rank 2's request was never read.
#[test]
fn testing_a_request_serves_other_ranks_gets() {
    const SIZE: usize = 4 << 20;
    let served = AtomicBool::new(false);
    let arrived = AtomicUsize::new(0);
    group(3, |rank, r, barrier| {
        let mut window: Vec<u8> = (0..SIZE).map(|i| (i as u8) ^ (rank as u8 * 40)).collect();
        let mut local = vec![0u8; SIZE];
        let wmh = r.reg(window.as_mut_ptr() as *mut c_void, window.len());
        let lmh = r.reg(local.as_mut_ptr() as *mut c_void, local.len());
        barrier.wait();
        let get = |from: usize| {
            let (res, req) = r.get((wmh, 0), SIZE, (lmh, 0), from);
            assert_eq!(res, OK);
            req
        };
        let start = Instant::now();
        match rank {
            0 => {
                let req = get(1);
                loop {
                    let (res, done) = r.test(req);
                    assert_eq!(res, OK);
                    if done {
                        break;
                    }
                    assert!(
                        start.elapsed() < Duration::from_secs(20),
                        "rank 0's get never completed"
                    );
                }
            }
            1 => {
                while !served.load(Ordering::Acquire) {
                    assert!(
                        start.elapsed() < Duration::from_secs(20),
                        "rank 2's get from rank 0 never completed while rank 0 tested its own"
                    );
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            _ => {
                let req = get(0);
                r.wait_all(vec![req]);
                served.store(true, Ordering::Release);
            }
        }
        r.settle(&arrived, 3);
        if rank != 1 {
            let from = if rank == 0 { 1u8 } else { 0 };
            assert!(
                (0..SIZE).all(|i| local[i] == (i as u8) ^ (from * 40)),
                "rank {rank}: get from {from}"
            );
        }
        barrier.wait();
        r.dereg(&[wmh, lmh]);
    });
}

/// Each misuse is refused with its code and a WARN naming what was wrong; nothing panics.
#[test]
fn bad_arguments_get_a_warn_and_the_right_code() {
    group(2, |rank, r, barrier| {
        let mut window = vec![0u8; 4096];
        let signals = [AtomicU64::new(0)];
        let wmh = r.reg(window.as_mut_ptr() as *mut c_void, window.len());
        let smh = r.reg(signals.as_ptr() as *mut c_void, 8);
        if rank == 0 {
            let t = rma();
            let bad_arg = ncclResult_t::ncclInvalidArgument;
            let (res, q) = r.put_signal(5, (wmh, 0), 8, (wmh, 0), 1, None);
            assert_eq!((res, q), (bad_arg, NULL));
            expect_log("iput: context 5 is not one of the 4 this rmaCtx has");
            assert_eq!(r.put_signal(0, (wmh, 0), 8, (wmh, 0), 7, None).0, bad_arg);
            expect_log("iput: rank 7 is not in this group of 2 ranks");
            assert_eq!(r.put_signal(0, (wmh, 0), 8, (wmh, 4090), 1, None).0, bad_arg);
            expect_log("8 bytes at offset 4090 do not fit rank 1's window 1 (4096 bytes)");
            assert_eq!(
                r.put_signal(0, (wmh, 0), 8, (wmh, 0), 1, Some((smh, 4, true))).0,
                bad_arg
            );
            expect_log("signal offset 4 is not 8-byte aligned");
            assert_eq!(
                r.put_signal(0, (wmh, 0), 8, (0x1234 as *mut c_void, 0), 1, None).0,
                bad_arg
            );
            expect_log("iput: dstMhandle 0x1234 is not a tcpxr mhandle");
            let mut req = NULL;
            // SAFETY: a bogus signalOp; out-pointers valid.
            let res = unsafe { t.iputSignal.unwrap()(r.ctx, 0, 0, wmh, 8, 0, wmh, 1, 0, smh, 1, 9, true, &mut req) };
            assert_eq!(res, bad_arg);
            expect_log("signalOp 9 is neither");
            // SAFETY: NULL request pointer: refused before anything is written.
            let res = unsafe { t.iput.unwrap()(r.ctx, 0, 0, wmh, 8, 0, wmh, 1, std::ptr::null_mut()) };
            assert_eq!(res, bad_arg);
            expect_log("iput: request is NULL");
            assert_eq!(r.test(0x77 as *mut c_void).0, bad_arg);
            expect_log("test: request 0x77 is not a tcpxr request");
            // SAFETY: a foreign rmaCtx is refused without being read.
            assert_eq!(unsafe { t.rmaProgress.unwrap()(0x4000 as *mut c_void) }, bad_arg);
            expect_log("rmaProgress: rmaCtx 0x4000 is not a tcpxr rmaCtx");
            let mut mh = NULL;
            // SAFETY: "GPU memory" that is not: refused with the reason, nothing read.
            let res = unsafe { t.regMrSym.unwrap()(r.coll, 0x10000 as *mut c_void, 64, NCCL_PTR_CUDA, 0, &mut mh) };
            assert_eq!((res, mh), (ncclResult_t::ncclInvalidArgument, NULL));
            expect_log("registered as NCCL_PTR_CUDA but CUDA does not know it as device memory");
            // The group still works after refusals.
            let (res, q) = r.put_signal(0, (wmh, 0), 8, (wmh, 0), 1, Some((smh, 0, true)));
            assert_eq!(res, OK);
            r.wait_all(vec![q]);
        } else {
            r.wait_signal(&signals[0], 1);
        }
        barrier.wait();
        r.dereg(&[wmh, smh]);
        if rank == 0 {
            // SAFETY: a window deregistered twice is refused.
            let res = unsafe { rma().deregMrSym.unwrap()(r.coll, wmh) };
            assert_eq!(res, ncclResult_t::ncclInvalidArgument);
            expect_log("is deregistered already");
        }
    });
}

/// A peer that closes its group before registering a window it will never register: regMrSym
/// (collective, waiting for every peer's size) fails with ncclRemoteError within seconds instead
/// of waiting for good (it did, logging a WARN every 10 s).
#[test]
fn regmrsym_fails_when_a_peer_closed_before_registering() {
    let mut ranks = [Rank::listen(), Rank::listen()];
    let handles = [ranks[0].handle, ranks[1].handle];
    let [r0, r1] = &mut ranks;
    std::thread::scope(|s| {
        s.spawn(|| r1.connect(&handles, 1));
        r0.connect(&handles, 0);
    });
    let [r0, r1] = ranks;
    r1.close(&[]);
    let (tx, rx) = std::sync::mpsc::channel();
    let coll = r0.coll as usize;
    std::thread::spawn(move || {
        let mut win = vec![0u8; 4096];
        let mut mh = NULL;
        // SAFETY: `win` outlives the call (a failed registration keeps nothing).
        let res = unsafe {
            rma().regMrSym.unwrap()(
                coll as *mut c_void,
                win.as_mut_ptr() as *mut c_void,
                win.len(),
                NCCL_PTR_HOST,
                0,
                &mut mh,
            )
        };
        let _ = tx.send(res);
    });
    let res = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("regMrSym still waiting 10 s after its only peer closed");
    assert_eq!(res, ncclResult_t::ncclRemoteError);
    expect_log("before registering its window");
    // The group's later calls repeat its error. Only this test's lines: a claim of every RMA WARN
    // took another test's line before it could claim it (a CI failure of the killed-peer test).
    nccl_net_tcpxr::testlog::claim_all("before registering its window");
    r0.close(&[]);
}

/// Two connected ranks of one process, each with one window registered: rank 0's is `wins[0]`,
/// rank 1's `wins[1]` (the same length), each rank on its own thread as regMrSym needs.
fn two_ranks_with_windows(wins: &mut [Vec<u8>; 2]) -> (Rank, Rank, *mut c_void, *mut c_void) {
    let mut ranks = [Rank::listen(), Rank::listen()];
    let handles = [ranks[0].handle, ranks[1].handle];
    let [r0, r1] = &mut ranks;
    let [w0, w1] = wins;
    let n = w0.len();
    let (mh0, mh1) = std::thread::scope(|s| {
        let t = s.spawn(|| {
            r1.connect(&handles, 1);
            r1.reg(w1.as_mut_ptr() as *mut c_void, n) as usize
        });
        r0.connect(&handles, 0);
        let mh0 = r0.reg(w0.as_mut_ptr() as *mut c_void, n);
        (mh0, t.join().unwrap() as *mut c_void)
    });
    let [r0, r1] = ranks;
    (r0, r1, mh0, mh1)
}

/// A put that reaches a window its owner has deregistered fails the owner's group with
/// ncclRemoteError and a WARN saying the window was deregistered there (not "never registered"):
/// window numbers are never reused, so the bytes cannot land in a newer window.
#[test]
fn a_put_into_a_window_its_owner_deregistered_fails_the_owner_and_says_so() {
    let mut wins = [vec![1u8; 4096], vec![2u8; 4096]];
    let (r0, r1, mh0, mh1) = two_ranks_with_windows(&mut wins);
    // SAFETY: a window token of r1's group, deregistered once.
    assert_eq!(unsafe { rma().deregMrSym.unwrap()(r1.coll, mh1) }, OK);
    let (r, req) = r0.put_signal(0, (mh0, 0), 64, (mh0, 0), 1, None);
    assert_eq!(r, OK, "the sender knows the window's size from registration");
    r0.wait_all(vec![req]);
    let start = Instant::now();
    loop {
        match r1.progress() {
            OK => assert!(start.elapsed() < Duration::from_secs(10), "the put was never refused"),
            e => {
                assert_eq!(e, ncclResult_t::ncclRemoteError);
                break;
            }
        }
    }
    expect_log("named window 1, which this rank does not have (deregistered here");
    nccl_net_tcpxr::testlog::claim_all("named window 1, which this rank does not have");
    assert_eq!(
        wins[1],
        vec![2u8; 4096],
        "nothing landed in the deregistered window's memory"
    );
    r0.close(&[mh0]);
    r1.close(&[]);
}

/// Rank 0 of a pair whose rank 1 is a child process (`cmd`, one of `child()`'s cases): reads the
/// child's handle, connects, registers `win` (4096 bytes, as the child's window) and waits for the
/// child's READY. The child, its stdout (for what it prints next) and the window's handle.
fn pair_with_child(
    r: &mut Rank,
    mut cmd: std::process::Command,
    win: &mut [u8],
) -> (std::process::Child, BufReader<std::process::ChildStdout>, *mut c_void) {
    let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let theirs = unhex(line.trim().strip_prefix("HANDLE ").expect("child's handle"));
    r.connect(&[r.handle, theirs], 0);
    let mh = r.reg(win.as_mut_ptr() as *mut c_void, win.len());
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "READY");
    (child, out, mh)
}

/// A peer process killed mid-run: the next operation on it ends in ncclRemoteError within
/// seconds, and every later call on the group says so; nothing hangs.
#[test]
fn a_killed_peer_is_a_remote_error_within_seconds() {
    let mut r = Rank::listen();
    let mut win = vec![0u8; 4096];
    let cmd = child_case(CHILD_VAR, &hex(&r.handle));
    let (mut child, _, mh) = pair_with_child(&mut r, cmd, &mut win);
    child.kill().unwrap();
    child.wait().unwrap();
    let start = Instant::now();
    let code = loop {
        let (res, req) = r.get((mh, 0), 64, (mh, 0), 1);
        if res != OK {
            break res;
        }
        let mut res = OK;
        while res == OK {
            let (t, done) = r.test(req);
            res = t;
            if done {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "no error 5 s after the peer died"
            );
        }
        if res != OK {
            break res;
        }
    };
    assert_eq!(code, ncclResult_t::ncclRemoteError);
    assert!(start.elapsed() < Duration::from_secs(5));
    // Either the get met the dead connection (an I/O error on it), or a progress pass had
    // already seen it closed with nothing owed, and the get was refused for that: both name it.
    nccl_net_tcpxr::testlog::expect_any(&["RMA connection to rank 1", "rank 1 has closed its RMA connection"]);
    // Later calls say so too.
    assert_eq!(r.progress(), ncclResult_t::ncclRemoteError);
    let mut has = false;
    // SAFETY: a live context; out-pointer valid.
    assert_eq!(unsafe { rma().queryLastError.unwrap()(r.ctx, &mut has) }, OK);
    assert!(has);
    nccl_net_tcpxr::testlog::claim_all("RMA connection to rank 1");
    nccl_net_tcpxr::testlog::claim_all("rank 1 has closed its RMA connection");
    let _ = &mut win;
    r.close(&[mh]);
}

/// Ranks whose NCCL_TCPXR_STRIPES differ still connect: a pair takes as many connections as its
/// lower rank's listener asks in its handle (4 here, the child's own setting being 2), and every
/// context's operations travel, contexts 2 and 3 on connections the child opened only because
/// the handle asked. The child runs with NCCL_TCPXR_STATS=1: its counters at close count what
/// reached it.
#[test]
fn ranks_with_different_stripes_use_the_lower_ranks_lanes() {
    let mut r = Rank::listen();
    let mut win = vec![9u8; 4096];
    let mut cmd = child_case(LANES_VAR, &hex(&r.handle));
    cmd.env("NCCL_TCPXR_STRIPES", "2")
        .env("NCCL_TCPXR_STATS", "1")
        // Its INFO lines on its stderr (outside NCCL, tcpxr logs warnings only unless asked).
        .env("TCPXR_LOG", "info")
        .env("TCPXR_LOG_FILE", "")
        .stderr(Stdio::piped());
    // With the child opening its own 2 lanes where this listener takes 4, connect would fail.
    let (mut child, mut out, mh) = pair_with_child(&mut r, cmd, &mut win);
    let mut line = String::new();
    // Context 3 (lane 3): all 9s into the child's window.
    let (res, q) = r.put_signal(3, (mh, 0), 4096, (mh, 0), 1, None);
    assert_eq!(res, OK);
    r.wait_all(vec![q]);
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "GOT", "the child saw context 3's put");
    // Context 2 (lane 2): read 64 of those bytes back into a cleared part of this window.
    win[2048..2112].fill(0);
    let (res, q) = r.get((mh, 0), 64, (mh, 2048), 1);
    assert_eq!(res, OK);
    r.wait_all(vec![q]);
    assert!(
        win[2048..2112].iter().all(|&b| b == 9),
        "context 2's get brought the child's bytes"
    );
    // Context 1: byte 1 to 10, which lets the child finish.
    win[100] = 10;
    let (res, q) = r.put_signal(1, (mh, 100), 1, (mh, 1), 1, None);
    assert_eq!(res, OK);
    r.wait_all(vec![q]);
    let mut log = String::new();
    child.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "the child failed: {status}\n{log}");
    // Two puts (4096 + 1 bytes) reached the child; it put nothing and served one get.
    let stats = log
        .lines()
        .find(|l| l.contains("RMA stats"))
        .unwrap_or_else(|| panic!("no stats line in\n{log}"));
    assert!(
        stats.contains(
            "rank 1 of 2: sent 0 puts (0 bytes, 0 with a signal) and 0 gets; received 2 puts (4097 bytes, 0 signals)"
        ),
        "{stats}"
    );
    r.close(&[mh]);
}

#[test]
fn properties_say_gin_proxy_and_host_memory() {
    let t = rma();
    let mut init = NULL;
    // SAFETY: tcpxr's table, called with valid out-pointers.
    assert_eq!(unsafe { t.init.unwrap()(&mut init, 1, None) }, OK);
    // SAFETY: zeroed properties are a valid out-buffer.
    let mut p: ncclNetProperties_v12_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    assert_eq!(unsafe { t.getProperties.unwrap()(0, &mut p) }, OK);
    assert_eq!(p.netDeviceType, NCCL_NET_DEVICE_GIN_PROXY);
    assert_eq!(p.ptrSupport, NCCL_PTR_HOST | NCCL_PTR_CUDA);
    // SAFETY: as above; a device that does not exist is refused.
    let r = unsafe { t.getProperties.unwrap()(99, &mut p) };
    assert_eq!(r, ncclResult_t::ncclInvalidArgument);
    expect_log("RMA device 99 does not exist");
    // SAFETY: finalize once, then again: the second is refused.
    unsafe {
        assert_eq!(t.finalize.unwrap()(init), OK);
        assert_eq!(t.finalize.unwrap()(init), ncclResult_t::ncclInvalidArgument);
    }
    expect_log("closed already");
}

/// NCCL takes the first RMA backend that reports a device: unless the user asks for it, tcpxr
/// reports none, so NCCL 2.30 goes on without RMA where it would (see NCCL_TCPXR_RMA's doc).
#[test]
fn the_rma_table_offers_no_device_unless_asked() {
    for (value, devices) in [("0", "DEVICES 0"), ("1", "DEVICES 1")] {
        let out = child_case(OFF_VAR, "1").env("NCCL_TCPXR_RMA", value).output().unwrap();
        assert!(out.status.success(), "NCCL_TCPXR_RMA={value}: {}", out.status);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(devices), "NCCL_TCPXR_RMA={value}: {stdout}");
    }
}

/// The GPU-window rule refuses where tcpxr's copies could queue behind NCCL's kernel: then the
/// table reports no device (NCCL goes on without tcpxr's RMA) and one WARN says why and what
/// would allow it. Children, so that each reads its own environment at init; the expectation is
/// the rule's verdict on this host's facts (MPS on a GPU machine refuses every case).
#[test]
fn one_hardware_queue_means_no_rma_device_and_a_warn_saying_why() {
    use nccl_net_tcpxr::rma::{gpu_window_rule, Facts};
    for max in ["1", "8", "0"] {
        let facts = Facts {
            max_connections: Some(max.to_owned()),
            ..Facts::read()
        };
        let verdict = gpu_window_rule(&facts);
        let out = child_case(OFF_VAR, "1")
            .env("CUDA_DEVICE_MAX_CONNECTIONS", max)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "CUDA_DEVICE_MAX_CONNECTIONS={max}: {}",
            out.status
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let want = if verdict.is_ok() { "DEVICES 1" } else { "DEVICES 0" };
        assert!(stdout.contains(want), "CUDA_DEVICE_MAX_CONNECTIONS={max}: {stdout}");
        if let Err(why) = verdict {
            let line = expect_log("tcpxr offers no RMA device, so NCCL goes on without tcpxr's RMA");
            assert!(line.contains(&why), "{line}");
            if max == "1" && !why.contains("MPS") {
                assert!(
                    line.contains("CUDA_DEVICE_MAX_CONNECTIONS=1") && line.contains("unset it"),
                    "{line}"
                );
            }
        }
    }
}

// --- GPU windows (need a GPU: cargo test --release -- --include-ignored, TCPXR_REQUIRE_GPU=1) ---

/// Under MPS the table reports no device and the WARN names MPS; `TCPXR_EXPECT_MPS=1` (set by a run
/// with the MPS daemon on) fails the test where the process is not detected as an MPS client.
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_rma_is_refused_under_mps() {
    if gpu::gpu_or_skip("gpu_rma_is_refused_under_mps").is_none() {
        return;
    }
    let facts = nccl_net_tcpxr::rma::Facts::read();
    let expect_mps = std::env::var("TCPXR_EXPECT_MPS").is_ok_and(|v| v.trim() == "1");
    let mps = facts.mps_attribute.unwrap_or(facts.mps_pipe);
    assert!(!expect_mps || mps, "TCPXR_EXPECT_MPS=1 but no MPS detected: {facts:?}");
    let out = child_case(OFF_VAR, "1").output().unwrap();
    assert!(out.status.success(), "{}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if mps {
        assert!(stdout.contains("DEVICES 0"), "under MPS: {stdout}");
        let line = expect_log("tcpxr offers no RMA device");
        assert!(line.contains("CUDA MPS client"), "{line}");
    } else {
        eprintln!(
            "gpu_rma_is_refused_under_mps: not an MPS client here ({facts:?}): checked the table offers a device"
        );
        assert_eq!(
            stdout.contains("DEVICES 1"),
            nccl_net_tcpxr::rma::gpu_window_rule(&facts).is_ok(),
            "{stdout}"
        );
    }
}

/// Sizes of the GPU tests: a word, odd sizes, staging-buffer edges (1 MiB), 8 MiB.
const GPU_SIZES: [usize; 7] = [8, 4096 + 3, 65536, (1 << 20) - 1, (1 << 20) + 17, 3 << 20, 8 << 20];
const GPU_MAX: usize = 8 << 20;

/// Bytes of a put from `from` to `to` in round `round`: every byte different along the run.
fn gpu_pattern(from: usize, to: usize, round: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u32)
                .wrapping_mul(2654435761)
                .wrapping_add((from * 97 + to * 13 + round * 7) as u32) as u8
        })
        .collect()
}

/// The GPU signal words (rank 0..n) as they are now in device memory.
fn read_signals(sig: &gpu::DevBuf, n: usize) -> Vec<u64> {
    sig.download(8 * n)
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Every rank puts from a GPU window into every rank's GPU window (itself too) with a strong
/// signal in a GPU signal window; when the signal, read back from device memory, shows a put,
/// its bytes are there, byte for byte, at every size from 8 B to 8 MiB.
fn gpu_puts(n: usize) {
    let Some(g) = gpu::gpu_or_skip(&format!("gpu_puts({n})")) else {
        return;
    };
    let flags = NCCL_NET_MR_FLAG_FORCE_SO | NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET;
    group(n, |rank, r, barrier| {
        g.bind().unwrap();
        let src = gpu::DevBuf::new(GPU_MAX);
        let dst = gpu::DevBuf::new(n * GPU_MAX);
        let sig = gpu::DevBuf::new(8 * n);
        sig.upload_done(&vec![0u8; 8 * n]);
        let smh = r.reg_as(src.0 as *mut c_void, GPU_MAX, NCCL_PTR_CUDA, 0);
        let dmh = r.reg_as(dst.0 as *mut c_void, n * GPU_MAX, NCCL_PTR_CUDA, 0);
        let sigmh = r.reg_as(sig.0 as *mut c_void, 8 * n, NCCL_PTR_CUDA, flags);
        for (round, &size) in GPU_SIZES.iter().enumerate() {
            let round = round + 1;
            barrier.wait();
            let began = Instant::now();
            for k in 0..n {
                let to = (rank + k) % n;
                // One source buffer: each destination's bytes are uploaded before its put, and
                // the put completes (its bytes are copied out) before the next upload.
                src.upload_done(&gpu_pattern(rank, to, round, size));
                let at = (rank * GPU_MAX) as u64;
                let sigat = Some((sigmh, (rank * 8) as u64, true));
                let (res, q) = r.put_signal((k % 2) as c_int, (smh, 0), size, (dmh, at), to, sigat);
                assert_eq!(res, OK, "rank {rank}: put of {size} B to {to}");
                r.wait_all(vec![q]);
            }
            let start = Instant::now();
            loop {
                assert_eq!(r.progress(), OK);
                let s = read_signals(&sig, n);
                if s.iter().all(|&v| v >= round as u64) {
                    assert!(
                        s.iter().all(|&v| v == round as u64),
                        "rank {rank}: signals {s:?} past round {round}"
                    );
                    break;
                }
                assert!(
                    start.elapsed() < Duration::from_secs(30),
                    "rank {rank}: signals {s:?} stuck in round {round} ({size} B)"
                );
            }
            // Where a slow run's time goes (shown with --nocapture).
            eprintln!(
                "gpu_puts({n}) rank {rank}: {size} B to every rank, signals seen, in {:.1} ms",
                began.elapsed().as_secs_f64() * 1e3
            );
            for from in 0..n {
                let view = gpu::DevBuf(dst.0 + (from * GPU_MAX) as u64);
                let got = view.download_forget(size);
                let want = gpu_pattern(from, rank, round, size);
                if let Some(i) = (0..size).find(|&i| got[i] != want[i]) {
                    panic!(
                        "rank {rank}: {size} B from {from} in round {round}: byte {i} is {} not {}",
                        got[i], want[i]
                    );
                }
            }
            barrier.wait();
        }
        barrier.wait();
        r.dereg(&[smh, dmh, sigmh]);
    });
}

#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_puts_with_strong_signals_land_at_2_ranks() {
    gpu_puts(2);
}

#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_puts_with_strong_signals_land_at_3_ranks() {
    gpu_puts(3);
}

/// iget from every rank's GPU window into a GPU window and into a host window. Each rank keeps
/// progressing until every rank's gets are done ([`Rank::settle`]): without that it hung.
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_iget_reads_a_peers_gpu_window() {
    let Some(g) = gpu::gpu_or_skip("gpu_iget_reads_a_peers_gpu_window") else {
        return;
    };
    const N: usize = 3;
    const SIZE: usize = (3 << 20) + 5;
    let arrived = AtomicUsize::new(0);
    group(N, |rank, r, barrier| {
        g.bind().unwrap();
        let window = gpu::DevBuf::new(SIZE);
        window.upload_done(&gpu_pattern(rank, 99, 1, SIZE));
        let local = gpu::DevBuf::new(N * SIZE);
        let mut host = vec![0u8; N * SIZE];
        let wmh = r.reg_as(window.0 as *mut c_void, SIZE, NCCL_PTR_CUDA, 0);
        let lmh = r.reg_as(local.0 as *mut c_void, N * SIZE, NCCL_PTR_CUDA, 0);
        let hmh = r.reg(host.as_mut_ptr() as *mut c_void, host.len());
        barrier.wait();
        let mut reqs = Vec::new();
        for from in 0..N {
            for into in [lmh, hmh] {
                let (res, req) = r.get((wmh, 0), SIZE, (into, (from * SIZE) as u64), from);
                assert_eq!(res, OK);
                reqs.push(req);
            }
        }
        r.wait_all(reqs);
        r.settle(&arrived, N);
        for from in 0..N {
            let want = gpu_pattern(from, 99, 1, SIZE);
            let got = gpu::DevBuf(local.0 + (from * SIZE) as u64).download_forget(SIZE);
            assert!(got == want, "rank {rank}: get from {from} into GPU memory");
            assert!(
                host[from * SIZE..(from + 1) * SIZE] == want[..],
                "rank {rank}: get from {from} into host memory"
            );
        }
        barrier.wait();
        r.dereg(&[wmh, lmh, hmh]);
    });
}

/// A GPU signal window registered as NCCL 2.30 does (FORCE_SO, without
/// NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET) is served, and a signal the application resets (here to 41,
/// from the host) between two puts takes the next put's add on top of the reset value: each add
/// is applied to the word itself (a host shadow would have written 2). Each signal covers its
/// put's bytes.
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_signal_window_reset_between_puts_takes_the_next_add() {
    let Some(g) = gpu::gpu_or_skip("gpu_signal_window_reset_between_puts_takes_the_next_add") else {
        return;
    };
    const SIZE: usize = (1 << 20) + 17;
    group(2, |rank, r, barrier| {
        g.bind().unwrap();
        let win = gpu::DevBuf::new(SIZE);
        let sig = gpu::DevBuf::new(64);
        sig.upload_done(&[0u8; 64]);
        let wmh = r.reg_as(win.0 as *mut c_void, SIZE, NCCL_PTR_CUDA, 0);
        let smh = r.reg_as(sig.0 as *mut c_void, 64, NCCL_PTR_CUDA, NCCL_NET_MR_FLAG_FORCE_SO);
        for (round, want) in [(1, 1u64), (2, 42)] {
            if rank == 0 {
                win.upload_done(&gpu_pattern(0, 1, round, SIZE));
            }
            barrier.wait();
            if rank == 0 {
                let (res, q) = r.put_signal(0, (wmh, 0), SIZE, (wmh, 0), 1, Some((smh, 8, true)));
                assert_eq!(res, OK);
                r.wait_all(vec![q]);
            } else {
                let start = Instant::now();
                loop {
                    assert_eq!(r.progress(), OK);
                    let s = read_signals(&sig, 8)[1];
                    if s >= want {
                        assert_eq!(s, want, "round {round}: the signal after the reset");
                        break;
                    }
                    assert!(
                        start.elapsed() < Duration::from_secs(20),
                        "round {round}: signal stuck at {s}"
                    );
                }
                assert!(
                    win.download(SIZE) == gpu_pattern(0, 1, round, SIZE),
                    "round {round}: the put's bytes, under the signal"
                );
                // The application resets the signal (NCCL's kernel may): tcpxr must follow.
                let word = gpu::DevBuf(sig.0 + 8);
                word.upload_done(&41u64.to_le_bytes());
                std::mem::forget(word);
            }
            barrier.wait();
        }
        r.dereg(&[wmh, smh]);
    });
}

/// The hazard itself, where the rule allows GPU windows: while an application kernel holds the
/// GPU (spinning, as NCCL's kernel spins on a signal), a put with a strong signal into GPU memory
/// still lands, and its signal is seen, read back by a copy on the GPU's persistent stream (the
/// engine's, which no group uses); the kernel was still spinning when released. With one hardware queue this would hang: there the table
/// offers no device (the tests above).
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_put_lands_while_an_application_kernel_spins() {
    put_lands_beside_a_spinning_kernel("gpu_put_lands_while_an_application_kernel_spins", spin::Spin::start);
}

/// The same beside a kernel that fills every thread slot of every multiprocessor while it spins,
/// as a persistent device-API kernel waiting on its signals may: the signal must reach the window
/// without a multiprocessor. It does for a never-reset signal window (a stream write); with a
/// kernel doing the add (tcpxr before 2026-11-27) the signal waited for the spinning kernel to
/// give up.
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_signal_lands_while_an_application_kernel_holds_every_sm() {
    put_lands_beside_a_spinning_kernel(
        "gpu_signal_lands_while_an_application_kernel_holds_every_sm",
        spin::Spin::start_filling_every_sm,
    );
}

fn put_lands_beside_a_spinning_kernel(name: &str, start: fn(Duration) -> spin::Spin) {
    let Some(g) = gpu::gpu_or_skip(name) else {
        return;
    };
    const SIZE: usize = (1 << 20) + 17;
    let flags = NCCL_NET_MR_FLAG_FORCE_SO | NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET;
    group(2, |rank, r, barrier| {
        g.bind().unwrap();
        let win = gpu::DevBuf::new(SIZE);
        let sig = gpu::DevBuf::new(8);
        sig.upload_done(&[0u8; 8]);
        win.upload_done(&gpu_pattern(rank, 1, 1, SIZE));
        let wmh = r.reg_as(win.0 as *mut c_void, SIZE, NCCL_PTR_CUDA, 0);
        let smh = r.reg_as(sig.0 as *mut c_void, 8, NCCL_PTR_CUDA, flags);
        let mut spin = (rank == 1).then(|| start(Duration::from_secs(30)));
        barrier.wait();
        if rank == 0 {
            let (res, q) = r.put_signal(0, (wmh, 0), SIZE, (wmh, 0), 1, Some((smh, 0, true)));
            assert_eq!(res, OK);
            r.wait_all(vec![q]);
        } else {
            let out = nccl_net_tcpxr::gpu::Mapped::new(&g, 8).unwrap();
            let event = nccl_net_tcpxr::gpu::Event::new(&g).unwrap();
            let start = Instant::now();
            loop {
                assert_eq!(r.progress(), OK);
                // SAFETY: 8 bytes of the live signal buffer into 8 bytes of mapped memory, waited
                // for (the event) before they are read or reused.
                unsafe { nccl_net_tcpxr::gpu::copy_dtoh_async(&g, g.as_ref(), out.host, sig.0, 8) }.unwrap();
                event.record_on(&g, g.as_ref()).unwrap();
                while !event.done().unwrap() {
                    assert_eq!(r.progress(), OK);
                    assert!(
                        start.elapsed() < Duration::from_secs(20),
                        "the reading copy waits behind the spinning kernel"
                    );
                }
                // SAFETY: the copy into `out` has completed (its event).
                if unsafe { std::ptr::read_volatile(out.host as *const u64) } == 1 {
                    break;
                }
                assert!(start.elapsed() < Duration::from_secs(20), "signal never set");
            }
            assert!(
                spin.as_mut().unwrap().release(),
                "the application kernel had given up before the put landed"
            );
            let got = win.download(SIZE);
            assert!(got == gpu_pattern(0, 1, 1, SIZE), "the put's bytes, under the signal");
        }
        drop(spin);
        barrier.wait();
        r.dereg(&[wmh, smh]);
    });
}

/// Each group queues its GPU work on a stream of its own. With rank 1's group's stream held
/// (`hold_group_stream`: its signal kernel waits behind an application kernel that fills every
/// multiprocessor), rank 0, another group of the same process on the same GPU, puts 1 MiB + 17
/// from host memory into its GPU window with a strong signal into its never-reset signal window (a
/// stream write, no multiprocessor): the put completes and its bytes and signal land while rank
/// 1's stream is still held (rank 1's signal has not landed). An application kernel waiting for rank
/// 0's signal is the shape of a hang: until 2026-11-29 every group queued on the GPU's one
/// persistent stream, so rank 0's copy and signal waited behind rank 1's kernel, which waited for
/// that application kernel to end (this test against that library: "requests never completed",
/// run 388). Nothing is allocated or freed while the hold lasts: a first form of this test made and
/// freed its reader's pinned buffer then, and the application kernel did not see its release
/// (runs 383-386): `cuMemFreeHost` waits until every running kernel has ended (run 400).
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_a_groups_held_stream_holds_no_other_groups_puts() {
    let Some(g) = gpu::gpu_or_skip("gpu_a_groups_held_stream_holds_no_other_groups_puts") else {
        return;
    };
    const SIZE: usize = (1 << 20) + 17;
    let never_reset = NCCL_NET_MR_FLAG_FORCE_SO | NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET;
    group(2, |rank, r, barrier| {
        g.bind().unwrap();
        let win = gpu::DevBuf::new(SIZE);
        win.upload_done(&vec![0u8; SIZE]);
        // Pinned, so the copy is queued (from pageable memory CUDA would copy before returning).
        let src = nccl_net_tcpxr::gpu::Mapped::new(&g, SIZE).unwrap();
        let pattern = gpu_pattern(rank, rank, 1, SIZE);
        // SAFETY: SIZE bytes of pinned memory this test owns; nothing reads them yet.
        unsafe { std::slice::from_raw_parts_mut(src.host, SIZE) }.copy_from_slice(&pattern);
        let sig = gpu::DevBuf::new(8);
        sig.upload_done(&[0u8; 8]);
        let held = gpu::DevBuf::new(8);
        held.upload_done(&[0u8; 8]);
        // Made before the hold: what reads the words back while it lasts.
        let reader = WordReader::new(&g);
        let wmh = r.reg_as(win.0 as *mut c_void, SIZE, NCCL_PTR_CUDA, 0);
        let hmh = r.reg(src.host as *mut c_void, SIZE);
        let smh = r.reg_as(sig.0 as *mut c_void, 8, NCCL_PTR_CUDA, never_reset);
        let kmh = r.reg_as(held.0 as *mut c_void, 8, NCCL_PTR_CUDA, NCCL_NET_MR_FLAG_FORCE_SO);
        let mut spin = (rank == 1).then(|| hold_group_stream(r, 1, kmh));
        barrier.wait();
        if rank == 0 {
            let (res, q) = r.put_signal(0, (hmh, 0), SIZE, (wmh, 0), 0, Some((smh, 0, true)));
            assert_eq!(res, OK);
            // Fails after 20 s ("requests never completed") where the put waits behind rank 1.
            r.wait_all(vec![q]);
            // Done is local completion (the copy out of `src`); the signal follows the copy on the
            // group's stream, so it shows a moment later (run 426 read it once, too soon).
            let start = Instant::now();
            while reader.word(&g, sig.0) != 1 {
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "rank 0's signal never landed while rank 1's stream was held"
                );
            }
            assert_eq!(
                reader.word(&g, held.0),
                0,
                "rank 1's signal landed: its stream was not held while rank 0's put ran"
            );
        }
        // Rank 1's kernel still held: released only once rank 0's put is in.
        barrier.wait();
        if let Some(s) = spin.as_mut() {
            assert!(s.release(), "the application kernel gave up before rank 0's put was in");
        }
        drop(spin);
        if rank == 0 {
            assert!(win.download(SIZE) == pattern, "the put's bytes, under its signal");
        }
        barrier.wait();
        r.dereg(&[wmh, hmh, smh, kmh]);
    });
}

/// Reads 64-bit words of device memory by a copy on the GPU's persistent stream, which no group
/// uses: a plain download would wait for an application kernel that holds the GPU.
struct WordReader {
    out: nccl_net_tcpxr::gpu::Mapped,
    event: nccl_net_tcpxr::gpu::Event,
}

impl WordReader {
    fn new(g: &nccl_net_tcpxr::gpu::Gpu) -> WordReader {
        WordReader {
            out: nccl_net_tcpxr::gpu::Mapped::new(g, 8).unwrap(),
            event: nccl_net_tcpxr::gpu::Event::new(g).unwrap(),
        }
    }

    fn word(&self, g: &nccl_net_tcpxr::gpu::Gpu, at: u64) -> u64 {
        // SAFETY: 8 bytes of live device memory into the 8 mapped bytes, waited for (the event)
        // before they are read.
        unsafe { nccl_net_tcpxr::gpu::copy_dtoh_async(g, g, self.out.host, at, 8) }.unwrap();
        self.event.record_on(g, g).unwrap();
        assert!(
            self.event.done_by(Instant::now() + Duration::from_secs(20)).unwrap(),
            "the reading copy waits behind the spinning kernel"
        );
        // SAFETY: the copy into `out` has completed (its event).
        unsafe { std::ptr::read_volatile(self.out.host as *const u64) }
    }
}

/// Holds the stream of `r`'s group on GPU 0 (each group has its own) until the returned kernel is
/// released: an application kernel fills every multiprocessor, then `r` (rank `me`) puts 0 bytes
/// to itself with a signal into `sig`, a GPU window registered without
/// NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET, which tcpxr adds with a one-thread kernel on the group's
/// stream. That kernel cannot start before the application's ends, and everything the group
/// queues after it waits behind it.
fn hold_group_stream(r: &Rank, me: usize, sig: *mut c_void) -> spin::Spin {
    let spin = spin::Spin::start_filling_every_sm(Duration::from_secs(30));
    let (res, q) = r.put_signal(0, (sig, 0), 0, (sig, 0), me, Some((sig, 0, true)));
    assert_eq!(res, OK);
    // A put of no bytes is done at once; its signal waits on the stream.
    r.wait_all(vec![q]);
    spin
}

/// While the group's stream is held (`hold_group_stream`), `rounds` progress passes 50 ms apart in
/// which nothing queued behind the hold shows: `unchanged` holds (the bytes a put would write), the
/// host signal at `host_signal` is still 0, and request `req` is not done.
fn nothing_shows_while_held(
    r: &Rank,
    rounds: usize,
    host_signal: &AtomicU64,
    req: *mut c_void,
    unchanged: impl Fn() -> bool,
    (applied, done_early): (&str, &str),
) {
    for _ in 0..rounds {
        assert_eq!(r.progress(), OK);
        assert!(unchanged(), "{applied}");
        assert_eq!(
            host_signal.load(Ordering::Acquire),
            0,
            "a signal before its put's bytes"
        );
        assert_eq!(r.test(req), (OK, false), "{done_early}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Releases the hold, waits for the GPU window `sig` to read 2 (the hold's signal, then the last
/// put's), and checks that the host signal posted before that last put (1) had shown by then.
fn release_then_the_gpu_signal_follows_the_host_signal(
    mut spin: spin::Spin,
    sig: &gpu::DevBuf,
    host_signal: &AtomicU64,
) {
    assert!(spin.release(), "the application kernel gave up early");
    // The hold's signal (1), then the last put's (2).
    let start = Instant::now();
    while read_signals(sig, 1)[0] < 2 {
        assert!(start.elapsed() < DEADLINE, "the GPU signals never came");
    }
    assert_eq!(
        host_signal.load(Ordering::Acquire),
        1,
        "a strong GPU signal showed before the host signal posted before it"
    );
}

/// A rank's operations on itself apply in the order posted while earlier ones wait on its group's
/// stream: with the stream held, a put from GPU memory into a host window, then a host-to-host put
/// over the same bytes with a strong host signal, then a put of no bytes with a strong GPU signal.
/// While held, neither the second put's bytes nor its signal show (both ranges are pinned, so the
/// first copy is truly queued). Once released, and without the rank calling tcpxr again (nothing
/// waits for a poll), the GPU signal shows only after the host signal, and the bytes are the
/// second put's. Until 2026-11-28 the host-to-host copy was done at once, so the first put's
/// bytes landed over it later, and a host signal after pending stream work waited for the rank's
/// next poll while the GPU signal after it went ahead.
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_a_ranks_operations_on_itself_apply_in_the_order_posted() {
    let Some(g) = gpu::gpu_or_skip("gpu_a_ranks_operations_on_itself_apply_in_the_order_posted") else {
        return;
    };
    const N: usize = 1 << 20;
    group(2, |rank, r, barrier| {
        g.bind().unwrap();
        let dev = gpu::DevBuf::new(N);
        dev.upload_done(&gpu_pattern(rank, rank, 1, N));
        // Pinned: a copy from GPU memory into pageable memory returns only once it has run.
        let host = nccl_net_tcpxr::gpu::Mapped::new(&g, 2 * N + 8).unwrap();
        let second = gpu_pattern(rank, rank, 2, N);
        // SAFETY: 2N + 8 bytes of pinned memory this test owns; nothing else touches them yet.
        let bytes = unsafe { std::slice::from_raw_parts_mut(host.host, 2 * N + 8) };
        bytes[..N].fill(0xB0);
        bytes[N..2 * N].copy_from_slice(&second);
        bytes[2 * N..].fill(0);
        let sig = gpu::DevBuf::new(8);
        sig.upload_done(&[0u8; 8]);
        let dmh = r.reg_as(dev.0 as *mut c_void, N, NCCL_PTR_CUDA, 0);
        let hmh = r.reg(host.host as *mut c_void, 2 * N + 8);
        let smh = r.reg_as(sig.0 as *mut c_void, 8, NCCL_PTR_CUDA, NCCL_NET_MR_FLAG_FORCE_SO);
        barrier.wait();
        if rank == 0 {
            // SAFETY: the 8-aligned word after the two ranges, which tcpxr adds to atomically.
            let host_signal = unsafe { &*(host.host.add(2 * N) as *const AtomicU64) };
            // SAFETY: the first N bytes of the pinned window; read while tcpxr may write them.
            let target = || unsafe { std::slice::from_raw_parts(host.host as *const u8, N) }.to_vec();
            let spin = hold_group_stream(r, 0, smh);
            let (res, first) = r.put_signal(0, (dmh, 0), N, (hmh, 0), 0, None);
            assert_eq!(res, OK);
            let (res, then) = r.put_signal(0, (hmh, N as u64), N, (hmh, 0), 0, Some((hmh, 2 * N as u64, true)));
            assert_eq!(res, OK);
            let (res, last) = r.put_signal(0, (smh, 0), 0, (smh, 0), 0, Some((smh, 0, true)));
            assert_eq!(res, OK);
            nothing_shows_while_held(
                r,
                10,
                host_signal,
                then,
                || target().iter().all(|&b| b == 0xB0),
                (
                    "a put applied while the put before it waits on the stream",
                    "done before the put before it",
                ),
            );
            release_then_the_gpu_signal_follows_the_host_signal(spin, &sig, host_signal);
            assert!(target() == second, "the bytes are not the last put's");
            r.wait_all(vec![first, then, last]);
            assert!(target() == second, "the bytes are not the last put's");
        }
        barrier.wait();
        r.dereg(&[dmh, hmh, smh]);
    });
}

/// A rank's large host-to-host put to itself behind pending stream work is copied in pieces
/// (stage.rs's HOST_PIECE, 2 MiB, one host function each) that apply in order and as one
/// memmove would: with the group's stream held, a put of 7 MiB + 3 within one host window, moved 3
/// bytes up (overlapping, so the pieces must go back to front), with a strong host signal, then a
/// put of no bytes with a strong GPU signal. While held, neither the bytes nor the signal show.
/// Once released, the GPU signal shows only after the host signal (which follows every piece),
/// and the window holds what one overlapping copy gives. It passes with one host function too
/// (as until 2026-11-28): it guards the cut, whose bounded pieces the CPU test in stage.rs shows.
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_a_ranks_large_host_copy_within_itself_applies_in_pieces_as_one_copy() {
    let Some(g) = gpu::gpu_or_skip("gpu_a_ranks_large_host_copy_within_itself_applies_in_pieces_as_one_copy") else {
        return;
    };
    const N: usize = (7 << 20) + 3;
    const SHIFT: usize = 3;
    // The bytes, then the 8-aligned host signal.
    const SIG: usize = (N + SHIFT).next_multiple_of(8);
    group(2, |rank, r, barrier| {
        g.bind().unwrap();
        let mut words = vec![0u64; SIG / 8 + 1];
        let host = words.as_mut_ptr() as *mut u8;
        let before: Vec<u8> = (0..SIG)
            .map(|i| (i % 251) as u8 ^ (i >> 20) as u8 ^ rank as u8)
            .collect();
        // SAFETY: the first SIG bytes of `words`, which no one else touches yet.
        unsafe { std::slice::from_raw_parts_mut(host, SIG) }.copy_from_slice(&before);
        let mut want = before.clone();
        want.copy_within(0..N, SHIFT);
        let sig = gpu::DevBuf::new(8);
        sig.upload_done(&[0u8; 8]);
        let hmh = r.reg(host as *mut c_void, SIG + 8);
        let smh = r.reg_as(sig.0 as *mut c_void, 8, NCCL_PTR_CUDA, NCCL_NET_MR_FLAG_FORCE_SO);
        barrier.wait();
        if rank == 0 {
            // SAFETY: the 8-aligned word after the bytes, which tcpxr adds to atomically.
            let host_signal = unsafe { &*(host.add(SIG) as *const AtomicU64) };
            // SAFETY: the window's bytes; read while tcpxr may write them.
            let bytes = || unsafe { std::slice::from_raw_parts(host as *const u8, SIG) }.to_vec();
            let spin = hold_group_stream(r, 0, smh);
            let (res, copy) = r.put_signal(0, (hmh, 0), N, (hmh, SHIFT as u64), 0, Some((hmh, SIG as u64, true)));
            assert_eq!(res, OK);
            let (res, last) = r.put_signal(0, (smh, 0), 0, (smh, 0), 0, Some((smh, 0, true)));
            assert_eq!(res, OK);
            nothing_shows_while_held(
                r,
                5,
                host_signal,
                copy,
                || bytes() == before,
                (
                    "the copy applied while the stream was held",
                    "done while the stream was held",
                ),
            );
            release_then_the_gpu_signal_follows_the_host_signal(spin, &sig, host_signal);
            assert!(bytes() == want, "the pieces did not copy as one overlapping copy");
            r.wait_all(vec![copy, last]);
        }
        barrier.wait();
        r.dereg(&[hmh, smh]);
        drop(words);
    });
}

/// A group closed while copies out of its GPU window into its pinned staging (a put's, to a peer)
/// are still queued on its stream keeps the staging until they have run, bounded: here they wait
/// behind a kernel held 8 s, and the close returns after about 5 s with a WARN (the staging stays
/// allocated), before the kernel is released. Until 2026-11-28 the close waited only for the
/// group's `inflight` stream work, which a send's copies are not part of (its peer holds them):
/// with none there it freed the staging at once, under the queued copies (or, where the driver's
/// free waits for the device, waited for the kernel without bound). Until 2026-11-29 rank 1 held
/// the one stream every group shared, so rank 0's group had nothing of its own in `inflight`;
/// since each group has its own stream, rank 0 holds its own with a signal, which is in
/// `inflight` too.
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_closing_a_group_keeps_staging_its_queued_copies_write() {
    let Some(g) = gpu::gpu_or_skip("gpu_closing_a_group_keeps_staging_its_queued_copies_write") else {
        return;
    };
    const SIZE: usize = 4 << 20;
    // The close must return well before this (the hold itself lasts until released, at most 30 s).
    const BOUND: Duration = Duration::from_secs(8);
    group_closing_itself(2, |rank, r, barrier| {
        g.bind().unwrap();
        let win = gpu::DevBuf::new(SIZE);
        let sig = gpu::DevBuf::new(8);
        sig.upload_done(&[0u8; 8]);
        let wmh = r.reg_as(win.0 as *mut c_void, SIZE, NCCL_PTR_CUDA, 0);
        let smh = r.reg_as(sig.0 as *mut c_void, 8, NCCL_PTR_CUDA, NCCL_NET_MR_FLAG_FORCE_SO);
        // Rank 0 holds its group's stream: the put's copies out of `win` queue behind its signal.
        let mut spin = (rank == 0).then(|| hold_group_stream(&r, 0, smh));
        barrier.wait();
        if rank == 0 {
            let (res, _put) = r.put_signal(0, (wmh, 0), SIZE, (wmh, 0), 1, None);
            assert_eq!(res, OK);
            // Closed as on an abort: the put pending, the windows registered.
            let start = Instant::now();
            r.close(&[]);
            let took = start.elapsed();
            assert!(
                took >= Duration::from_secs(4) && took < BOUND - Duration::from_secs(1),
                "closeColl took {took:?}: it must wait for the queued copies (5 s at most) and return while they still wait"
            );
            expect_log("closing a group whose GPU copies have not completed");
            // Released only now: the copies out of `win` run after it (the window stays allocated).
            assert!(spin.as_mut().unwrap().release(), "the application kernel gave up early");
            drop(spin);
            barrier.wait();
        } else {
            barrier.wait();
            r.close(&[wmh, smh]);
        }
    });
}

/// deregMrSym after the group's error waits (bounded) for the copies already queued on its
/// stream into the window. With the stream held, a peer's put into a GPU window lands in staging
/// and its copies queue; the peer's next put names a window this rank deregistered (the group's
/// error); deregMrSym of the GPU window then returns only once the stream is released, the put's
/// bytes in place. Until 2026-11-28 it returned at once after an error, and the queued copies
/// wrote the window after its owner could have freed it.
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_deregistering_after_an_error_waits_for_copies_queued_into_the_window() {
    let Some(g) = gpu::gpu_or_skip("gpu_deregistering_after_an_error_waits_for_copies_queued_into_the_window") else {
        return;
    };
    // Small enough to land in the staging buffers while the stream is held (they return only
    // once their copies have run).
    const N: usize = (128 << 10) + 5;
    const HELD: Duration = Duration::from_secs(1);
    group(2, |rank, r, barrier| {
        g.bind().unwrap();
        // Window 1: rank 0's bytes in host memory, rank 1's destination in GPU memory; window 2:
        // host memory, which rank 1 deregisters first; window 3: a GPU signal to hold the stream.
        let mut src = gpu_pattern(0, 1, 1, N);
        let dev = gpu::DevBuf::new(N);
        dev.upload_done(&vec![0u8; N]);
        let mut other = vec![0u8; 4096];
        let sig = gpu::DevBuf::new(8);
        sig.upload_done(&[0u8; 8]);
        let w1 = if rank == 0 {
            r.reg(src.as_mut_ptr() as *mut c_void, N)
        } else {
            r.reg_as(dev.0 as *mut c_void, N, NCCL_PTR_CUDA, 0)
        };
        let w2 = r.reg(other.as_mut_ptr() as *mut c_void, other.len());
        let w3 = r.reg_as(sig.0 as *mut c_void, 8, NCCL_PTR_CUDA, NCCL_NET_MR_FLAG_FORCE_SO);
        let mut spin = None;
        if rank == 1 {
            r.dereg(&[w2]);
            spin = Some(hold_group_stream(r, 1, w3));
        }
        barrier.wait();
        if rank == 0 {
            let (res, put) = r.put_signal(0, (w1, 0), N, (w1, 0), 1, None);
            assert_eq!(res, OK);
            let (res, bad) = r.put_signal(0, (w2, 0), 64, (w2, 0), 1, None);
            assert_eq!(res, OK);
            r.wait_all(vec![put, bad]);
        } else {
            let start = Instant::now();
            loop {
                match r.progress() {
                    OK => assert!(start.elapsed() < DEADLINE, "the put into window 2 was never refused"),
                    e => {
                        assert_eq!(e, ncclResult_t::ncclRemoteError);
                        break;
                    }
                }
            }
            expect_log("named window 2, which this rank does not have (deregistered here");
            nccl_net_tcpxr::testlog::claim_all("named window 2, which this rank does not have");
            let released = AtomicBool::new(false);
            let (coll, w1) = (r.coll as usize, w1 as usize);
            std::thread::scope(|s| {
                let dereg = s.spawn(|| {
                    // SAFETY: window 1's token of rank 1's group, deregistered once.
                    let res = unsafe { rma().deregMrSym.unwrap()(coll as *mut c_void, w1 as *mut c_void) };
                    (res, released.load(Ordering::Acquire))
                });
                std::thread::sleep(HELD);
                released.store(true, Ordering::Release);
                assert!(spin.as_mut().unwrap().release(), "the application kernel gave up early");
                let (res, after_release) = dereg.join().unwrap();
                assert_eq!(res, OK);
                assert!(
                    after_release,
                    "deregMrSym returned while copies into the window were still queued"
                );
            });
            assert!(
                dev.download(N) == src,
                "the put's bytes, landed before deregMrSym returned"
            );
        }
        barrier.wait();
        drop(spin);
        if rank == 0 {
            r.dereg(&[w1, w2, w3]);
        } else {
            r.dereg(&[w3]);
        }
    });
}

/// deregMrSym of a window that a peer's put is landing in, part-way through its payload, returns
/// only once the put has landed: no byte reaches the memory after it returns (its owner may free
/// or reuse it then).
#[test]
fn deregistering_a_window_mid_put_waits_for_the_put_and_nothing_lands_after() {
    const N: usize = 64 << 20;
    let mut wins = [vec![1u8; N], vec![2u8; N]];
    let (r0, r1, mh0, mh1) = two_ranks_with_windows(&mut wins);
    let p = wins[1].as_mut_ptr();
    let landed = || {
        (0..N)
            // SAFETY: rank 1's window (N bytes at p), written only by rank 1's progress, which
            // runs on this thread.
            .filter(|&i| unsafe { std::ptr::read_volatile(p.add(i)) } == 1)
            .count()
    };
    let (r, req) = r0.put_signal(0, (mh0, 0), N, (mh0, 0), 1, None);
    assert_eq!(r, OK);
    let req = req as usize;
    let r0 = std::thread::scope(|s| {
        // Rank 0 keeps sending while rank 1 lets the put start landing, then deregisters.
        let sender = s.spawn(move || {
            r0.wait_all(vec![req as *mut c_void]);
            r0
        });
        let start = Instant::now();
        while landed() == 0 {
            assert_eq!(r1.progress(), OK);
            assert!(start.elapsed() < DEADLINE, "the put never started landing");
        }
        // SAFETY: a window token of rank 1's group, deregistered once.
        assert_eq!(unsafe { rma().deregMrSym.unwrap()(r1.coll, mh1) }, OK);
        assert_eq!(landed(), N, "deregMrSym returned before the put had landed");
        sender.join().unwrap()
    });
    // The owner reuses the memory; nothing of the put comes after.
    (0..N).for_each(|i| {
        // SAFETY: rank 1's former window (N bytes at p), no longer registered.
        unsafe { std::ptr::write_volatile(p.add(i), 0xEE) }
    });
    for _ in 0..100 {
        assert_eq!(r1.progress(), OK);
    }
    assert_eq!(landed(), 0);
    assert!(wins[1].iter().all(|&b| b == 0xEE), "bytes landed after deregMrSym");
    r0.close(&[mh0]);
    r1.close(&[]);
}

/// A put that the peer's kernel discards unread (the peer closes with the bytes in its socket,
/// which resets the connection) is an error on the rank that put it, though its test said done:
/// the data and the signal never arrived, and nothing else would say so.
#[test]
fn a_put_the_peer_discards_unread_is_an_error_for_the_putting_rank() {
    let mut wins = [vec![1u8; 65536], vec![2u8; 65536]];
    let (r0, r1, mh0, mh1) = two_ranks_with_windows(&mut wins);
    let (r, req) = r0.put_signal(0, (mh0, 0), 65536, (mh0, 0), 1, Some((mh0, 0, true)));
    assert_eq!(r, OK);
    r0.wait_all(vec![req]);
    r1.close(&[mh1]);
    let start = Instant::now();
    let mut got = OK;
    while got == OK && start.elapsed() < Duration::from_secs(5) {
        got = r0.progress();
    }
    assert_eq!(got, ncclResult_t::ncclRemoteError);
    expect_log("RMA connection to rank 1");
    assert_eq!(wins[1][0], 2, "the put never landed");
}
