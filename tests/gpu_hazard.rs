//! The test that would have caught the GPU-buffer deadlock of 2026-11-23 (issue 13): receives
//! into GPU memory must complete while a kernel of the application's context holds the GPU and
//! waits for exactly that data, with one hardware work queue (`CUDA_DEVICE_MAX_CONNECTIONS=1`),
//! as NCCL's kernel does. CUDA promises no concurrency between streams, so any GPU work of
//! tcpxr's that a receive's completion waits for may queue behind that kernel forever.
//!
//! With NCCL's device unpack (the v7+ tables; accept hands NCCL the ring) tcpxr launches no kernel
//! for a receive; over the socket it copies large receives into place with the copy engine
//! (engine/copy_in.rs), which needs no multiprocessor: this must pass, with the copies and with
//! records alone (`NCCL_TCPXR_GPU_COPY_BYTES=0`). The test plays NCCL: it releases its kernel
//! only after test() said done, then places the bytes from the ring as NCCL's kernel would and
//! consumes.
//! For contrast, the same with tcpxr's own unpack kernel (no device handle: the v5/v6 tables,
//! the C API) says whether that path deadlocks on this machine; it is reported, not asserted,
//! since whether a copy or kernel queued on another stream gets past a running one depends on the
//! GPU and driver.
//!
//! CUDA reads `CUDA_DEVICE_MAX_CONNECTIONS` once, at initialisation, so each case runs in a child
//! process of this binary (played by its constructor, before the test harness: see
//! common::run_child_case). `#[ignore]`d: it runs with `--include-ignored`, and without a CUDA
//! driver then says SKIPPED (TCPXR_REQUIRE_GPU=1 makes it fail).
mod common;

use common::gpu::{gpu_or_skip, place_from_ring, reg_cuda, DevBuf};
use common::spin::{cu, Spin};
use common::*;
use cudarc::driver::sys;
use nccl_net_tcpxr::abi::*;
use std::ffi::c_void;
use std::time::{Duration, Instant};

/// Set in the child processes: "device-unpack" (socket, receives from 64 KiB copied),
/// "device-unpack-records" (socket, no copies), "device-unpack-tcpx" (the TCPX emulator in its GPU
/// layout) or "own-kernel" (socket, tcpxr's unpack kernel).
const CHILD: &str = "TCPXR_GPU_HAZARD_CHILD";

// Before main: in a child, play its case and exit.
before_main! {
    run_child_case(CHILD, hazard_child);
}

#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_receives_complete_while_a_kernel_waiting_for_them_holds_the_only_hardware_queue_or_skipped() {
    if gpu_or_skip("gpu_receives_complete_while_a_kernel_waiting_for_them_holds_...").is_none() {
        return;
    }
    let run = |mode: &str| {
        let mut cmd = child_case(CHILD, mode);
        cmd.env("CUDA_DEVICE_MAX_CONNECTIONS", "1");
        cmd.env(
            "NCCL_TCPXR_GPU_COPY_BYTES",
            if mode == "device-unpack" { "65536" } else { "0" },
        );
        if mode.ends_with("tcpx") {
            // TCPX's layout: the emulator's pool in device memory, filled in a context of its own.
            cmd.env("NCCL_TCPXR_TRANSPORT", "tcpx")
                .env("NCCL_TCPXR_TCPX_LIB", build_emulator())
                .env("TCPX_EMU_MODE", "gpu");
        }
        let out = cmd.output().expect("start the child test process");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("--- {mode}, CUDA_DEVICE_MAX_CONNECTIONS=1:\n{text}");
        (out.status.success(), text)
    };
    for mode in ["device-unpack", "device-unpack-records", "device-unpack-tcpx"] {
        let (ok, text) = run(mode);
        assert!(ok && text.contains(&format!("RESULT {mode} held")), "{mode}:\n{text}");
    }
    let (_, text) = run("own-kernel");
    let line = text
        .lines()
        .find(|l| l.starts_with("RESULT own-kernel"))
        .unwrap_or("RESULT own-kernel: none");
    eprintln!("contrast, tcpxr's own unpack kernel: {line}");
}

