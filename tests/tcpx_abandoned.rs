//! Connects abandoned while TCPX's connect was under way (transport/tcpx `Abandoned`): TCPX's
//! connect cannot be cancelled, so tcpxr calls it again at later sweeps; one whose peer never
//! answers is given up past a deadline with one WARN per connect, and the last finalize drains
//! them: it closes the comm TCPX returns within its bounded final sweep, gives up on the rest, and
//! returns.
//!
//! Its own test binary: a 300 ms handshake timeout (after which connects NCCL stopped polling are
//! dropped by the next sweep), 2 stripes, and the give-up deadline shortened to 3 s by the test
//! seam TCPXR_TEST_TCPX_GIVE_UP_MS (10 minutes otherwise). Each test opens one communicator
//! context and finalizes it, so its finalize is the last; the tests run one at a time.
mod common;
use common::*;
use nccl_net_tcpxr::abi::ncclNetCommConfig_v12_t;
use nccl_net_tcpxr::testlog::{claim_all, expect_n};
use std::ffi::c_void;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const HANDSHAKE: Duration = Duration::from_millis(300);
const GIVE_UP: Duration = Duration::from_millis(3000);
const STRIPES: usize = 2;
const GAVE_UP: &str = "gave up on abandoned TCPX connect";

before_main! {
    select_tcpx(&[
        ("NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS", "300"),
        ("NCCL_TCPXR_STRIPES", "2"),
        ("TCPXR_TEST_TCPX_GIVE_UP_MS", "3000"),
    ]);
}

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// NCCL's init of one communicator (v12): its context.
fn open_context(net: &V12) -> *mut c_void {
    let mut ctx = null();
    let mut cfg = ncclNetCommConfig_v12_t { trafficClass: -1 };
    // SAFETY: tcpxr's table given live out-pointers and no logger.
    let r = unsafe { net.0.init.unwrap()(&mut ctx, 0x5eed, &mut cfg, None, None) };
    assert_eq!(r, OK);
    assert!(!ctx.is_null());
    ctx
}

/// NCCL's finalize of that communicator: the last one, as each test opens only one.
fn finalize(net: &V12, ctx: *mut c_void) {
    // SAFETY: a context this table's init returned, finalized once.
    assert_eq!(unsafe { net.0.finalize.unwrap()(ctx) }, OK);
}

/// Starts a connect to `handle`'s listener (whose NCCL never calls accept) and polls it until
/// the welcome is in and every stripe's TCPX connect is under way (waiting for the peer's accept),
/// then stops polling, as NCCL's abort leaves it, and lets a sweep past the handshake timeout drop
/// it: its TCPX connects are abandoned.
fn abandon_a_connect(net: &V12, handle: &mut [u8; 128]) {
    let mut s = null();
    for _ in 0..10 {
        assert_eq!(net.connect(0, handle, &mut s), OK);
        assert!(s.is_null());
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(HANDSHAKE + Duration::from_millis(100));
    sweep(net);
}

/// Any close sweeps: a listen comm opened and closed.
fn sweep(net: &V12) {
    let (mut h, mut l) = ([0u8; 128], null());
    assert_eq!(net.listen(0, &mut h, &mut l), OK);
    assert_eq!(net.close_listen(l), OK);
}

/// Every test's start: one communicator context, and a connect to a listener of it abandoned
/// while its TCPX connects are under way. Returns the context and the listen comm.
fn open_context_with_an_abandoned_connect(net: &V12) -> (*mut c_void, *mut c_void) {
    let ctx = open_context(net);
    let mut handle = [0u8; 128];
    let mut l = null();
    assert_eq!(net.listen(0, &mut handle, &mut l), OK);
    abandon_a_connect(net, &mut handle);
    (ctx, l)
}

/// Closed send comms the emulator has recorded so far.
fn closed_send_comms() -> usize {
    emulator_stats().iter().filter(|c| c.kind == "send").count()
}

#[test]
fn an_abandoned_connect_whose_peer_never_answers_is_given_up_past_the_deadline_with_one_warn_each() {
    let _one = one_at_a_time();
    let net = v12();
    let (ctx, l) = open_context_with_an_abandoned_connect(&net);
    let abandoned = Instant::now();
    // Before the deadline the sweeps keep calling it.
    sweep(&net);
    assert!(claim_all(GAVE_UP).is_empty(), "given up before its deadline");
    while abandoned.elapsed() < GIVE_UP + Duration::from_millis(200) {
        std::thread::sleep(Duration::from_millis(50));
    }
    sweep(&net);
    for line in expect_n(GAVE_UP, STRIPES) {
        assert!(line.contains("past its deadline"), "{line}");
    }
    // Given up once: later sweeps and the last finalize no longer know it.
    sweep(&net);
    assert_eq!(net.close_listen(l), OK);
    let start = Instant::now();
    finalize(&net, ctx);
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "finalize took {:?}",
        start.elapsed()
    );
    assert!(claim_all(GAVE_UP).is_empty(), "a connect given up twice");
}

#[test]
fn the_last_finalize_closes_the_comm_tcpx_returns_for_an_abandoned_connect_during_its_final_sweep() {
    let _one = one_at_a_time();
    let net = v12();
    let (ctx, l) = open_context_with_an_abandoned_connect(&net);
    let closed_before = closed_send_comms();
    // The peer's accept answers the TCPX connects still under way, once the finalize has begun:
    // only a sweep after the finalize's first can see their comms.
    let l_addr = l as usize;
    let peer = std::thread::spawn(move || {
        let net = v12();
        std::thread::sleep(Duration::from_millis(300));
        let mut r = null();
        let start = Instant::now();
        while r.is_null() {
            assert_eq!(net.accept(l_addr as *mut c_void, &mut r), OK);
            assert!(
                start.elapsed() < DEADLINE,
                "the abandoned connect never reached the peer"
            );
        }
        r as usize
    });
    let start = Instant::now();
    finalize(&net, ctx);
    let took = start.elapsed();
    let r = peer.join().unwrap() as *mut c_void;
    assert_eq!(
        closed_send_comms() - closed_before,
        STRIPES,
        "the last finalize left the TCPX comms of the abandoned connect open (it took {took:?})"
    );
    assert!(took < Duration::from_secs(2), "finalize took {took:?}");
    assert!(claim_all(GAVE_UP).is_empty());
    assert_eq!(net.close_recv(r), OK);
    assert_eq!(net.close_listen(l), OK);
}

#[test]
fn the_last_finalize_gives_up_on_abandoned_connects_still_under_way_after_its_final_sweep_and_returns() {
    let _one = one_at_a_time();
    let net = v12();
    let (ctx, l) = open_context_with_an_abandoned_connect(&net);
    let start = Instant::now();
    finalize(&net, ctx);
    let took = start.elapsed();
    // The final sweep's bound (2 s), not the deadline (3 s), and never a hang.
    assert!(took < Duration::from_millis(2900), "finalize took {took:?}");
    for line in expect_n(GAVE_UP, STRIPES) {
        assert!(line.contains("at the last finalize"), "{line}");
    }
    assert_eq!(net.close_listen(l), OK);
    sweep(&net);
    assert!(claim_all(GAVE_UP).is_empty(), "a connect given up twice");
}
