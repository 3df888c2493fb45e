//! `#[repr(C)]` mirrors of NCCL's net-plugin ABI, versions v5 through v12, and of its tuner (v4-v6)
//! and RMA (v14) plugin tables.
//!
//! Names follow NCCL's C names so that a reader can put this file beside `net_vN.h`. Layouts are
//! checked against the sizes and offsets gcc gives NCCL's own headers on x86-64 by the tests in
//! `layout_tests.rs`.
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals)]

use std::os::raw::{c_char, c_int, c_ulong};

#[cfg(test)]
mod layout_tests;
mod net;
mod props;
mod rma;
mod tuner;
mod unpack;

pub use net::*;
pub use props::*;
pub use rma::*;
pub use tuner::*;
pub use unpack::*;

/// NCCL's result codes (`ncclResult_t`): a C enum, so any `int` a foreign library returns (the
/// TCPX plugin's table has this type too) is a valid value here; the named ones are constants.
#[repr(transparent)]
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct ncclResult_t(pub c_int);

impl ncclResult_t {
    pub const ncclSuccess: ncclResult_t = ncclResult_t(0);
    pub const ncclUnhandledCudaError: ncclResult_t = ncclResult_t(1);
    pub const ncclSystemError: ncclResult_t = ncclResult_t(2);
    pub const ncclInternalError: ncclResult_t = ncclResult_t(3);
    pub const ncclInvalidArgument: ncclResult_t = ncclResult_t(4);
    pub const ncclInvalidUsage: ncclResult_t = ncclResult_t(5);
    pub const ncclRemoteError: ncclResult_t = ncclResult_t(6);
    pub const ncclInProgress: ncclResult_t = ncclResult_t(7);

    /// NCCL's name of the code, or None for a value NCCL does not define.
    pub fn name(self) -> Option<&'static str> {
        const NAMES: [&str; 8] = [
            "ncclSuccess",
            "ncclUnhandledCudaError",
            "ncclSystemError",
            "ncclInternalError",
            "ncclInvalidArgument",
            "ncclInvalidUsage",
            "ncclRemoteError",
            "ncclInProgress",
        ];
        usize::try_from(self.0).ok().and_then(|i| NAMES.get(i).copied())
    }
}

impl std::fmt::Debug for ncclResult_t {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "ncclResult_t({})", self.0),
        }
    }
}

pub const NCCL_NET_HANDLE_MAXSIZE: usize = 128;
pub const NCCL_PTR_HOST: c_int = 0x1;
pub const NCCL_PTR_CUDA: c_int = 0x2;
pub const NCCL_PTR_DMABUF: c_int = 0x4;
/// Requests NCCL may keep outstanding per comm: 8 for the v5/v6 tables, 32 from v7 on.
pub const NCCL_NET_MAX_REQUESTS_V6: usize = 8;
pub const NCCL_NET_MAX_REQUESTS: usize = 32;
/// `*request` value NCCL may preset before irecv (v11+) for LL/LL128 receives.
pub const NCCL_NET_OPTIONAL_RECV_COMPLETION: usize = 0x1;
/// Largest size the v6-v8 compat layers let through, and what tcpxr reports as maxP2pBytes.
pub const MAX_NET_SIZE: usize = 1 << 30;
pub const NCCL_NET_MAX_DEVS_PER_NIC_V11: usize = 4;
pub const NCCL_NET_MAX_DEVS_PER_NIC_V12: usize = 8;
pub const NCCL_NET_ID_UNDEF: i16 = -1;
pub const NCCL_NET_DEVICE_INVALID_VERSION: c_int = 0;
pub const NCCL_NET_DEVICE_UNPACK_VERSION: c_int = 0x7;

/// `ncclDebugLogLevel`
pub const NCCL_LOG_NONE: c_int = 0;
pub const NCCL_LOG_VERSION: c_int = 1;
pub const NCCL_LOG_WARN: c_int = 2;
pub const NCCL_LOG_INFO: c_int = 3;
pub const NCCL_LOG_ABORT: c_int = 4;
pub const NCCL_LOG_TRACE: c_int = 5;

/// `ncclDebugLogSubSys` flags.
pub const NCCL_INIT: c_ulong = 1;
pub const NCCL_ENV: c_ulong = 128;
pub const NCCL_NET: c_ulong = 16;
pub const NCCL_ALL: c_ulong = !0;

/// `ncclDebugLogger_t`: a C variadic function. tcpxr always calls it with the format "%s".
pub type ncclDebugLogger_t = Option<
    unsafe extern "C" fn(level: c_int, flags: c_ulong, file: *const c_char, line: c_int, fmt: *const c_char, ...),
>;

/// `ncclProfilerCallback_t` (v10+): tcpxr reports its events through it (engine/profile.rs).
pub type ncclProfilerCallback_t = Option<
    unsafe extern "C" fn(
        eHandle: *mut *mut std::ffi::c_void,
        type_: c_int,
        phandle: *mut std::ffi::c_void,
        pluginId: i64,
        extData: *mut std::ffi::c_void,
    ) -> ncclResult_t,
>;
