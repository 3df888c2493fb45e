//! Receives into GPU memory under NCCL's device unpack over the socket, where the copy engine
//! puts every receive of at least `NCCL_TCPXR_GPU_COPY_BYTES` (set to 64 KiB, auto's value on
//! point-to-point connections: this pair has no NCCL hints) in place before test() reports it
//! done, and only smaller ones publish records (engine/copy_in.rs). The
//! test plays NCCL: a full ring of 16 receives posted at once, sizes on both sides of the
//! threshold and smaller than posted, tested newest first (so a receive's copy may be due while an
//! older one still arrives), then the records there are placed as NCCL's kernel would, every byte
//! checked in GPU memory, and the receives consumed in order; three rounds reuse every ring slot
//! and its event. `#[ignore]`d: it runs with `--include-ignored` on a GPU host (SKIPPED without
//! CUDA; TCPXR_REQUIRE_GPU=1 makes that a failure).
mod common;

use common::gpu::{gpu_or_skip, place_from_ring, read_ring, DevBuf};
use common::*;
use nccl_net_tcpxr::abi::*;
use std::ffi::c_void;
use std::time::Instant;

#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn large_gpu_receives_are_copied_into_place_and_small_ones_keep_records_or_skipped() {
    let Some(_gpu) = gpu_or_skip("large_gpu_receives_are_copied_into_place_and_small_ones_...") else {
        return;
    };
    // SAFETY: the only test of this binary, before the library is initialised: no other thread
    // reads the environment.
    unsafe { std::env::set_var("NCCL_TCPXR_GPU_COPY_BYTES", "65536") };
    let net = v12();
    let (send, recv, dev) = unpack_pair(&net, true);
    let ring = read_ring(dev);
    const SLOTS: usize = 16;
    const CAP: usize = 1 << 20;
    let dst = DevBuf::new(SLOTS * CAP);
    let mut mh = null();
    // SAFETY: tcpxr's table; device memory of SLOTS * CAP bytes; a live out-pointer.
    let r = unsafe { net.0.regMr.unwrap()(recv, dst.0 as *mut c_void, SLOTS * CAP, NCCL_PTR_CUDA, &mut mh) };
    assert_eq!(r, OK);
    let sizes = [
        8usize,
        65_535,
        65_536,
        CAP,
        100_000,
        4096,
        CAP - 1,
        0,
        300_001,
        16_384,
        524_288,
        70_000,
        1,
        CAP / 2 + 3,
        65_537,
        200_000,
    ];
    let mut copied = 0;
    for round in 0..3u64 {
        let mut data: Vec<Vec<u8>> = (0..SLOTS)
            .map(|i| pattern(sizes[(i + round as usize) % SLOTS], round * 100 + i as u64))
            .collect();
        let mut rqs = vec![];
        for i in 0..SLOTS {
            let mut rq = null();
            let at = dst.0 + (i * CAP) as u64;
            assert_eq!(net.irecv(recv, at as *mut c_void, CAP, mh, &mut rq), OK);
            assert!(!rq.is_null(), "round {round}: receive {i} refused");
            rqs.push(rq);
        }
        let mut sqs = vec![];
        for d in data.iter_mut() {
            let mut sq = null();
            assert_eq!(
                net.isend(send, d.as_mut_ptr() as *mut c_void, d.len(), null(), &mut sq),
                OK
            );
            assert!(!sq.is_null());
            sqs.push(sq);
        }
        let start = Instant::now();
        let mut got = vec![None; SLOTS];
        while got.iter().any(Option::is_none) {
            for i in (0..SLOTS).rev() {
                if got[i].is_none() {
                    let (mut done, mut size) = (0, 0);
                    assert_eq!(net.test(rqs[i], &mut done, &mut size), OK);
                    if done != 0 {
                        got[i] = Some(size as usize);
                    }
                }
            }
            for sq in sqs.iter_mut().filter(|q| !q.is_null()) {
                let (mut done, mut size) = (0, 0);
                assert_eq!(net.test(*sq, &mut done, &mut size), OK);
                if done != 0 {
                    *sq = null();
                }
            }
            assert!(
                start.elapsed() < DEADLINE,
                "round {round}: receives never completed: {got:?}"
            );
        }
        while sqs.iter().any(|q| !q.is_null()) {
            for sq in sqs.iter_mut().filter(|q| !q.is_null()) {
                let (mut done, mut size) = (0, 0);
                assert_eq!(net.test(*sq, &mut done, &mut size), OK);
                if done != 0 {
                    *sq = null();
                }
            }
            assert!(start.elapsed() < DEADLINE, "round {round}: sends never completed");
        }
        for i in 0..SLOTS {
            let n = data[i].len();
            assert_eq!(got[i], Some(n), "round {round}: receive {i}'s size");
            let at = dst.0 + (i * CAP) as u64;
            // The n-th receive of the comm uses ring slot n % 16: here, receive i of every round.
            let records = place_from_ring(&ring, round * SLOTS as u64 + i as u64, at);
            assert_eq!(
                records == 0,
                n >= 65_536 || n == 0,
                "round {round}: receive {i} of {n} bytes published {records} records"
            );
            copied += usize::from(n >= 65_536);
            let back = DevBuf(at).download_forget(n);
            assert!(back == data[i], "round {round}: receive {i} ({n} bytes) arrived wrong");
            // SAFETY: tcpxr's table; its own comm and a completed request, in order.
            assert_eq!(unsafe { net.0.irecvConsumed.unwrap()(recv, 1, rqs[i]) }, OK);
        }
    }
    assert_eq!(copied, 3 * 10, "ten sizes of every round are copied");
    assert_eq!(net.dereg_mr(recv, mh), OK);
    assert_eq!(net.close_send(send), OK);
    assert_eq!(net.close_recv(recv), OK);
}
