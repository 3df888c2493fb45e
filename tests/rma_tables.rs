//! The RMA tables after v14 (NVIDIA/nccl's rma_v15.h-rma_v17.h), each called in its own C shape
//! as a newer NCCL would: v15's `optFlags` on iput, iputSignal and iget, v16's getRmaProperties,
//! v17's abort flag on connect and its list of peers in createContext's config. Two ranks on
//! threads over loopback move a put with a strong signal and a get through every version; bad
//! flags and peers get a WARN and ncclInvalidArgument; a v17 connect still waiting for its peer
//! returns soon after NCCL sets its abort flag. (tests/rma.rs drives v14 in depth: the versions
//! share everything past these arguments.)
mod common;
use common::*;
use nccl_net_tcpxr::abi::*;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

// Before main: tcpxr offers its RMA table only when asked. Sound: before main, so before this
// process has a second thread.
before_main! {
    if std::env::var_os("NCCL_TCPXR_RMA").is_none() {
        std::env::set_var("NCCL_TCPXR_RMA", "1");
    }
}

const NULL: *mut c_void = std::ptr::null_mut();
const WINDOW: usize = 128 << 10;
const PUT: usize = 64 << 10;
/// Where the get lands in the getter's own window (past the put's bytes).
const GET_AT: u64 = 96 << 10;
const GET: usize = 4 << 10;

fn v15() -> &'static ncclRma_v15_t {
    table("ncclRmaPlugin_v15")
}
fn v16() -> &'static ncclRma_v16_t {
    table("ncclRmaPlugin_v16")
}
fn v17() -> &'static ncclRma_v17_t {
    table("ncclRmaPlugin_v17")
}

/// The entry points the test calls, taken from one table version (the shared ones have one type).
struct Table {
    version: u32,
    init: RmaInitFn,
    devices: RmaDevicesFn,
    get_rma_properties: RmaGetRmaPropertiesFn,
    listen: RmaListenFn,
    connect: RmaConnectFn,
    connect_v17: RmaConnectV17Fn,
    create_context: RmaCreateContextFn,
    create_context_v17: RmaCreateContextV17Fn,
    reg: RmaRegMrSymFn,
    dereg: RmaDeregMrSymFn,
    destroy_context: RmaCloseFn,
    close_coll: RmaCloseFn,
    close_listen: RmaCloseFn,
    iput: RmaIputV15Fn,
    iput_signal: IputSignalV15Fn,
    iget: RmaIgetV15Fn,
    test: RmaTestFn,
    progress: RmaCloseFn,
    finalize: RmaCloseFn,
}

fn tables() -> [Table; 3] {
    let (a, b, c) = (v15(), v16(), v17());
    [
        Table {
            version: 15,
            init: a.init,
            devices: a.devices,
            get_rma_properties: None,
            listen: a.listen,
            connect: a.connect,
            connect_v17: None,
            create_context: a.createContext,
            create_context_v17: None,
            reg: a.regMrSym,
            dereg: a.deregMrSym,
            destroy_context: a.destroyContext,
            close_coll: a.closeColl,
            close_listen: a.closeListen,
            iput: a.iput,
            iput_signal: a.iputSignal,
            iget: a.iget,
            test: a.test,
            progress: a.rmaProgress,
            finalize: a.finalize,
        },
        Table {
            version: 16,
            init: b.init,
            devices: b.devices,
            get_rma_properties: b.getRmaProperties,
            listen: b.listen,
            connect: b.connect,
            connect_v17: None,
            create_context: b.createContext,
            create_context_v17: None,
            reg: b.regMrSym,
            dereg: b.deregMrSym,
            destroy_context: b.destroyContext,
            close_coll: b.closeColl,
            close_listen: b.closeListen,
            iput: b.iput,
            iput_signal: b.iputSignal,
            iget: b.iget,
            test: b.test,
            progress: b.rmaProgress,
            finalize: b.finalize,
        },
        Table {
            version: 17,
            init: c.init,
            devices: c.devices,
            get_rma_properties: c.getRmaProperties,
            listen: c.listen,
            connect: None,
            connect_v17: c.connect,
            create_context: None,
            create_context_v17: c.createContext,
            reg: c.regMrSym,
            dereg: c.deregMrSym,
            destroy_context: c.destroyContext,
            close_coll: c.closeColl,
            close_listen: c.closeListen,
            iput: c.iput,
            iput_signal: c.iputSignal,
            iget: c.iget,
            test: c.test,
            progress: c.rmaProgress,
            finalize: c.finalize,
        },
    ]
}

/// One rank's objects through table `t`.
struct Rank<'a> {
    t: &'a Table,
    init: *mut c_void,
    listen: *mut c_void,
    handle: [u8; 128],
    coll: *mut c_void,
    ctx: *mut c_void,
}

