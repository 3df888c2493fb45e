//! Property, device-handle, comm-config and attribute structs of the net-plugin ABI (v5-v12).
//!
//! Field names and order follow NCCL's C headers (`net_vN.h`, `net_device.h`). C `size_t` is
//! `usize`, `float` is `f32`, `int16_t` is `i16`, and a C enum (`ncclNetDeviceType`) is `c_int`.

use std::os::raw::{c_char, c_int, c_void};

/// `ncclNetDeviceType`: the network offload type a device (or a connection) uses. A C enum, which
/// is `int`-sized on the targets NCCL supports.
pub type ncclNetDeviceType = c_int;
/// Plain host-driven networking: the proxy thread moves data, no device-side code.
pub const NCCL_NET_DEVICE_HOST: ncclNetDeviceType = 0;
/// Data lands in a bounce buffer and NCCL's device kernels unpack it (see `unpack.rs`).
pub const NCCL_NET_DEVICE_UNPACK: ncclNetDeviceType = 1;

/// `ncclNetProperties_v6_t`: device properties returned by `getProperties` of the v5 and v6 tables.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNetProperties_v6_t {
    /// Used mostly for logging.
    pub name: *mut c_char,
    /// Path to the PCI device in /sys.
    pub pciPath: *mut c_char,
    /// Unique identifier for the NIC chip.
    pub guid: u64,
    /// `NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF`.
    pub ptrSupport: c_int,
    /// Port speed in Mbps.
    pub speed: c_int,
    pub port: c_int,
    /// Network latency.
    pub latency: f32,
    /// Maximum number of comms the plugin can create.
    pub maxComms: c_int,
    /// Maximum number of grouped receives.
    pub maxRecvs: c_int,
}

/// The v5 properties have the same fields as v6.
pub type ncclNetProperties_v5_t = ncclNetProperties_v6_t;

/// `ncclNetProperties_v7_t`: v6 plus the network offload type and version.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNetProperties_v7_t {
    pub name: *mut c_char,
    pub pciPath: *mut c_char,
    pub guid: u64,
    pub ptrSupport: c_int,
    pub speed: c_int,
    pub port: c_int,
    pub latency: f32,
    pub maxComms: c_int,
    pub maxRecvs: c_int,
    pub netDeviceType: ncclNetDeviceType,
    pub netDeviceVersion: c_int,
}

/// `ncclNetProperties_v8_t`: v7 plus `regIsGlobal` (after `ptrSupport`).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNetProperties_v8_t {
    pub name: *mut c_char,
    pub pciPath: *mut c_char,
    pub guid: u64,
    pub ptrSupport: c_int,
    /// regMr is not tied to a particular comm.
    pub regIsGlobal: c_int,
    pub speed: c_int,
    pub port: c_int,
    pub latency: f32,
    pub maxComms: c_int,
    pub maxRecvs: c_int,
    pub netDeviceType: ncclNetDeviceType,
    pub netDeviceVersion: c_int,
}

/// `ncclNetVDeviceProps_v9_t`: the physical devices a virtual NIC merges (at most 4).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNetVDeviceProps_v9_t {
    pub ndevs: c_int,
    pub devs: [c_int; crate::abi::NCCL_NET_MAX_DEVS_PER_NIC_V11],
}

pub type ncclNetVDeviceProps_v10_t = ncclNetVDeviceProps_v9_t;
pub type ncclNetVDeviceProps_v11_t = ncclNetVDeviceProps_v9_t;

/// `ncclNetVDeviceProps_v12_t`: as v9-v11 but with room for 8 devices.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNetVDeviceProps_v12_t {
    pub ndevs: c_int,
    pub devs: [c_int; crate::abi::NCCL_NET_MAX_DEVS_PER_NIC_V12],
}

/// `ncclNetProperties_v9_t` (also v10): v8 plus `forceFlush`, `vProps` and the max transfer sizes.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNetProperties_v9_t {
    pub name: *mut c_char,
    pub pciPath: *mut c_char,
    pub guid: u64,
    pub ptrSupport: c_int,
    pub regIsGlobal: c_int,
    /// Force a flush on receives.
    pub forceFlush: c_int,
    pub speed: c_int,
    pub port: c_int,
    pub latency: f32,
    pub maxComms: c_int,
    pub maxRecvs: c_int,
    pub netDeviceType: ncclNetDeviceType,
    pub netDeviceVersion: c_int,
    pub vProps: ncclNetVDeviceProps_v9_t,
    /// Max transfer size for point-to-point operations.
    pub maxP2pBytes: usize,
    /// Max transfer size for collective operations.
    pub maxCollBytes: usize,
}

