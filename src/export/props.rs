//! getProperties for every table version: one full (v12) description of a device, projected onto
//! each older layout.
use super::guard::{ffi_fn, non_null};
use crate::abi::*;
use crate::plugin;
use std::ffi::c_int;

/// NCCL would otherwise cap the channels using one NIC at this; tcpxr has no per-comm limit.
const MAX_COMMS: c_int = 65536;

fn describe(dev: c_int) -> crate::error::Result<ncclNetProperties_v12_t> {
    let (p, d) = plugin::device_properties(dev)?;
    // A physical device is made of itself; NCCL numbers physical devices as the transport does.
    let mut devs = [0; NCCL_NET_MAX_DEVS_PER_NIC_V12];
    for (slot, &m) in devs.iter_mut().zip(&d.members) {
        *slot = m as c_int;
    }
    Ok(ncclNetProperties_v12_t {
        // NCCL only reads these strings; they live as long as the plugin.
        name: d.name.as_ptr() as *mut _,
        pciPath: d
            .pci_path
            .as_ref()
            .map_or(std::ptr::null_mut(), |s| s.as_ptr() as *mut _),
        guid: d.guid,
        ptrSupport: d.ptr_support,
        regIsGlobal: 0,
        forceFlush: 0,
        speed: d.speed_mbps,
        port: 0,
        latency: 0.0,
        maxComms: MAX_COMMS,
        maxRecvs: 1,
        // With GPU buffers on the v7+ tables, NCCL's kernel places received pages (ring.rs).
        netDeviceType: if p.device_unpack {
            NCCL_NET_DEVICE_UNPACK
        } else {
            NCCL_NET_DEVICE_HOST
        },
        netDeviceVersion: if p.device_unpack {
            NCCL_NET_DEVICE_UNPACK_VERSION
        } else {
            NCCL_NET_DEVICE_INVALID_VERSION
        },
        vProps: ncclNetVDeviceProps_v12_t {
            ndevs: d.members.len() as c_int,
            devs,
        },
        maxP2pBytes: MAX_NET_SIZE,
        maxCollBytes: MAX_NET_SIZE,
        maxMultiRequestSize: 1,
        railId: d.rail.unwrap_or(NCCL_NET_ID_UNDEF),
        planeId: d.plane.unwrap_or(NCCL_NET_ID_UNDEF),
    })
}

fn v11_of(p: &ncclNetProperties_v12_t) -> ncclNetProperties_v11_t {
    let mut devs = [0; NCCL_NET_MAX_DEVS_PER_NIC_V11];
    devs.copy_from_slice(&p.vProps.devs[..NCCL_NET_MAX_DEVS_PER_NIC_V11]);
    ncclNetProperties_v11_t {
        name: p.name,
        pciPath: p.pciPath,
        guid: p.guid,
        ptrSupport: p.ptrSupport,
        regIsGlobal: p.regIsGlobal,
        forceFlush: p.forceFlush,
        speed: p.speed,
        port: p.port,
        latency: p.latency,
        maxComms: p.maxComms,
        maxRecvs: p.maxRecvs,
        netDeviceType: p.netDeviceType,
        netDeviceVersion: p.netDeviceVersion,
        vProps: ncclNetVDeviceProps_v11_t {
            ndevs: p.vProps.ndevs.min(NCCL_NET_MAX_DEVS_PER_NIC_V11 as c_int),
            devs,
        },
        maxP2pBytes: p.maxP2pBytes,
        maxCollBytes: p.maxCollBytes,
        maxMultiRequestSize: p.maxMultiRequestSize,
    }
}

fn v9_of(p: &ncclNetProperties_v12_t) -> ncclNetProperties_v9_t {
    let q = v11_of(p);
    ncclNetProperties_v9_t {
        name: q.name,
        pciPath: q.pciPath,
        guid: q.guid,
        ptrSupport: q.ptrSupport,
        regIsGlobal: q.regIsGlobal,
        forceFlush: q.forceFlush,
        speed: q.speed,
        port: q.port,
        latency: q.latency,
        maxComms: q.maxComms,
        maxRecvs: q.maxRecvs,
        netDeviceType: q.netDeviceType,
        netDeviceVersion: q.netDeviceVersion,
        vProps: q.vProps,
        maxP2pBytes: q.maxP2pBytes,
        maxCollBytes: q.maxCollBytes,
    }
}

fn v8_of(p: &ncclNetProperties_v12_t) -> ncclNetProperties_v8_t {
    ncclNetProperties_v8_t {
        name: p.name,
        pciPath: p.pciPath,
        guid: p.guid,
        ptrSupport: p.ptrSupport,
        regIsGlobal: p.regIsGlobal,
        speed: p.speed,
        port: p.port,
        latency: p.latency,
        maxComms: p.maxComms,
        maxRecvs: p.maxRecvs,
        netDeviceType: p.netDeviceType,
        netDeviceVersion: p.netDeviceVersion,
    }
}

fn v7_of(p: &ncclNetProperties_v12_t) -> ncclNetProperties_v7_t {
    ncclNetProperties_v7_t {
        name: p.name,
        pciPath: p.pciPath,
        guid: p.guid,
        ptrSupport: p.ptrSupport,
        speed: p.speed,
        port: p.port,
        latency: p.latency,
        maxComms: p.maxComms,
        maxRecvs: p.maxRecvs,
        netDeviceType: p.netDeviceType,
        netDeviceVersion: p.netDeviceVersion,
    }
}

fn v6_of(p: &ncclNetProperties_v12_t) -> ncclNetProperties_v6_t {
    ncclNetProperties_v6_t {
        name: p.name,
        pciPath: p.pciPath,
        guid: p.guid,
        ptrSupport: p.ptrSupport,
        speed: p.speed,
        port: p.port,
        latency: p.latency,
        maxComms: p.maxComms,
        maxRecvs: p.maxRecvs,
    }
}

/// One `getProperties` per layout: the full description of the device, projected onto the
/// layout by `$of`.
macro_rules! get_properties {
    ($($name:ident: $layout:ty = $of:expr;)*) => {$(
        ffi_fn! {
            "getProperties" fn $name(dev: c_int, props: *mut $layout) {
                non_null!(props, "getProperties: props");
                let p = $of(&describe(dev)?);
                // SAFETY: NCCL passes room for one properties struct of this version (checked
                // non-NULL).
                unsafe { *props = p };
                Ok(())
            }
        }
    )*};
}

get_properties! {
    get_properties_v12: ncclNetProperties_v12_t = |p: &ncclNetProperties_v12_t| *p;
    get_properties_v11: ncclNetProperties_v11_t = v11_of;
    get_properties_v9: ncclNetProperties_v9_t = v9_of;
    get_properties_v8: ncclNetProperties_v8_t = v8_of;
    get_properties_v7: ncclNetProperties_v7_t = v7_of;
    get_properties_v6: ncclNetProperties_v6_t = v6_of;
}
