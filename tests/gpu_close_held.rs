//! Closing comms while a kernel holds the GPU must not wait for that kernel. Freeing pinned host
//! memory made by `cuMemHostAlloc`, or unregistering host memory, waits until every kernel
//! running on the device has ended (run 400), so a comm that gave its memory back that way
//! waited for any kernel of the process: another communicator's, or an application kernel that
//! waits for the closing thread's next step, forever. tcpxr's pinned memory is VMM host pages
//! where the driver makes them (gpu/host.rs), given back without waiting.
//!
//! The test makes every kind of pinned memory a comm holds (a receive comm with NCCL's device
//! unpack: its bounce section and ring; one with tcpxr's own unpack: its stage and bounce slots;
//! a send comm sending from GPU memory: its staging), starts a kernel that spins until released,
//! closes everything, and only then releases it: the kernel must still be spinning.
//! `#[ignore]`d: it runs with `--include-ignored`, and without a CUDA driver says SKIPPED
//! (TCPXR_REQUIRE_GPU=1 makes it fail).
mod common;

use common::gpu::{gpu_or_skip, place_from_ring, read_ring, reg_cuda, DevBuf};
use common::spin::Spin;
use common::*;
use std::ffi::c_void;
use std::time::{Duration, Instant};

/// A message of several chunks on every stripe.
const SIZE: usize = 3 << 20;

/// One message from `src` (registered as `smh`) to `dst` (as `rmh`), waited for.
fn transfer(
    net: &V12,
    send: *mut c_void,
    recv: *mut c_void,
    src: (*mut c_void, *mut c_void),
    dst: (u64, *mut c_void),
) -> *mut c_void {
    let (mut rq, mut sq) = (null(), null());
    assert_eq!(net.irecv(recv, dst.0 as *mut c_void, SIZE, dst.1, &mut rq), OK);
    assert_eq!(net.isend(send, src.0, SIZE, src.1, &mut sq), OK);
    let (r, s) = wait_both(net, rq, sq);
    assert_eq!((r, s), (SIZE as i32, SIZE as i32), "the message arrived whole");
    rq
}

#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_comms_close_while_a_kernel_holds_the_gpu_without_waiting_for_it() {
    let Some(_gpu) = gpu_or_skip("gpu_comms_close_while_a_kernel_holds_the_gpu_without_waiting_for_it") else {
        return;
    };
    let net = v12();
    assert_eq!(net.init(), OK);
    let mut host_src = pattern(SIZE, 7);
    let dst = DevBuf::new(SIZE);
    let gpu_src = DevBuf::new(SIZE);
    gpu_src.upload_done(&host_src);

    // NCCL's device unpack: the receive lands in the comm's bounce section, the ring says where.
    let (s1, r1, dev) = unpack_pair(&net, true);
    let r1mh = reg_cuda(&net, r1, dst.0, SIZE);
    let rq = transfer(
        &net,
        s1,
        r1,
        (host_src.as_mut_ptr() as *mut c_void, null()),
        (dst.0, r1mh),
    );
    place_from_ring(&read_ring(dev), 0, dst.0);
    // SAFETY: tcpxr's table; its own comm and the completed request.
    assert_eq!(unsafe { net.0.irecvConsumed.unwrap()(r1, 1, rq) }, OK);
    assert!(
        DevBuf(dst.0).download_forget(SIZE) == host_src,
        "device unpack: the bytes"
    );

    // tcpxr's own unpack, from GPU memory: stage and bounce slots on the receive side, staging on
    // the send side.
    let (s2, r2, _) = unpack_pair(&net, false);
    let r2mh = reg_cuda(&net, r2, dst.0, SIZE);
    let s2mh = reg_cuda(&net, s2, gpu_src.0, SIZE);
    transfer(&net, s2, r2, (gpu_src.0 as *mut c_void, s2mh), (dst.0, r2mh));
    assert!(DevBuf(dst.0).download_forget(SIZE) == host_src, "own unpack: the bytes");

    let limit = Duration::from_secs(20);
    let mut spin = Spin::start(limit);
    let t0 = Instant::now();
    assert_eq!(net.dereg_mr(r1, r1mh), OK);
    assert_eq!(net.close_send(s1), OK);
    assert_eq!(net.close_recv(r1), OK);
    assert_eq!(net.dereg_mr(r2, r2mh), OK);
    assert_eq!(net.dereg_mr(s2, s2mh), OK);
    assert_eq!(net.close_send(s2), OK);
    assert_eq!(net.close_recv(r2), OK);
    let took = t0.elapsed();
    let held = spin.release();
    println!("closing took {took:?}; the kernel was still spinning when released: {held}");
    assert!(
        held && took < Duration::from_secs(5),
        "closing the comms took {took:?} and waited for the kernel that held the GPU ({limit:?} at most)"
    );
}
