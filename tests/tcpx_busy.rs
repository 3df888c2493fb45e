//! "unable to allocate requests" (TCPX's result 3 when its slots are taken) is busy: tcpxr
//! retries and NCCL never sees it. The emulator is given only 4 slots per comm here, fewer than
//! tcpxr's windows, so it refuses often.
mod common;
use common::*;

before_main! {
    select_tcpx(&[
        ("TCPX_EMU_SLOTS", "4"),
        ("NCCL_TCPXR_STRIPES", "2"),
        ("NCCL_TCPXR_CHUNK_BYTES", "4096"),
        // Host buffers: with GPU buffers on, init would raise 4 KiB chunks for device unpack
        // (settings::chunk_for_held_receives).
        ("NCCL_TCPXR_GPU_BUFFERS", "0"),
    ]);
}

#[test]
fn unable_to_allocate_requests_is_retried_and_never_reaches_nccl() {
    let net = v12();
    let pair = Pair::new(&net);
    for i in 0..3 {
        let n = (1 << 20) + i * 7;
        let mut data = pattern(n, 100 + i as u64);
        assert!(pair.transfer(&mut data, n) == data);
    }
    let n = 256 << 10;
    let mut src: Vec<Vec<u8>> = (0..6).map(|i| pattern(n, 110 + i)).collect();
    let mut dst: Vec<Vec<u8>> = (0..6).map(|_| vec![0u8; n]).collect();
    let reqs: Vec<_> = dst
        .iter_mut()
        .zip(src.iter_mut())
        .map(|(d, s)| pair.post(d, s))
        .collect();
    for (rq, sq) in reqs.into_iter() {
        wait_both(&net, rq, sq);
    }
    assert!(dst == src);
    drop(pair);
    let comms = emulator_stats();
    assert!(
        comms.iter().any(|c| c.get("refused") > 0),
        "the emulator refused: {comms:?}"
    );
    for c in &comms {
        assert!(c.get("max_held") <= 4, "{c:?}");
        assert_eq!((c.get("bad_tests"), c.get("bad_consumes")), (0, 0), "{c:?}");
    }
    // tcpxr says it retries (once per stripe: later refusals are only counted), after the
    // emulator's own line; how many stripes were refused depends on timing.
    expect_log("treating it as 'unable to allocate requests' and retrying");
    nccl_net_tcpxr::testlog::allow("unable to allocate requests");
}
