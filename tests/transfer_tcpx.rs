//! tests/transfer.rs again, every scenario, with tcpxr driving the TCPX-ABI emulator
//! (tests/tcpx-emu) through NCCL_TCPXR_TRANSPORT=tcpx: the tcpx transport passes everything the
//! socket transport does. The last test checks the emulator's counters of the rules it enforces.
// The scenario file below brings its own copy of common; this one is for select_tcpx.
#[allow(clippy::duplicate_mod)]
mod common;
#[path = "transfer.rs"]
mod transfer;

use common::*;

// Before main: tcpxr reads its configuration once per process.
before_main! {
    select_tcpx(&[]);
}

#[test]
fn the_emulator_counts_no_broken_tcpx_rule() {
    let net = v12();
    let pair = Pair::new(&net);
    for (i, n) in [1usize, 70_000, 3 << 20, 9 << 20].into_iter().enumerate() {
        let mut data = pattern(n, 900 + i as u64);
        assert!(pair.transfer(&mut data, n) == data);
    }
    drop(pair);
    let comms = assert_tcpx_rules_kept(12);
    assert!(comms.iter().filter(|c| c.kind == "recv").count() >= 4, "{comms:?}");
}
