//! tests/faults.rs again, every scenario, with tcpxr (and the peer processes it starts) driving
//! the TCPX-ABI emulator through NCCL_TCPXR_TRANSPORT=tcpx.
// The scenario file below brings its own copy of common; this one is for select_tcpx.
#[allow(clippy::duplicate_mod)]
mod common;
#[path = "faults.rs"]
mod faults;

// Before main: tcpxr reads its configuration once per process; child processes inherit it.
common::before_main! {
    common::select_tcpx(&[]);
}
