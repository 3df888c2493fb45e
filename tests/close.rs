//! Closing never hangs: comms closed idle, with a receive waiting for data that never comes, and in
//! the middle of a transfer that the socket transport's I/O threads are moving, many times over,
//! through the exported table as NCCL closes them. Afterwards no tcpxr thread is left.
mod common;
use common::*;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Aborts the process if the test is still running after `limit`: a hung close fails the run
/// instead of stalling it.
fn watchdog(limit: Duration) -> Arc<AtomicBool> {
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    std::thread::spawn(move || {
        let start = Instant::now();
        while !d.load(Ordering::Acquire) {
            if start.elapsed() > limit {
                eprintln!("a comm close hung (test still running after {limit:?}): aborting");
                std::process::abort();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    done
}

#[test]
fn comms_closed_idle_waiting_or_mid_transfer_never_hang_and_leave_no_thread_behind() {
    // Every backlog goes to an I/O thread, so the busy comms are closed under the workers' feet.
    std::env::set_var("NCCL_TCPXR_HANDOFF_BYTES", "1");
    let done = watchdog(Duration::from_secs(120));
    let net = v12();
    const BIG: usize = 4 << 20;
    let mut out = vec![0u8; BIG];
    let mut data = pattern(BIG, 1);
    let start = Instant::now();
    let rounds = 800;
    for round in 0..rounds {
        // Idle.
        drop(Pair::new(&net));
        // A receive that waits for a message nobody sends.
        let waiting = Pair::new(&net);
        let mut rq = null();
        assert_eq!(
            net.irecv(waiting.recv, out.as_mut_ptr() as *mut c_void, BIG, null(), &mut rq),
            OK
        );
        let (mut flag, mut size) = (0, 0);
        assert_eq!(net.test(rq, &mut flag, &mut size), OK);
        drop(waiting);
        // Mid-transfer: 4 MiB posted both ways and moving when both ends close.
        let busy = Pair::new(&net);
        let (mut rq, mut sq) = (null(), null());
        assert_eq!(
            net.irecv(busy.recv, out.as_mut_ptr() as *mut c_void, BIG, null(), &mut rq),
            OK
        );
        assert_eq!(
            net.isend(busy.send, data.as_mut_ptr() as *mut c_void, BIG, null(), &mut sq),
            OK
        );
        let (mut rdone, mut sdone) = (0, 0);
        for _ in 0..(round % 4) {
            if rdone == 0 {
                assert_eq!(net.test(rq, &mut rdone, &mut size), OK);
            }
            if sdone == 0 {
                assert_eq!(net.test(sq, &mut sdone, &mut size), OK);
            }
        }
        if round % 2 == 1 {
            // Pair closes the send side first; this round the receiver goes first.
            assert_eq!(net.close_recv(busy.recv), OK);
            assert_eq!(net.close_send(busy.send), OK);
            std::mem::forget(busy);
        } else {
            drop(busy);
        }
    }
    eprintln!(
        "{rounds} rounds of 3 comm pairs (4 stripes each) opened and closed in {:?}",
        start.elapsed()
    );
    // The I/O pool goes with the last stripe (NCCL may dlclose tcpxr right after).
    let start = Instant::now();
    while threads_named("tcpxr-") > 0 && start.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(threads_named("tcpxr-"), 0, "tcpxr threads outlived every comm");
    done.store(true, Ordering::Release);
}
