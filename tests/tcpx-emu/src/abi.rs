//! The emulator's own `#[repr(C)]` copies of the NCCL v7 net ABI and unpack ABI it exports and
//! writes (reference/nccl-net-abi.md 1.7 and 4.1). Its own copies, not tcpxr's: the emulator is
//! what tcpxr is checked against, so it shares no code with it.
#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_char, c_int, c_ulong, c_void};

pub const NCCL_PTR_HOST: c_int = 1;
pub const NCCL_PTR_CUDA: c_int = 2;
pub const NCCL_NET_DEVICE_UNPACK: c_int = 1;
pub const NCCL_NET_DEVICE_UNPACK_VERSION: c_int = 7;
pub const HANDLE_BYTES: usize = 128;
/// Unpack queue depth: slots of the metadata ring, one per outstanding receive.
pub const QUEUE_DEPTH: usize = 16;
/// Records per ring slot (4 MiB / 4 KiB x 2).
pub const MAX_RECORDS: usize = 2048;
pub const PAGE: usize = 4096;

pub const LOG_WARN: c_int = 2;
pub const LOG_INFO: c_int = 3;
pub const NET: c_ulong = 16;
pub const ALL: c_ulong = !0;

pub type Logger = Option<unsafe extern "C" fn(c_int, c_ulong, *const c_char, c_int, *const c_char, ...)>;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Props {
    pub name: *mut c_char,
    pub pciPath: *mut c_char,
    pub guid: u64,
    pub ptrSupport: c_int,
    pub speed: c_int,
    pub port: c_int,
    pub latency: f32,
    pub maxComms: c_int,
    pub maxRecvs: c_int,
    pub netDeviceType: c_int,
    pub netDeviceVersion: c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct DevHandle {
    pub netDeviceType: c_int,
    pub netDeviceVersion: c_int,
    pub handle: *mut c_void,
    pub size: usize,
    pub needsProxyProgress: c_int,
}

#[repr(C, align(16))]
#[derive(Clone, Copy, Default, Debug)]
pub struct LoadMeta {
    pub src_off: u32,
    pub len: u32,
    pub dst_off: u64,
}

#[repr(C)]
pub struct UnpackMeta {
    pub mem: [[LoadMeta; MAX_RECORDS]; QUEUE_DEPTH],
    pub cnt: [u64; QUEUE_DEPTH],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct UnpackHandle {
    pub meta: *mut UnpackMeta,
    pub bounce_buf: *mut c_void,
    pub head: u64,
}

type Rc = c_int;

/// `ncclNet_v7_t`.
#[repr(C)]
pub struct NetV7 {
    pub name: *const c_char,
    pub init: unsafe extern "C" fn(Logger) -> Rc,
    pub devices: unsafe extern "C" fn(*mut c_int) -> Rc,
    pub getProperties: unsafe extern "C" fn(c_int, *mut Props) -> Rc,
    pub listen: unsafe extern "C" fn(c_int, *mut c_void, *mut *mut c_void) -> Rc,
    pub connect: unsafe extern "C" fn(c_int, *mut c_void, *mut *mut c_void, *mut *mut DevHandle) -> Rc,
    pub accept: unsafe extern "C" fn(*mut c_void, *mut *mut c_void, *mut *mut DevHandle) -> Rc,
    pub regMr: unsafe extern "C" fn(*mut c_void, *mut c_void, c_int, c_int, *mut *mut c_void) -> Rc,
    pub regMrDmaBuf:
        Option<unsafe extern "C" fn(*mut c_void, *mut c_void, usize, c_int, u64, c_int, *mut *mut c_void) -> Rc>,
    pub deregMr: unsafe extern "C" fn(*mut c_void, *mut c_void) -> Rc,
    pub isend: unsafe extern "C" fn(*mut c_void, *mut c_void, c_int, c_int, *mut c_void, *mut *mut c_void) -> Rc,
    pub irecv: unsafe extern "C" fn(
        *mut c_void,
        c_int,
        *mut *mut c_void,
        *mut c_int,
        *mut c_int,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> Rc,
    pub iflush: unsafe extern "C" fn(
        *mut c_void,
        c_int,
        *mut *mut c_void,
        *mut c_int,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> Rc,
    pub test: unsafe extern "C" fn(*mut c_void, *mut c_int, *mut c_int) -> Rc,
    pub closeSend: unsafe extern "C" fn(*mut c_void) -> Rc,
    pub closeRecv: unsafe extern "C" fn(*mut c_void) -> Rc,
    pub closeListen: unsafe extern "C" fn(*mut c_void) -> Rc,
    pub getDeviceMr: unsafe extern "C" fn(*mut c_void, *mut c_void, *mut *mut c_void) -> Rc,
    pub irecvConsumed: unsafe extern "C" fn(*mut c_void, c_int, *mut c_void) -> Rc,
}

// SAFETY: an immutable static of function pointers and a static name.
unsafe impl Sync for NetV7 {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_the_reference() {
        assert_eq!(size_of::<LoadMeta>(), 16);
        assert_eq!(size_of::<UnpackMeta>(), 524_416);
        assert_eq!(offset_of!(UnpackMeta, cnt), 16 * 2048 * 16);
        assert_eq!(size_of::<UnpackHandle>(), 24);
        assert_eq!(size_of::<DevHandle>(), 32);
        assert_eq!(offset_of!(DevHandle, handle), 8);
        assert_eq!(offset_of!(DevHandle, needsProxyProgress), 24);
        assert_eq!(size_of::<Props>(), 56);
        assert_eq!(offset_of!(Props, netDeviceType), 48);
        assert_eq!(size_of::<NetV7>(), 19 * 8);
        assert_eq!(offset_of!(NetV7, irecvConsumed), 18 * 8);
    }
}
