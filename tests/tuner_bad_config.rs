//! A bad NCCL_TCPXR_* value fails tcpxr's net init, and NCCL goes on with another net; NCCL still
//! loads the tuner from the library it keeps open, and a tuner whose init failed would fail the
//! whole communicator. The tuner comes up idle instead and leaves every choice to NCCL. Its own
//! test binary: tcpxr reads its configuration once per process.
mod common;
use common::tuner::*;
use common::*;
use nccl_net_tcpxr::abi::ncclResult_t;

before_main! {
    set_env(&[("NCCL_TCPXR_STRIPES", "0")]);
}

#[test]
fn a_refused_configuration_leaves_the_tuner_idle_instead_of_failing_the_communicator() {
    let net = v12();
    assert_eq!(net.init(), ncclResult_t::ncclInvalidArgument);
    expect_log("NCCL_TCPXR_STRIPES");
    // As NCCL calls it on two nodes, where tcpxr's tuner would otherwise act at 1 MiB: init
    // succeeds (TunerV5::open asserts it) and NCCL's choice stands, its channels unset.
    assert_eq!(v5_choice(2, 2, 1 << 20), (RING_LL, 0));
    assert_eq!(v5_choice(2, 2, 8), (RING_LL, 0));
}
