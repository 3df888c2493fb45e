//! The RMA table (`ncclRmaPlugin_v14`) driven as NCCL's GIN and RMA proxies drive it: ranks on
//! threads (or a child process) over loopback, each calling init, listen, connect with every
//! rank's handle, createContext, regMrSym in the same order, then puts, signals and gets, polling
//! test and rmaProgress. Checks data, the ordering of strong signals, weak signals, gets, a
//! killed peer (ncclRemoteError within seconds) and bad arguments (a WARN and the right code).
mod common;
use common::*;
use nccl_net_tcpxr::abi::*;
use std::ffi::{c_int, c_void};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

const CHILD_VAR: &str = "TCPXR_RMA_CHILD";
/// A child that reports how many RMA devices tcpxr offers under its environment.
const OFF_VAR: &str = "TCPXR_RMA_DEVICES_CHILD";

// Before main: RMA on; in the child, play rank 1 of the killed-peer test; in the test process,
// nothing more.
#[used]
#[link_section = ".init_array"]
static CHILD: extern "C" fn() = child;
extern "C" fn child() {
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
            nContexts: 2,
            trafficClass: 0,
            rankStride: 1,
        };
        // SAFETY: as above.
        let r = unsafe { t.createContext.unwrap()(self.coll, &mut cfg, &mut self.ctx) };
        assert_eq!(r, OK);
    }

    fn reg(&self, data: *mut c_void, size: usize) -> *mut c_void {
        let mut mh = NULL;
        // SAFETY: `data` is `size` bytes the caller keeps alive while registered.
        let r = unsafe { rma().regMrSym.unwrap()(self.coll, data, size, NCCL_PTR_HOST, 0, &mut mh) };
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

    fn close(self, windows: &[*mut c_void]) {
        let t = rma();
        // SAFETY: tokens from this rank's calls, each closed once.
        unsafe {
            for &w in windows {
                assert_eq!(t.deregMrSym.unwrap()(self.coll, w), OK);
            }
            assert_eq!(t.destroyContext.unwrap()(self.ctx), OK);
            assert_eq!(t.closeColl.unwrap()(self.coll), OK);
            assert_eq!(t.finalize.unwrap()(self.init), OK);
        }
    }
}

/// Runs `body(rank, nranks, Rank)` on `n` threads once their group is connected.
fn group(n: usize, body: impl Fn(usize, &Rank, &Barrier) + Sync) {
    let handles = Mutex::new(vec![[0u8; 128]; n]);
    let gathered = Barrier::new(n);
    let barrier = Barrier::new(n);
    std::thread::scope(|s| {
        for rank in 0..n {
            let (handles, gathered, barrier, body) = (&handles, &gathered, &barrier, &body);
            s.spawn(move || {
                let mut r = Rank::listen();
                handles.lock().unwrap()[rank] = r.handle;
                gathered.wait();
                let all = handles.lock().unwrap().clone();
                r.connect(&all, rank);
                body(rank, &r, barrier);
                barrier.wait();
                // Nothing is owed: peers that close first leave the others without an error.
                r.close(&[]);
            });
        }
    });
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
        for w in [dmh, smh, sigmh] {
            // SAFETY: registered above on this rank's group.
            assert_eq!(unsafe { rma().deregMrSym.unwrap()(r.coll, w) }, OK);
        }
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
        for w in [wmh, smh] {
            // SAFETY: registered above.
            assert_eq!(unsafe { rma().deregMrSym.unwrap()(r.coll, w) }, OK);
        }
    });
}

