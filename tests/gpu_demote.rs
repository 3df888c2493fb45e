//! `NCCL_TCPXR_BOUNCE_DEMOTE=1` demotes only the bounce receives the copy engine places
//! (engine/lanes/recv.rs, RecvCtx): with NCCL's device unpack over the socket, a connection whose
//! receives are copied into GPU memory (`NCCL_TCPXR_GPU_COPY_BYTES` 64 KiB, auto's value on
//! point-to-point connections) has its stripes' lines demoted as they land, and one whose
//! receives NCCL's kernel reads (0, a collective's connections) has none: demoting those made the
//! collectives slower (run 279). Each case runs in a child process (the settings are read once
//! per process), receives 1 MiB into GPU memory, checks every byte, and closes with
//! `NCCL_TCPXR_STATS=1`, whose per-stripe lines name the bytes demoted. `#[ignore]`d: it runs with
//! `--include-ignored` on a GPU host (SKIPPED without CUDA; TCPXR_REQUIRE_GPU=1 makes that a
//! failure).
mod common;

use common::gpu::{gpu_or_skip, place_from_ring, read_ring, DevBuf};
use common::*;
use nccl_net_tcpxr::abi::*;
use std::ffi::c_void;
use std::time::Instant;

/// Set in the child processes: "copied" or "kernel".
const CHILD: &str = "TCPXR_GPU_DEMOTE_CHILD";

before_main! {
    run_child_case(CHILD, demote_child);
}

/// Receives 1 MiB on a device-unpack pair; closing it logs each receive stripe's stats line (on
/// stderr: the parent reads them there).
fn demote_child(case: &str) {
    // GPU 0's context current on this thread, as in every GPU test: the handle and buffers below
    // are read and allocated through it.
    let _gpu = gpu_or_skip(case).expect("the parent checked for a GPU");
    let net = v12();
    let (send, recv, dev) = unpack_pair(&net, true);
    let ring = read_ring(dev);
    const LEN: usize = 1 << 20;
    let dst = DevBuf::new(LEN);
    let mut mh = null();
    // SAFETY: tcpxr's table; device memory of LEN bytes; a live out-pointer.
    let r = unsafe { net.0.regMr.unwrap()(recv, dst.0 as *mut c_void, LEN, NCCL_PTR_CUDA, &mut mh) };
    assert_eq!(r, OK);
    let mut data = pattern(LEN, 7);
    let (mut rq, mut sq) = (null(), null());
    assert_eq!(net.irecv(recv, dst.0 as *mut c_void, LEN, mh, &mut rq), OK);
    assert_eq!(
        net.isend(send, data.as_mut_ptr() as *mut c_void, LEN, null(), &mut sq),
        OK
    );
    assert!(!rq.is_null() && !sq.is_null());
    let start = Instant::now();
    let (mut got, mut sent) = (None, false);
    while got.is_none() || !sent {
        let (mut done, mut size) = (0, 0);
        if got.is_none() {
            assert_eq!(net.test(rq, &mut done, &mut size), OK);
            if done != 0 {
                got = Some(size as usize);
            }
        }
        if !sent {
            assert_eq!(net.test(sq, &mut done, &mut size), OK);
            sent = done != 0;
        }
        assert!(start.elapsed() < DEADLINE, "the receive never completed");
    }
    assert_eq!(got, Some(LEN));
    // Copied: no records; NCCL's kernel's share: placed from the ring as the kernel would.
    place_from_ring(&ring, 0, dst.0);
    assert!(DevBuf(dst.0).download_forget(LEN) == data, "1 MiB arrived wrong");
    // SAFETY: tcpxr's table; its own comm and a completed request.
    assert_eq!(unsafe { net.0.irecvConsumed.unwrap()(recv, 1, rq) }, OK);
    assert_eq!(net.dereg_mr(recv, mh), OK);
    assert_eq!(net.close_send(send), OK);
    assert_eq!(net.close_recv(recv), OK);
}

#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn only_receives_the_copy_engine_places_are_demoted_or_skipped() {
    if gpu_or_skip("only_receives_the_copy_engine_places_are_demoted_or_skipped").is_none() {
        return;
    }
    let demoted = |case: &str, copy_bytes: &str| {
        let out = child_case(CHILD, case)
            .env("NCCL_TCPXR_GPU_BUFFERS", "1")
            .env("NCCL_TCPXR_GPU_COPY_BYTES", copy_bytes)
            .env("NCCL_TCPXR_BOUNCE_DEMOTE", "1")
            .env("NCCL_TCPXR_STATS", "1")
            // The stats lines are INFO (outside NCCL tcpxr logs warnings only unless asked), and
            // on stderr, not the capture file the two children would share (one would claim the
            // other's lines).
            .env("TCPXR_LOG", "info")
            .env("TCPXR_LOG_FILE", "")
            .output()
            .expect("start the child test process");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{case}:\n{text}");
        let stripes: Vec<&str> = text.lines().filter(|l| l.contains("stats receive s")).collect();
        assert_eq!(stripes.len(), 4, "{case}: four receive stripes' lines:\n{text}");
        // (stripes that carried bytes, stripes that demoted some)
        let carried = stripes.iter().filter(|l| !l.contains(": 0.0 MB in")).count();
        let demoted = stripes.iter().filter(|l| l.contains("MB demoted")).count();
        assert!(carried > 0, "{case}: no stripe carried the bytes:\n{text}");
        (carried, demoted)
    };
    let cpu = nccl_net_tcpxr::transport::socket::cpu_demotes();
    let (carried, copied) = demoted("copied", "65536");
    assert_eq!(
        copied,
        if cpu { carried } else { 0 },
        "copied receives: every stripe that carried them"
    );
    assert_eq!(demoted("kernel", "0").1, 0, "receives NCCL's kernel reads");
}
