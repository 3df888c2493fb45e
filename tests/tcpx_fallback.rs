//! NCCL_TCPXR_TRANSPORT=auto with a TCPX library that loads but reports no device: tcpxr falls
//! back to its socket transport and leaves the process environment as the user left it. TCPX's
//! own setting (NCCL_DYNAMIC_CHUNK_SIZE, which tcpxr gives TCPX before its init) is unset again,
//! since nothing in the process uses it.
mod common;
use common::*;
use std::ffi::c_int;

/// A speed only the socket transport reports (it takes NCCL_TCPXR_SPEED_MBPS; TCPX's devices keep
/// their own), so the properties say which transport was chosen.
const SOCKET_SPEED: c_int = 12_345;

// Before main: tcpxr reads its configuration once per process.
before_main! {
    std::env::set_var("NCCL_TCPXR_TRANSPORT", "auto");
    std::env::set_var("NCCL_TCPXR_TCPX_LIB", emulator_path());
    // The emulator lists one device per name here: none.
    std::env::set_var("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", ",");
    std::env::set_var("NCCL_TCPXR_SPEED_MBPS", SOCKET_SPEED.to_string());
    std::env::remove_var("NCCL_DYNAMIC_CHUNK_SIZE");
}

#[test]
fn auto_falling_back_to_the_socket_leaves_no_tcpx_setting_in_the_environment() {
    build_emulator();
    let net = v12();
    assert_eq!(net.init(), OK);
    let (r, speed, _) = net.speed_and_ptr(0);
    assert_eq!(r, OK);
    assert_eq!(speed, SOCKET_SPEED, "the socket transport was chosen");
    expect_log("loads but reports no devices; NCCL_TCPXR_TRANSPORT=auto");
    assert_eq!(
        std::env::var("NCCL_DYNAMIC_CHUNK_SIZE").ok(),
        None,
        "set for TCPX's init, unset again when TCPX is not used"
    );
    // The fallback works.
    let pair = Pair::new(&net);
    let mut data = pattern(100_000, 5);
    assert!(pair.transfer(&mut data, 100_000) == data);
}
