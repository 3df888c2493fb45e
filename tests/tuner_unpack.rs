//! The tuner's row for GPU buffers over the socket (src/tuner/rules.rs `When::KernelUnpacksHostPages`)
//! as NCCL meets it: NCCL connects after the tuner's init, so a communicator learns at its next
//! collective that NCCL's kernel places this process's collective receives from host memory
//! (a receive comm accepted with NCCL's device unpack and no copies), and from then on runs
//! shares of 4-32 MiB on all the channels tcpxr has NCCL build instead of 4.
mod common;
use common::tuner::*;
use common::*;

#[test]
fn a_receive_comm_with_nccls_device_unpack_lifts_the_four_channel_cap_from_4_mib_shares() {
    // Read once, at the first init in this process (this binary has no other test). A pool of one
    // thread on any host: a 2-thread pool's own cap (tuner_pool.rs) applies where GPU buffers are
    // not offered, as on a host without CUDA, and would hide the rows. INFO: the line below.
    set_env(&[("NCCL_TCPXR_IO_THREADS", "1"), ("TCPXR_LOG", "info")]);
    let (net, early) = net_then_tuner(2, 2);
    // Host buffers so far: below bulk the 4 channels of the rows.
    assert_eq!(early.choice(8 << 20), (RING_LL, 4));
    assert_eq!(early.choice((64 << 20) - 4), (RING_LL, 4));

    // A collective's connection (no point-to-point hint: no copies at auto) with device unpack.
    let (send, recv, _) = unpack_pair(&net, true);
    expect_log("NCCL's kernel places this process's collective receives from host memory");

    for tuner in [&early, &TunerV5::open(2, 2)] {
        assert_eq!(tuner.choice(8 << 20), (RING_LL, 0), "a 4 MiB share: NCCL's 8");
        assert_eq!(tuner.choice((64 << 20) - 4), (RING_LL, 0), "just under a 32 MiB share");
        assert_eq!(
            tuner.choice((8 << 20) - 4),
            (RING_LL, 4),
            "under a 4 MiB share: still 4"
        );
        assert_eq!(tuner.choice(1 << 20), (RING_SIMPLE, 2), "the band's 2-channel row");
        assert_eq!(tuner.choice(1 << 30), (RING_LL, 0), "bulk");
        assert_eq!(tuner.choice(8), (RING_LL, 0), "NCCL's own count for a small message");
    }
    assert_eq!(net.close_send(send), OK);
    assert_eq!(net.close_recv(recv), OK);
}
