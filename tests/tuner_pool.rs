//! The tuner's pool cap (src/tuner/rules.rs `POOL_CHANNELS`) as NCCL meets it: host buffers over the
//! socket transport in a process whose I/O pool has 2 threads. Until the pool is fixed (the first
//! listen or connect) the tuner leaves bulk to NCCL; from then on, for a communicator made before
//! or after, every collective runs on at most 2 channels where NCCL keeps that many, and the
//! rows' smaller counts and NCCL's own for small messages stand.
mod common;
use common::tuner::*;
use common::*;
use std::ffi::c_void;

#[test]
fn a_two_thread_pool_caps_every_collective_at_two_channels_once_the_pool_is_fixed() {
    // Read once, at the first init in this process (this binary has no other test).
    set_env(&[("NCCL_TCPXR_IO_THREADS", "2")]);
    let (net, early) = net_then_tuner(2, 2);
    // Before any connection the pool is not fixed: bulk is NCCL's, below bulk the 4 of the rows.
    assert_eq!(early.choice(1 << 30), (RING_LL, 0));
    assert_eq!(early.choice(4 << 20), (RING_LL, 4));

    let mut handle = [0u8; 128];
    let mut listen: *mut c_void = std::ptr::null_mut();
    assert_eq!(net.listen(0, &mut handle, &mut listen), OK);

    // The communicator opened before learns the cap at its next collective; a new one has it.
    for tuner in [&early, &TunerV5::open(2, 2)] {
        assert_eq!(tuner.choice(1 << 30), (RING_LL, 2), "bulk");
        assert_eq!(tuner.choice(64 << 20), (RING_LL, 2), "a 32 MiB share");
        assert_eq!(tuner.choice(4 << 20), (RING_LL, 2), "below bulk: the rows' 4, capped");
        assert_eq!(tuner.choice(1 << 20), (RING_SIMPLE, 2), "the band's 2-channel row");
        assert_eq!(tuner.choice(256 << 10), (RING_SIMPLE, 1), "the band's 1-channel row");
        assert_eq!(tuner.choice(8), (RING_LL, 0), "NCCL's own count for a small message");
    }
    // One node: no network, no tuner.
    assert_eq!(v5_choice(2, 1, 1 << 30), (RING_LL, 0));
    assert_eq!(net.close_listen(listen), OK);
}
