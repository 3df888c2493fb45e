//! Windows on the tcpx transport: asked for 64 chunks in flight per stripe, tcpxr holds at most 12
//! sends and 16 receives per TCPX comm (a receive counts until it is consumed), and with 4 KiB
//! chunks it fills exactly that far. The emulator counts what was held and every request refused.
mod common;
use common::*;

before_main! {
    select_tcpx(&[
        ("NCCL_TCPXR_STRIPES", "4"),
        ("NCCL_TCPXR_CHUNK_BYTES", "4096"),
        // Host buffers: with GPU buffers on, init would raise 4 KiB chunks for device unpack
        // (settings::chunk_for_held_receives).
        ("NCCL_TCPXR_GPU_BUFFERS", "0"),
        ("NCCL_TCPXR_SEND_WINDOW", "64"),
        ("NCCL_TCPXR_RECV_WINDOW", "64"),
    ]);
}

#[test]
fn windows_are_capped_at_12_sends_and_16_receives_per_tcpx_stripe_and_the_emulator_never_refuses() {
    let net = v12();
    let pair = Pair::new(&net);
    for i in 0..3 {
        let n = (2 << 20) + i * 1000;
        let mut data = pattern(n, 80 + i as u64);
        assert!(pair.transfer(&mut data, n) == data);
    }
    // Eight messages in flight at once, tested newest first.
    let n = 1 << 20;
    let mut src: Vec<Vec<u8>> = (0..8).map(|i| pattern(n, 90 + i)).collect();
    let mut dst: Vec<Vec<u8>> = (0..8).map(|_| vec![0u8; n]).collect();
    let reqs: Vec<_> = dst
        .iter_mut()
        .zip(src.iter_mut())
        .map(|(d, s)| pair.post(d, s))
        .collect();
    for (rq, sq) in reqs.into_iter().rev() {
        wait_both(&net, rq, sq);
    }
    assert!(dst == src);
    drop(pair);
    let comms = assert_tcpx_rules_kept(12);
    assert!(
        comms.iter().any(|c| c.kind == "recv" && c.get("max_held") == 16),
        "receive windows fill to 16: {comms:?}"
    );
    assert!(
        comms.iter().any(|c| c.kind == "send" && c.get("max_held") == 12),
        "send windows fill to 12: {comms:?}"
    );
}
