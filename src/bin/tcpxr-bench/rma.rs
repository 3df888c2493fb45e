//! `tcpxr-bench latency --rma`: the same ping-pong through tcpxr's RMA table
//! (`ncclRmaPlugin_v14`, as NCCL 2.30's RMA and GIN proxies drive it): two ranks on two threads,
//! host windows over loopback, each put carrying a strong signal; a rank that sees the signal of
//! round i puts back. Half a round trip is the one-way time of a put with a signal through tcpxr,
//! the part of NCCL's GIN and ncclPutSignal latency that is tcpxr's on host memory (GPU windows add
//! the staging copies and the signal kernel).
use nccl_net_tcpxr::abi::*;
use nccl_net_tcpxr::export::rma::ncclRmaPlugin_v14 as RMA;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

const NULL: *mut c_void = std::ptr::null_mut();

/// The longest a rank waits for a signal before the bench gives up (a lost put is a bug).
const STUCK: Duration = Duration::from_secs(10);

/// Exits with a message when an RMA call fails (the bench has no other recovery).
fn ok(r: ncclResult_t, what: &str) {
    if r != ncclResult_t::ncclSuccess {
        eprintln!("tcpxr-bench latency --rma: {what} failed: {r:?}");
        std::process::exit(1);
    }
}

/// One rank's objects, as plain integers so the two threads can share the setup. Its window
/// receives the peer's puts in its first half and holds its own source bytes in the second.
struct Rank {
    init: usize,
    half: usize,
    coll: usize,
    ctx: usize,
    win: usize,
    sig: usize,
}

/// Makes this thread rank `rank` of 2: listen, swap handles through `handles`, connect, one
/// context, and the two windows (registration is collective: both threads register together).
fn join(rank: usize, handles: &Mutex<[[u8; 128]; 2]>, met: &Barrier, win: &mut [u8], sig: &AtomicU64) -> Rank {
    let (mut init, mut listen, mut n) = (NULL, NULL, 0 as c_int);
    let mut handle = [0u8; 128];
    // SAFETY: tcpxr's own table; valid out-pointers; the handle buffer is 128 bytes.
    unsafe {
        ok(RMA.init.unwrap()(&mut init, 0x7ba7, None), "init");
        ok(RMA.devices.unwrap()(&mut n), "devices");
        if n < 1 {
            eprintln!("tcpxr-bench latency --rma: tcpxr offers no RMA device (see its WARN)");
            std::process::exit(1);
        }
        ok(
            RMA.listen.unwrap()(init, 0, handle.as_mut_ptr() as *mut c_void, &mut listen),
            "listen",
        );
    }
    handles.lock().unwrap()[rank] = handle;
    met.wait();
    let all = *handles.lock().unwrap();
    let mut ptrs: Vec<*mut c_void> = all.iter().map(|h| h.as_ptr() as *mut c_void).collect();
    let (mut coll, mut ctx, mut wmh, mut smh) = (NULL, NULL, NULL, NULL);
    let mut config = ncclRmaConfig_v14_t {
        nContexts: 1,
        trafficClass: 0,
        rankStride: 1,
    };
    // SAFETY: the handles are 128 bytes each and outlive the call; windows outlive their
    // registration (the caller deregisters them before dropping them); valid out-pointers.
    unsafe {
        ok(
            RMA.connect.unwrap()(NULL, ptrs.as_mut_ptr(), 2, rank as c_int, listen, &mut coll),
            "connect",
        );
        ok(RMA.closeListen.unwrap()(listen), "closeListen");
        ok(RMA.createContext.unwrap()(coll, &mut config, &mut ctx), "createContext");
        let w = win.as_mut_ptr() as *mut c_void;
        ok(
            RMA.regMrSym.unwrap()(coll, w, win.len(), NCCL_PTR_HOST, 0, &mut wmh),
            "regMrSym",
        );
        let s = sig.as_ptr() as *mut c_void;
        ok(
            RMA.regMrSym.unwrap()(coll, s, 8, NCCL_PTR_HOST, NCCL_NET_MR_FLAG_FORCE_SO, &mut smh),
            "regMrSym",
        );
    }
    Rank {
        init: init as usize,
        half: win.len() / 2,
        coll: coll as usize,
        ctx: ctx as usize,
        win: wmh as usize,
        sig: smh as usize,
    }
}

