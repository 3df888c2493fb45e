//! tests/device_unpack.rs again, over the TCPX emulator (tests/tcpx-emu): every receive lands in
//! the emulator's bounce pool as scattered fragments, tcpxr copies each stripe's records into the
//! ring NCCL reads (moved by the chunk's place in the message, from one pool base), places nothing
//! itself, and gives the emulator's pages back (which poisons them) only at irecvConsumed. So a
//! byte placed by tcpxr, a record off by a chunk, or a page given back early is wrong data here.
#[allow(clippy::duplicate_mod)]
mod common;
#[path = "device_unpack.rs"]
mod device_unpack;

use common::*;

// Before main: tcpxr reads its configuration once per process.
before_main! {
    select_tcpx(&[]);
}

#[test]
fn the_emulator_counts_no_broken_tcpx_rule_under_device_unpack() {
    device_unpack::receives_are_placed_from_the_ring_slot_of_their_number_and_released_by_irecv_consumed();
    let comms = assert_tcpx_rules_kept(12);
    assert!(comms.iter().any(|c| c.kind == "recv"), "{comms:?}");
}