#[test]
fn iget_reads_a_peers_window() {
    group(3, |rank, r, barrier| {
        let mut window: Vec<u8> = (0..CHUNK).map(|i| (i as u8) ^ (rank as u8 * 40)).collect();
        let mut local = vec![0u8; 3 * CHUNK];
        let wmh = r.reg(window.as_mut_ptr() as *mut c_void, window.len());
        let lmh = r.reg(local.as_mut_ptr() as *mut c_void, local.len());
        barrier.wait();
        let mut reqs = Vec::new();
        for from in 0..3 {
            let mut req = NULL;
            // SAFETY: handles from regMrSym; out-pointer valid.
            let res = unsafe {
                rma().iget.unwrap()(
                    r.ctx,
                    0,
                    0,
                    wmh,
                    CHUNK,
                    (from * CHUNK) as u64,
                    lmh,
                    from as u32,
                    &mut req,
                )
            };
            assert_eq!(res, OK);
            reqs.push(req);
        }
        r.wait_all(reqs);
        for from in 0..3 {
            let want: Vec<u8> = (0..CHUNK).map(|i| (i as u8) ^ (from as u8 * 40)).collect();
            assert!(
                local[from * CHUNK..(from + 1) * CHUNK] == want[..],
                "rank {rank}: get from {from}"
            );
        }
        barrier.wait();
        for w in [wmh, lmh] {
            // SAFETY: registered above.
            assert_eq!(unsafe { rma().deregMrSym.unwrap()(r.coll, w) }, OK);
        }
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
            expect_log("iput: context 5 is not one of the 2 this rmaCtx has");
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
            // SAFETY: a GPU window on a host without one: refused with the reason.
            let res = unsafe { t.regMrSym.unwrap()(r.coll, 0x10000 as *mut c_void, 64, NCCL_PTR_CUDA, 0, &mut mh) };
            assert_eq!((res, mh), (ncclResult_t::ncclInvalidUsage, NULL));
            expect_log("cannot serve a window in GPU memory (NCCL_PTR_CUDA)");
            // The group still works after refusals.
            let (res, q) = r.put_signal(0, (wmh, 0), 8, (wmh, 0), 1, Some((smh, 0, true)));
            assert_eq!(res, OK);
            r.wait_all(vec![q]);
        } else {
            r.wait_signal(&signals[0], 1);
        }
        barrier.wait();
        for w in [wmh, smh] {
            // SAFETY: registered above.
            assert_eq!(unsafe { rma().deregMrSym.unwrap()(r.coll, w) }, OK);
        }
        if rank == 0 {
            // SAFETY: a window deregistered twice is refused.
            let res = unsafe { rma().deregMrSym.unwrap()(r.coll, wmh) };
            assert_eq!(res, ncclResult_t::ncclInvalidArgument);
            expect_log("is deregistered already");
        }
    });
}

/// A peer process killed mid-run: the next operation on it ends in ncclRemoteError within
/// seconds, and every later call on the group says so; nothing hangs.
#[test]
fn a_killed_peer_is_a_remote_error_within_seconds() {
    let mut r = Rank::listen();
    let mut child = child_case(CHILD_VAR, &hex(&r.handle))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let theirs = unhex(line.trim().strip_prefix("HANDLE ").expect("child's handle"));
    r.connect(&[r.handle, theirs], 0);
    let mut win = vec![0u8; 4096];
    let mh = r.reg(win.as_mut_ptr() as *mut c_void, win.len());
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "READY");
    child.kill().unwrap();
    child.wait().unwrap();
    let start = Instant::now();
    let code = loop {
        let mut req = NULL;
        // SAFETY: handles from this group; out-pointer valid.
        let res = unsafe { rma().iget.unwrap()(r.ctx, 0, 0, mh, 64, 0, mh, 1, &mut req) };
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
    expect_log("RMA connection to rank 1");
    // Later calls say so too.
    assert_eq!(r.progress(), ncclResult_t::ncclRemoteError);
    let mut has = false;
    // SAFETY: a live context; out-pointer valid.
    assert_eq!(unsafe { rma().queryLastError.unwrap()(r.ctx, &mut has) }, OK);
    assert!(has);
    nccl_net_tcpxr::testlog::claim_all("(ncclRma v14)");
    let _ = &mut win;
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
    assert_eq!(p.ptrSupport, NCCL_PTR_HOST);
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