/// One case, in a child process: `mode` as CHILD names it.
fn hazard_child(mode: &str) {
    let Some(_gpu) = gpu_or_skip("hazard_child") else {
        return;
    };
    let unpack = mode.starts_with("device-unpack");
    let net = v12();
    assert_eq!(net.init(), OK);
    let (send, recv, ring) = pair(&net, unpack);
    let cap = 4 << 20;
    let dst = DevBuf::new(cap);
    let mh = reg_cuda(&net, recv, dst.0, cap);
    // An inline-sized message, one chunk, several chunks over every stripe.
    let sizes = [8usize, 100_000, 3 << 20];
    let limit = Duration::from_secs(if unpack { 30 } else { 8 });
    let mut held_all = true;
    for (k, &n) in sizes.iter().enumerate() {
        let mut data = pattern(n, 40 + k as u64);
        // The application's kernel, started before the data is sent, waits for it (NCCL's kernel
        // waits for the step the proxy marks received).
        let mut spin = Spin::start(limit);
        let (mut rq, mut sq) = (null(), null());
        assert_eq!(net.irecv(recv, dst.0 as *mut c_void, cap, mh, &mut rq), OK);
        assert_eq!(
            net.isend(send, data.as_mut_ptr() as *mut c_void, n, null(), &mut sq),
            OK
        );
        let t0 = Instant::now();
        let (mut rdone, mut sdone, mut size) = (0, 0, 0);
        while rdone == 0 || sdone == 0 {
            if rdone == 0 {
                assert_eq!(net.test(rq, &mut rdone, &mut size), OK);
            }
            if sdone == 0 {
                let mut s = 0;
                assert_eq!(net.test(sq, &mut sdone, &mut s), OK);
            }
            assert!(
                t0.elapsed() < limit + Duration::from_secs(30),
                "the receive never completed"
            );
        }
        let took = t0.elapsed();
        // Still spinning when released: the receive completed while the kernel held the GPU.
        let held = spin.release();
        held_all &= held;
        drop(spin);
        assert_eq!(size as usize, n);
        if let Some(h) = &ring {
            let records = place_from_ring(h, k as u64, dst.0);
            // Over the socket with copies on, a receive of at least 64 KiB is already in place.
            let copied = mode == "device-unpack" && n >= 65536;
            assert_eq!(records == 0, copied, "message {k} ({n} bytes): {records} records");
            // SAFETY: tcpxr's table; its own comm and request.
            assert_eq!(unsafe { net.0.irecvConsumed.unwrap()(recv, 1, rq) }, OK);
        }
        let got = DevBuf(dst.0).download_forget(n);
        assert!(got == data, "message {k} ({n} bytes) arrived wrong");
        println!("message {k}: {n} bytes in {took:?}, kernel still holding the GPU: {held}");
    }
    println!(
        "RESULT {mode} {}",
        if held_all {
            "held: every receive completed while the kernel held the only hardware queue"
        } else {
            "deadlocked: a receive completed only after the kernel gave up"
        }
    );
    assert!(held_all || !unpack, "device unpack must not wait for the GPU");
    assert_eq!(net.dereg_mr(recv, mh), OK);
    assert_eq!(net.close_send(send), OK);
    assert_eq!(net.close_recv(recv), OK);
}

/// A connected pair; with `unpack` the receive side asks for NCCL's device unpack and its ring
/// handle is returned.
fn pair(net: &V12, unpack: bool) -> (*mut c_void, *mut c_void, Option<unpackNetDeviceHandle>) {
    let (s, r, dev) = unpack_pair(net, unpack);
    let ring = unpack.then(|| {
        let mut u = [0u8; std::mem::size_of::<unpackNetDeviceHandle>()];
        // SAFETY: the handle is device-readable memory of 24 bytes; a synchronous copy reads it.
        cu(
            unsafe { sys::cuMemcpyDtoH_v2(u.as_mut_ptr() as *mut c_void, dev as u64, u.len()) },
            "read the device handle",
        );
        // SAFETY: the bytes of an unpackNetDeviceHandle.
        unsafe { std::ptr::read_unaligned(u.as_ptr() as *const unpackNetDeviceHandle) }
    });
    (s, r, ring)
}
