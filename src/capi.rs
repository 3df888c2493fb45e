//! The C API for programs that link tcpxr directly instead of loading it through NCCL.
//! `include/tcpxr.h` is generated from this file (and the ABI types) by build.rs with cbindgen.
//!
//! Conventions: every function is safe to call from any thread; strings returned are static and
//! owned by tcpxr; the NCCL tables returned are the same statics NCCL would find with dlsym.
use crate::abi::{ncclNet_v12_t, ncclNet_v5_t};
use std::ffi::{c_char, c_int};

/// tcpxr's version as a static NUL-terminated string, e.g. "0.1.0".
#[no_mangle]
pub extern "C" fn tcpxr_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// tcpxr's version as major * 10000 + minor * 100 + patch.
#[no_mangle]
pub extern "C" fn tcpxr_version_code() -> c_int {
    let num = |s: &str| s.parse::<c_int>().unwrap_or(0);
    num(env!("CARGO_PKG_VERSION_MAJOR")) * 10000
        + num(env!("CARGO_PKG_VERSION_MINOR")) * 100
        + num(env!("CARGO_PKG_VERSION_PATCH"))
}

/// The newest NCCL table tcpxr exports (what NCCL 2.30+ loads).
///
/// GPU buffers: ask for NCCL's device unpack at accept (a device handle of type
/// NCCL_NET_DEVICE_UNPACK, version 7), place received pages from the ring it describes with your
/// own kernel, then call irecvConsumed. Without that request tcpxr places them with its own unpack
/// kernel on a stream of its own: never run it while a kernel that waits for the same data shares
/// its hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1, CUDA MPS), or both wait forever.
#[no_mangle]
pub extern "C" fn tcpxr_net_v12() -> *const ncclNet_v12_t {
    &crate::export::ncclNetPlugin_v12
}

/// The v5 table, for NCCL 2.12 - 2.25 era integrations.
#[no_mangle]
pub extern "C" fn tcpxr_net_v5() -> *const ncclNet_v5_t {
    &crate::export::ncclNetPlugin_v5
}