impl Rank {
    /// Puts `size` bytes of this rank's source half into the peer's receiving half, with a strong
    /// add of 1 to its signal; the request.
    fn put(&self, peer: usize, size: usize) -> usize {
        let mut req = NULL;
        // SAFETY: tokens of this rank's group; the window is registered and alive.
        let r = unsafe {
            RMA.iputSignal.unwrap()(
                self.ctx as *mut c_void,
                0,
                self.half as u64,
                self.win as *mut c_void,
                size,
                0,
                self.win as *mut c_void,
                peer as u32,
                0,
                self.sig as *mut c_void,
                1,
                NCCL_NET_SIGNAL_OP_ADD,
                true,
                &mut req,
            )
        };
        ok(r, "iputSignal");
        req as usize
    }

    /// Progresses until `signal` reaches `want`, testing `pending` (this rank's last put) on the
    /// way so that it completes too.
    fn wait(&self, signal: &AtomicU64, want: u64, pending: &mut Option<usize>) {
        let start = Instant::now();
        loop {
            if let Some(req) = *pending {
                let mut done: c_int = 0;
                // SAFETY: a live request of this rank's group; valid out-pointer.
                ok(
                    unsafe { RMA.test.unwrap()(self.coll as *mut c_void, req as *mut c_void, &mut done) },
                    "test",
                );
                if done == 1 {
                    *pending = None;
                }
            } else {
                // SAFETY: this rank's context.
                ok(
                    unsafe { RMA.rmaProgress.unwrap()(self.ctx as *mut c_void) },
                    "rmaProgress",
                );
            }
            if signal.load(Ordering::Acquire) >= want {
                return;
            }
            if start.elapsed() > STUCK {
                eprintln!("tcpxr-bench latency --rma: no signal {want} after {STUCK:?}: a put was lost");
                std::process::exit(1);
            }
        }
    }

    fn close(self, mut pending: Option<usize>, signal: &AtomicU64) {
        // The last put completes locally; nothing else is owed.
        while pending.is_some() {
            self.wait(signal, 0, &mut pending);
        }
        // SAFETY: tokens of this rank, each closed once, nothing outstanding.
        unsafe {
            ok(
                RMA.deregMrSym.unwrap()(self.coll as *mut c_void, self.win as *mut c_void),
                "deregMrSym",
            );
            ok(
                RMA.deregMrSym.unwrap()(self.coll as *mut c_void, self.sig as *mut c_void),
                "deregMrSym",
            );
            ok(RMA.destroyContext.unwrap()(self.ctx as *mut c_void), "destroyContext");
            ok(RMA.closeColl.unwrap()(self.coll as *mut c_void), "closeColl");
            ok(RMA.finalize.unwrap()(self.init as *mut c_void), "finalize");
        }
    }
}

/// `warmup + iters` round trips of a `size`-byte put with a strong signal each way; the timed
/// ones' round-trip times in microseconds. Exits when the bytes that landed are not the sender's.
pub fn round_trips(size: usize, warmup: usize, iters: usize) -> Vec<f64> {
    let handles = Mutex::new([[0u8; 128]; 2]);
    let (met, setup) = (Barrier::new(2), Barrier::new(2));
    // A receiving half and a source half.
    let len = 2 * size.max(1);
    std::thread::scope(|s| {
        let pong = s.spawn(|| {
            let mut win = vec![0x22u8; len];
            win[..len / 2].fill(0);
            let sig = AtomicU64::new(0);
            let r = join(1, &handles, &met, &mut win, &sig);
            setup.wait();
            let mut pending = None;
            for i in 0..(warmup + iters) as u64 {
                r.wait(&sig, i + 1, &mut pending);
                // The previous put back must be done before the next one reuses its window.
                while pending.is_some() {
                    r.wait(&sig, 0, &mut pending);
                }
                pending = Some(r.put(0, size));
            }
            r.close(pending, &sig);
            win
        });
        let mut win = vec![0x11u8; len];
        win[..len / 2].fill(0);
        let sig = AtomicU64::new(0);
        let r = join(0, &handles, &met, &mut win, &sig);
        setup.wait();
        let mut rtt_us = Vec::with_capacity(iters);
        let mut pending = None;
        for i in 0..(warmup + iters) as u64 {
            while pending.is_some() {
                r.wait(&sig, 0, &mut pending);
            }
            let start = Instant::now();
            pending = Some(r.put(1, size));
            r.wait(&sig, i + 1, &mut pending);
            if i >= warmup as u64 {
                rtt_us.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
        r.close(pending, &sig);
        let theirs = pong.join().unwrap();
        // Each side's receiving half now holds the other's source bytes (size 0 moves none).
        if size > 0 && (win[..size].iter().any(|&b| b != 0x22) || theirs[..size].iter().any(|&b| b != 0x11)) {
            eprintln!("tcpxr-bench latency --rma: the windows do not hold each other's bytes");
            std::process::exit(1);
        }
        rtt_us
    })
}