// SAFETY: the tokens are plain integers to the test; tcpxr's tables are thread-safe.
unsafe impl Send for Rank<'_> {}

impl<'a> Rank<'a> {
    fn listen(t: &'a Table) -> Rank<'a> {
        let (mut init, mut listen, mut handle, mut n) = (NULL, NULL, [0u8; 128], 0 as c_int);
        // SAFETY: tcpxr's table, called with valid out-pointers; the handle buffer is 128 bytes.
        unsafe {
            assert_eq!(t.init.unwrap()(&mut init, 0x1515, None), OK);
            assert_eq!(t.devices.unwrap()(&mut n), OK);
            assert!(n >= 1, "no RMA device over lo");
            assert_eq!(
                t.listen.unwrap()(init, 0, handle.as_mut_ptr() as *mut c_void, &mut listen),
                OK
            );
        }
        Rank {
            t,
            init,
            listen,
            handle,
            coll: NULL,
            ctx: NULL,
        }
    }

    /// connect in the table's shape (v17: with an abort flag NCCL never sets), then a context of
    /// 2 (v17: reaching both ranks by list).
    fn connect(&mut self, handles: &[[u8; 128]], rank: usize) {
        let mut ptrs: Vec<*mut c_void> = handles.iter().map(|h| h.as_ptr() as *mut c_void).collect();
        let n = handles.len() as c_int;
        let mut abort = 0u32;
        // SAFETY: every handle is 128 bytes; out-pointers valid; the flag outlives the call.
        let r = unsafe {
            match (self.t.connect, self.t.connect_v17) {
                (Some(f), _) => f(NULL, ptrs.as_mut_ptr(), n, rank as c_int, self.listen, &mut self.coll),
                (None, Some(f)) => f(
                    NULL,
                    ptrs.as_mut_ptr(),
                    n,
                    rank as c_int,
                    self.listen,
                    &mut self.coll,
                    &mut abort,
                ),
                (None, None) => unreachable!(),
            }
        };
        assert_eq!(r, OK, "v{} connect of rank {rank}", self.t.version);
        // SAFETY: a listen token of this rank, closed once.
        assert_eq!(unsafe { self.t.close_listen.unwrap()(self.listen) }, OK);
        let mut peers: Vec<c_int> = (0..n).collect();
        // SAFETY: valid configs and out-pointer; `peers` outlives the call.
        let r = unsafe {
            match (self.t.create_context, self.t.create_context_v17) {
                (Some(f), _) => {
                    let mut c = ncclRmaConfig_v14_t {
                        nContexts: 2,
                        trafficClass: 0,
                        rankStride: 1,
                    };
                    f(self.coll, &mut c, &mut self.ctx)
                }
                (None, Some(f)) => {
                    let mut c = ncclRmaConfig_v17_t {
                        nContexts: 2,
                        trafficClass: 0,
                        peerArray: peers.as_mut_ptr(),
                        peerArrayCount: n,
                    };
                    f(self.coll, &mut c, &mut self.ctx)
                }
                (None, None) => unreachable!(),
            }
        };
        assert_eq!(r, OK, "v{} createContext", self.t.version);
    }

    fn reg(&self, mem: *mut c_void, size: usize) -> *mut c_void {
        let mut mh = NULL;
        // SAFETY: `mem` is `size` bytes the caller keeps alive while registered.
        let r = unsafe { self.t.reg.unwrap()(self.coll, mem, size, NCCL_PTR_HOST, 0, &mut mh) };
        assert_eq!(r, OK);
        mh
    }

    fn progress(&self) {
        // SAFETY: this rank's context token.
        assert_eq!(unsafe { self.t.progress.unwrap()(self.ctx) }, OK);
    }

    /// Tests `req` (progressing) until it is done.
    fn wait(&self, req: *mut c_void) {
        let start = Instant::now();
        loop {
            self.progress();
            let mut done: c_int = 0;
            // SAFETY: a request token of this rank; out-pointer valid.
            assert_eq!(unsafe { self.t.test.unwrap()(self.coll, req, &mut done) }, OK);
            if done == 1 {
                return;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "request never completed");
        }
    }

    fn close(self, windows: &[*mut c_void]) {
        // SAFETY: tokens from this rank's calls, each closed once.
        unsafe {
            for &w in windows {
                assert_eq!(self.t.dereg.unwrap()(self.coll, w), OK);
            }
            assert_eq!(self.t.destroy_context.unwrap()(self.ctx), OK);
            assert_eq!(self.t.close_coll.unwrap()(self.coll), OK);
            assert_eq!(self.t.finalize.unwrap()(self.init), OK);
        }
    }
}

fn pattern(from: usize, i: usize) -> u8 {
    (from * 29 + i * 7 + 3) as u8
}

/// Rank 0 puts 64 KiB into rank 1's window with a strong signal (optFlags: aggregate); rank 1,
/// once the signal reads 1, checks every byte and gets 4 KiB of rank 0's window.
fn put_signal_and_get(t: &Table) {
    let handles = Mutex::new([[0u8; 128]; 2]);
    let gathered = Barrier::new(2);
    let done = Barrier::new(2);
    std::thread::scope(|s| {
        for rank in 0..2 {
            let (handles, gathered, done) = (&handles, &gathered, &done);
            s.spawn(move || {
                let mut r = Rank::listen(t);
                handles.lock().unwrap()[rank] = r.handle;
                gathered.wait();
                let all = *handles.lock().unwrap();
                r.connect(&all, rank);
                let mut win: Vec<u8> = (0..WINDOW).map(|i| pattern(rank, i)).collect();
                let signals = AtomicU64::new(0);
                let mh = r.reg(win.as_mut_ptr() as *mut c_void, WINDOW);
                let sig = r.reg(signals.as_ptr() as *mut c_void, 8);
                if let Some(get_props) = t.get_rma_properties {
                    let mut p = ncclRmaProperties_v16_t {
                        flushesAllPutsOnAnySignal: true,
                    };
                    // SAFETY: this rank's group; out-pointer valid.
                    assert_eq!(unsafe { get_props(r.coll, &mut p) }, OK);
                    assert!(
                        !p.flushesAllPutsOnAnySignal,
                        "one connection per pair of ranks: a signal covers only its sender's puts"
                    );
                }
                if rank == 0 {
                    let mut req = NULL;
                    // SAFETY: window tokens of this group; out-pointer valid; the source stays
                    // alive until the request completes.
                    let rc = unsafe {
                        t.iput_signal.unwrap()(
                            r.ctx,
                            1,
                            0,
                            mh,
                            PUT,
                            0,
                            mh,
                            1,
                            0,
                            sig,
                            1,
                            NCCL_NET_SIGNAL_OP_ADD,
                            true,
                            ncclRmaOptFlagsAggregateRequests,
                            &mut req,
                        )
                    };
                    assert_eq!(rc, OK, "v{} iputSignal", t.version);
                    r.wait(req);
                    // Serve rank 1's get until it has its bytes.
                    let start = Instant::now();
                    while signals.load(Ordering::Acquire) == 0 {
                        r.progress();
                        assert!(start.elapsed() < Duration::from_secs(20), "rank 1 never said done");
                    }
                } else {
                    let start = Instant::now();
                    while signals.load(Ordering::Acquire) < 1 {
                        r.progress();
                        assert!(start.elapsed() < Duration::from_secs(20), "the signal never came");
                    }
                    for (i, &b) in win[..PUT].iter().enumerate() {
                        assert_eq!(b, pattern(0, i), "v{} put: byte {i}", t.version);
                    }
                    let mut req = NULL;
                    // SAFETY: as above; the landing range lies in this rank's window.
                    let rc = unsafe { t.iget.unwrap()(r.ctx, 0, 0, mh, GET, GET_AT, mh, 0, 0, &mut req) };
                    assert_eq!(rc, OK, "v{} iget", t.version);
                    r.wait(req);
                    for i in 0..GET {
                        assert_eq!(win[GET_AT as usize + i], pattern(0, i), "v{} get: byte {i}", t.version);
                    }
                    // Tell rank 0 it may stop serving: a plain put with a strong signal back.
                    let mut back = NULL;
                    // SAFETY: as above.
                    let rc = unsafe {
                        t.iput_signal.unwrap()(
                            r.ctx,
                            0,
                            0,
                            NULL,
                            0,
                            0,
                            NULL,
                            0,
                            0,
                            sig,
                            1,
                            NCCL_NET_SIGNAL_OP_INC,
                            true,
                            0,
                            &mut back,
                        )
                    };
                    assert_eq!(rc, OK);
                    r.wait(back);
                }
                done.wait();
                r.close(&[mh, sig]);
                drop(win);
            });
        }
    });
}

#[test]
fn every_rma_table_from_v15_to_v17_moves_a_put_a_strong_signal_and_a_get() {
    for t in tables() {
        put_signal_and_get(&t);
    }
}

/// A group of two ranks connected through `t`, each with one window (regMrSym is collective, so
/// the two register side by side), for the checks that need one: `body` gets rank 0 and its
/// window.
fn with_group(t: &Table, body: impl FnOnce(&Rank, *mut c_void)) {
    let mut ranks = [Rank::listen(t), Rank::listen(t)];
    let handles = [ranks[0].handle, ranks[1].handle];
    let mut wins = [vec![0u8; 4096], vec![0u8; 4096]];
    let [r0, r1] = &mut ranks;
    let [w0, w1] = &mut wins;
    let mh = std::thread::scope(|s| {
        s.spawn(|| {
            r1.connect(&handles, 1);
            r1.reg(w1.as_mut_ptr() as *mut c_void, 4096);
        });
        r0.connect(&handles, 0);
        r0.reg(w0.as_mut_ptr() as *mut c_void, 4096)
    });
    let [r0, r1] = ranks;
    body(&r0, mh);
    r0.close(&[]);
    r1.close(&[]);
    drop(wins);
}

#[test]
fn optflags_no_version_defines_are_refused_with_a_warn() {
    for t in tables() {
        with_group(&t, |r, mh| {
            let mut req = 7 as *mut c_void;
            // SAFETY: tokens of this group; out-pointer valid.
            let rc = unsafe { t.iput.unwrap()(r.ctx, 0, 0, mh, 8, 0, mh, 1, 0x4, &mut req) };
            assert_eq!(rc, ncclResult_t::ncclInvalidArgument, "v{}", t.version);
            assert!(req.is_null(), "a refused iput leaves *request NULL");
            expect_log("iput: optFlags 0x4 has bits no RMA table version defines");
            // SAFETY: as above.
            let rc = unsafe { t.iget.unwrap()(r.ctx, 0, 0, mh, 8, 0, mh, 1, 0x80, &mut req) };
            assert_eq!(rc, ncclResult_t::ncclInvalidArgument);
            expect_log("iget: optFlags 0x80");
        });
    }
}

#[test]
fn v17_create_context_refuses_peers_outside_the_group() {
    let t = &tables()[2];
    with_group(t, |r, _| {
        let f = t.create_context_v17.unwrap();
        let mut peers = [0 as c_int, 5];
        let mut ctx = 7 as *mut c_void;
        let mut c = ncclRmaConfig_v17_t {
            nContexts: 1,
            trafficClass: 0,
            peerArray: peers.as_mut_ptr(),
            peerArrayCount: 2,
        };
        let mut create = |c: &mut ncclRmaConfig_v17_t| {
            // SAFETY: a valid config (its peerArray NULL or pointing to `peers`) and out-pointer.
            unsafe { f(r.coll, c, &mut ctx) }
        };
        assert_eq!(create(&mut c), ncclResult_t::ncclInvalidArgument);
        expect_log("peerArray names rank 5, which is not in the group of 2 ranks (0-1)");
        c.peerArrayCount = -1;
        assert_eq!(create(&mut c), ncclResult_t::ncclInvalidArgument);
        expect_log("peerArrayCount -1 is negative");
        // NULL with a count is what is refused.
        c.peerArray = std::ptr::null_mut();
        c.peerArrayCount = 2;
        assert_eq!(create(&mut c), ncclResult_t::ncclInvalidArgument);
        assert!(ctx.is_null(), "a refused createContext leaves *rmaCtx NULL");
        expect_log("createContext: peerArray (with a positive peerArrayCount) is NULL");
    });
}

/// Rank 0 of two waits in connect for rank 1, which never comes: NCCL's abort flag set from
/// another thread ends the wait within a second, long before the 10 s handshake timeout.
#[test]
fn v17_connect_returns_soon_after_nccl_sets_its_abort_flag() {
    let t = &tables()[2];
    let r0 = Rank::listen(t);
    let absent = Rank::listen(t);
    let handles = [r0.handle, absent.handle];
    let flag = AtomicU32::new(0);
    let start = Instant::now();
    let (rc, coll) = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            flag.store(1, Ordering::Release);
        });
        let mut ptrs: Vec<*mut c_void> = handles.iter().map(|h| h.as_ptr() as *mut c_void).collect();
        let mut coll = 7 as *mut c_void;
        // SAFETY: valid handles, out-pointer and flag, all alive through the call.
        let rc = unsafe { t.connect_v17.unwrap()(NULL, ptrs.as_mut_ptr(), 2, 0, r0.listen, &mut coll, flag.as_ptr()) };
        (rc, coll)
    });
    let took = start.elapsed();
    assert_eq!(rc, ncclResult_t::ncclInternalError);
    assert!(coll.is_null(), "an aborted connect leaves *collComm NULL");
    assert!(took < Duration::from_secs(3), "connect took {took:?} after the abort");
    expect_log("RMA connect stopped: NCCL set its abort flag while waiting for ranks 1 to connect");
    // SAFETY: tokens of these ranks, closed once.
    unsafe {
        for r in [&r0, &absent] {
            assert_eq!(t.close_listen.unwrap()(r.listen), OK);
            assert_eq!(t.finalize.unwrap()(r.init), OK);
        }
    }
}