/// The v10 properties have the same layout as v9.
pub type ncclNetProperties_v10_t = ncclNetProperties_v9_t;

/// `ncclNetProperties_v11_t`: v10 plus `maxMultiRequestSize`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNetProperties_v11_t {
    pub name: *mut c_char,
    pub pciPath: *mut c_char,
    pub guid: u64,
    pub ptrSupport: c_int,
    pub regIsGlobal: c_int,
    pub forceFlush: c_int,
    pub speed: c_int,
    pub port: c_int,
    pub latency: f32,
    pub maxComms: c_int,
    pub maxRecvs: c_int,
    pub netDeviceType: ncclNetDeviceType,
    pub netDeviceVersion: c_int,
    pub vProps: ncclNetVDeviceProps_v11_t,
    pub maxP2pBytes: usize,
    pub maxCollBytes: usize,
    /// Maximum number of requests supported in a single multi-request.
    pub maxMultiRequestSize: c_int,
}

/// `ncclNetProperties_v12_t`: v11 with an 8-device `vProps`, plus `railId` and `planeId`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNetProperties_v12_t {
    pub name: *mut c_char,
    pub pciPath: *mut c_char,
    pub guid: u64,
    pub ptrSupport: c_int,
    pub regIsGlobal: c_int,
    pub forceFlush: c_int,
    pub speed: c_int,
    pub port: c_int,
    pub latency: f32,
    pub maxComms: c_int,
    pub maxRecvs: c_int,
    pub netDeviceType: ncclNetDeviceType,
    pub netDeviceVersion: c_int,
    pub vProps: ncclNetVDeviceProps_v12_t,
    pub maxP2pBytes: usize,
    pub maxCollBytes: usize,
    pub maxMultiRequestSize: c_int,
    /// Rail ID associated with the netdev (`NCCL_NET_ID_UNDEF` if unknown).
    pub railId: i16,
    /// Plane ID associated with the netdev (`NCCL_NET_ID_UNDEF` if unknown).
    pub planeId: i16,
}

/// `ncclNetDeviceHandle_v7_t`: the per-connection device offload handle that `connect`/`accept`
/// return through their `*DevComm` out-parameters (v7+). Unchanged through v12.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNetDeviceHandle_v7_t {
    /// Network offload type.
    pub netDeviceType: ncclNetDeviceType,
    /// Version number for network offload (`NCCL_NET_DEVICE_UNPACK_VERSION` for unpack).
    pub netDeviceVersion: c_int,
    /// Offload-specific handle; for unpack, an `unpackNetDeviceHandle`.
    pub handle: *mut c_void,
    /// Size of the object `handle` points to.
    pub size: usize,
    pub needsProxyProgress: c_int,
}

pub type ncclNetDeviceHandle_v8_t = ncclNetDeviceHandle_v7_t;
pub type ncclNetDeviceHandle_v9_t = ncclNetDeviceHandle_v7_t;
pub type ncclNetDeviceHandle_v10_t = ncclNetDeviceHandle_v7_t;
pub type ncclNetDeviceHandle_v11_t = ncclNetDeviceHandle_v7_t;
pub type ncclNetDeviceHandle_v12_t = ncclNetDeviceHandle_v7_t;

/// `ncclNetCommConfig_v10_t`: per-communicator config (v10 `connect`, v11+ `init`).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNetCommConfig_v10_t {
    /// Plugin-specific traffic class (`NCCL_NET_TRAFFIC_CLASS_UNDEF` = -1 if unset).
    pub trafficClass: c_int,
}

pub type ncclNetCommConfig_v11_t = ncclNetCommConfig_v10_t;
pub type ncclNetCommConfig_v12_t = ncclNetCommConfig_v10_t;

/// `ncclNetCommAttr_v11_t`: per-direction hints passed by `setNetAttr` (v11+). -1 means undefined.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ncclNetCommAttr_v11_t {
    pub maxConcurrentPeers: i32,
    pub minConcurrentPeers: i32,
    pub maxFlowsPerPeer: i32,
    pub minFlowsPerPeer: i32,
}

pub type ncclNetCommAttr_v12_t = ncclNetCommAttr_v11_t;

/// `ncclNetAttr_v11_t`: the argument of `setNetAttr` (v11+). `u32::MAX` (-1) means undefined.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ncclNetAttr_v11_t {
    pub sendCommAttr: ncclNetCommAttr_v11_t,
    pub recvCommAttr: ncclNetCommAttr_v11_t,
    pub op: u32,
    pub algo: u32,
    pub proto: u32,
}

pub type ncclNetAttr_v12_t = ncclNetAttr_v11_t;
