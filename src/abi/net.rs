//! The net-plugin function tables `ncclNet_v5_t` .. `ncclNet_v12_t`.
//!
//! Field order and signatures follow NCCL's `net_vN.h`. Every function slot is an
//! `Option<unsafe extern "C" fn>` so that a null slot is representable; C `size_t` is `usize`,
//! `int` is `c_int`, and the C parameter `type` is spelled `type_`.

use std::os::raw::{c_char, c_int, c_void};

use super::props::*;
use crate::abi::{ncclDebugLogger_t, ncclProfilerCallback_t, ncclResult_t};

/// The v5 table (`ncclNetPlugin_v5`), the oldest tcpxr mirrors.
///
/// Probed by NCCL 2.12.x (from 2.12.7) through 2.25.1. NCCL 2.26.2 dropped it: no later release
/// loads it.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNet_v5_t {
    /// Name of the network (mainly for logs): a static NUL-terminated C string.
    pub name: *const c_char,
    pub init: Option<unsafe extern "C" fn(logFunction: ncclDebugLogger_t) -> ncclResult_t>,
    pub devices: Option<unsafe extern "C" fn(ndev: *mut c_int) -> ncclResult_t>,
    pub getProperties: Option<unsafe extern "C" fn(dev: c_int, props: *mut ncclNetProperties_v5_t) -> ncclResult_t>,
    pub listen:
        Option<unsafe extern "C" fn(dev: c_int, handle: *mut c_void, listenComm: *mut *mut c_void) -> ncclResult_t>,
    pub connect:
        Option<unsafe extern "C" fn(dev: c_int, handle: *mut c_void, sendComm: *mut *mut c_void) -> ncclResult_t>,
    pub accept: Option<unsafe extern "C" fn(listenComm: *mut c_void, recvComm: *mut *mut c_void) -> ncclResult_t>,
    pub regMr: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: c_int,
            type_: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub deregMr: Option<unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void) -> ncclResult_t>,
    pub isend: Option<
        unsafe extern "C" fn(
            sendComm: *mut c_void,
            data: *mut c_void,
            size: c_int,
            tag: c_int,
            mhandle: *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub irecv: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut c_int,
            tags: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub iflush: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub test: Option<unsafe extern "C" fn(request: *mut c_void, done: *mut c_int, sizes: *mut c_int) -> ncclResult_t>,
    pub closeSend: Option<unsafe extern "C" fn(sendComm: *mut c_void) -> ncclResult_t>,
    pub closeRecv: Option<unsafe extern "C" fn(recvComm: *mut c_void) -> ncclResult_t>,
    pub closeListen: Option<unsafe extern "C" fn(listenComm: *mut c_void) -> ncclResult_t>,
}

// SAFETY: tables are immutable statics whose only data pointer, `name`, is a static C string.
unsafe impl Sync for ncclNet_v5_t {}

/// The v6 table (`ncclNetPlugin_v6`): v5 plus `regMrDmaBuf`.
///
/// Probed by NCCL 2.13 through 2.30.x (the 2.32.3 binary also names its symbol); the oldest version
/// 2.26+ accepts.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNet_v6_t {
    /// Name of the network (mainly for logs): a static NUL-terminated C string.
    pub name: *const c_char,
    pub init: Option<unsafe extern "C" fn(logFunction: ncclDebugLogger_t) -> ncclResult_t>,
    pub devices: Option<unsafe extern "C" fn(ndev: *mut c_int) -> ncclResult_t>,
    pub getProperties: Option<unsafe extern "C" fn(dev: c_int, props: *mut ncclNetProperties_v6_t) -> ncclResult_t>,
    pub listen:
        Option<unsafe extern "C" fn(dev: c_int, handle: *mut c_void, listenComm: *mut *mut c_void) -> ncclResult_t>,
    pub connect:
        Option<unsafe extern "C" fn(dev: c_int, handle: *mut c_void, sendComm: *mut *mut c_void) -> ncclResult_t>,
    pub accept: Option<unsafe extern "C" fn(listenComm: *mut c_void, recvComm: *mut *mut c_void) -> ncclResult_t>,
    pub regMr: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: c_int,
            type_: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub regMrDmaBuf: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            offset: u64,
            fd: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub deregMr: Option<unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void) -> ncclResult_t>,
    pub isend: Option<
        unsafe extern "C" fn(
            sendComm: *mut c_void,
            data: *mut c_void,
            size: c_int,
            tag: c_int,
            mhandle: *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub irecv: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut c_int,
            tags: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub iflush: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub test: Option<unsafe extern "C" fn(request: *mut c_void, done: *mut c_int, sizes: *mut c_int) -> ncclResult_t>,
    pub closeSend: Option<unsafe extern "C" fn(sendComm: *mut c_void) -> ncclResult_t>,
    pub closeRecv: Option<unsafe extern "C" fn(recvComm: *mut c_void) -> ncclResult_t>,
    pub closeListen: Option<unsafe extern "C" fn(listenComm: *mut c_void) -> ncclResult_t>,
}

// SAFETY: tables are immutable statics whose only data pointer, `name`, is a static C string.
unsafe impl Sync for ncclNet_v6_t {}

/// The v7 table (`ncclNetPlugin_v7`): `connect`/`accept` return device handles; adds `getDeviceMr`
/// and `irecvConsumed`.
///
/// Probed by NCCL 2.19 and every later release through 2.30.x (the 2.32.3 binary also names its
/// symbol).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNet_v7_t {
    /// Name of the network (mainly for logs): a static NUL-terminated C string.
    pub name: *const c_char,
    pub init: Option<unsafe extern "C" fn(logFunction: ncclDebugLogger_t) -> ncclResult_t>,
    pub devices: Option<unsafe extern "C" fn(ndev: *mut c_int) -> ncclResult_t>,
    pub getProperties: Option<unsafe extern "C" fn(dev: c_int, props: *mut ncclNetProperties_v7_t) -> ncclResult_t>,
    pub listen:
        Option<unsafe extern "C" fn(dev: c_int, handle: *mut c_void, listenComm: *mut *mut c_void) -> ncclResult_t>,
    pub connect: Option<
        unsafe extern "C" fn(
            dev: c_int,
            handle: *mut c_void,
            sendComm: *mut *mut c_void,
            sendDevComm: *mut *mut ncclNetDeviceHandle_v7_t,
        ) -> ncclResult_t,
    >,
    pub accept: Option<
        unsafe extern "C" fn(
            listenComm: *mut c_void,
            recvComm: *mut *mut c_void,
            recvDevComm: *mut *mut ncclNetDeviceHandle_v7_t,
        ) -> ncclResult_t,
    >,
    pub regMr: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: c_int,
            type_: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub regMrDmaBuf: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            offset: u64,
            fd: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub deregMr: Option<unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void) -> ncclResult_t>,
    pub isend: Option<
        unsafe extern "C" fn(
            sendComm: *mut c_void,
            data: *mut c_void,
            size: c_int,
            tag: c_int,
            mhandle: *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub irecv: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut c_int,
            tags: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub iflush: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub test: Option<unsafe extern "C" fn(request: *mut c_void, done: *mut c_int, sizes: *mut c_int) -> ncclResult_t>,
    pub closeSend: Option<unsafe extern "C" fn(sendComm: *mut c_void) -> ncclResult_t>,
    pub closeRecv: Option<unsafe extern "C" fn(recvComm: *mut c_void) -> ncclResult_t>,
    pub closeListen: Option<unsafe extern "C" fn(listenComm: *mut c_void) -> ncclResult_t>,
    pub getDeviceMr: Option<
        unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void, dptr_mhandle: *mut *mut c_void) -> ncclResult_t,
    >,
    pub irecvConsumed:
        Option<unsafe extern "C" fn(recvComm: *mut c_void, n: c_int, request: *mut c_void) -> ncclResult_t>,
}

// SAFETY: tables are immutable statics whose only data pointer, `name`, is a static C string.
unsafe impl Sync for ncclNet_v7_t {}

/// The v8 table (`ncclNetPlugin_v8`): `regMr` takes a `size_t` size; properties gain `regIsGlobal`.
///
/// Probed by NCCL 2.20 and every later release through 2.30.x (the 2.32.3 binary also names its
/// symbol).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNet_v8_t {
    /// Name of the network (mainly for logs): a static NUL-terminated C string.
    pub name: *const c_char,
    pub init: Option<unsafe extern "C" fn(logFunction: ncclDebugLogger_t) -> ncclResult_t>,
    pub devices: Option<unsafe extern "C" fn(ndev: *mut c_int) -> ncclResult_t>,
    pub getProperties: Option<unsafe extern "C" fn(dev: c_int, props: *mut ncclNetProperties_v8_t) -> ncclResult_t>,
    pub listen:
        Option<unsafe extern "C" fn(dev: c_int, handle: *mut c_void, listenComm: *mut *mut c_void) -> ncclResult_t>,
    pub connect: Option<
        unsafe extern "C" fn(
            dev: c_int,
            handle: *mut c_void,
            sendComm: *mut *mut c_void,
            sendDevComm: *mut *mut ncclNetDeviceHandle_v8_t,
        ) -> ncclResult_t,
    >,
    pub accept: Option<
        unsafe extern "C" fn(
            listenComm: *mut c_void,
            recvComm: *mut *mut c_void,
            recvDevComm: *mut *mut ncclNetDeviceHandle_v8_t,
        ) -> ncclResult_t,
    >,
    pub regMr: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub regMrDmaBuf: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            offset: u64,
            fd: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub deregMr: Option<unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void) -> ncclResult_t>,
    pub isend: Option<
        unsafe extern "C" fn(
            sendComm: *mut c_void,
            data: *mut c_void,
            size: c_int,
            tag: c_int,
            mhandle: *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub irecv: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut c_int,
            tags: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub iflush: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub test: Option<unsafe extern "C" fn(request: *mut c_void, done: *mut c_int, sizes: *mut c_int) -> ncclResult_t>,
    pub closeSend: Option<unsafe extern "C" fn(sendComm: *mut c_void) -> ncclResult_t>,
    pub closeRecv: Option<unsafe extern "C" fn(recvComm: *mut c_void) -> ncclResult_t>,
    pub closeListen: Option<unsafe extern "C" fn(listenComm: *mut c_void) -> ncclResult_t>,
    pub getDeviceMr: Option<
        unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void, dptr_mhandle: *mut *mut c_void) -> ncclResult_t,
    >,
    pub irecvConsumed:
        Option<unsafe extern "C" fn(recvComm: *mut c_void, n: c_int, request: *mut c_void) -> ncclResult_t>,
}

// SAFETY: tables are immutable statics whose only data pointer, `name`, is a static C string.
unsafe impl Sync for ncclNet_v8_t {}

/// The v9 table (`ncclNetPlugin_v9`): `isend`/`irecv` take `size_t` sizes; adds `makeVDevice`.
///
/// Probed by NCCL 2.24.3 and every later release through 2.30.x (the 2.32.3 binary also names its
/// symbol).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNet_v9_t {
    /// Name of the network (mainly for logs): a static NUL-terminated C string.
    pub name: *const c_char,
    pub init: Option<unsafe extern "C" fn(logFunction: ncclDebugLogger_t) -> ncclResult_t>,
    pub devices: Option<unsafe extern "C" fn(ndev: *mut c_int) -> ncclResult_t>,
    pub getProperties: Option<unsafe extern "C" fn(dev: c_int, props: *mut ncclNetProperties_v9_t) -> ncclResult_t>,
    pub listen:
        Option<unsafe extern "C" fn(dev: c_int, handle: *mut c_void, listenComm: *mut *mut c_void) -> ncclResult_t>,
    pub connect: Option<
        unsafe extern "C" fn(
            dev: c_int,
            handle: *mut c_void,
            sendComm: *mut *mut c_void,
            sendDevComm: *mut *mut ncclNetDeviceHandle_v9_t,
        ) -> ncclResult_t,
    >,
    pub accept: Option<
        unsafe extern "C" fn(
            listenComm: *mut c_void,
            recvComm: *mut *mut c_void,
            recvDevComm: *mut *mut ncclNetDeviceHandle_v9_t,
        ) -> ncclResult_t,
    >,
    pub regMr: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub regMrDmaBuf: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            offset: u64,
            fd: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub deregMr: Option<unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void) -> ncclResult_t>,
    pub isend: Option<
        unsafe extern "C" fn(
            sendComm: *mut c_void,
            data: *mut c_void,
            size: usize,
            tag: c_int,
            mhandle: *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub irecv: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut usize,
            tags: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub iflush: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub test: Option<unsafe extern "C" fn(request: *mut c_void, done: *mut c_int, sizes: *mut c_int) -> ncclResult_t>,
    pub closeSend: Option<unsafe extern "C" fn(sendComm: *mut c_void) -> ncclResult_t>,
    pub closeRecv: Option<unsafe extern "C" fn(recvComm: *mut c_void) -> ncclResult_t>,
    pub closeListen: Option<unsafe extern "C" fn(listenComm: *mut c_void) -> ncclResult_t>,
    pub getDeviceMr: Option<
        unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void, dptr_mhandle: *mut *mut c_void) -> ncclResult_t,
    >,
    pub irecvConsumed:
        Option<unsafe extern "C" fn(recvComm: *mut c_void, n: c_int, request: *mut c_void) -> ncclResult_t>,
    pub makeVDevice: Option<unsafe extern "C" fn(d: *mut c_int, props: *mut ncclNetVDeviceProps_v9_t) -> ncclResult_t>,
}

// SAFETY: tables are immutable statics whose only data pointer, `name`, is a static C string.
unsafe impl Sync for ncclNet_v9_t {}

/// The v10 table (`ncclNetPlugin_v10`): `init` gets the profiler callback, `connect` a comm config,
/// `isend`/`irecv` profiler handles.
///
/// Probed by NCCL 2.26.2 and every later release through 2.30.x (the 2.32.3 binary also names its
/// symbol); the newest one 2.26-2.27 know.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNet_v10_t {
    /// Name of the network (mainly for logs): a static NUL-terminated C string.
    pub name: *const c_char,
    pub init: Option<
        unsafe extern "C" fn(logFunction: ncclDebugLogger_t, profFunction: ncclProfilerCallback_t) -> ncclResult_t,
    >,
    pub devices: Option<unsafe extern "C" fn(ndev: *mut c_int) -> ncclResult_t>,
    pub getProperties: Option<unsafe extern "C" fn(dev: c_int, props: *mut ncclNetProperties_v10_t) -> ncclResult_t>,
    pub listen:
        Option<unsafe extern "C" fn(dev: c_int, handle: *mut c_void, listenComm: *mut *mut c_void) -> ncclResult_t>,
    pub connect: Option<
        unsafe extern "C" fn(
            dev: c_int,
            config: *mut ncclNetCommConfig_v10_t,
            handle: *mut c_void,
            sendComm: *mut *mut c_void,
            sendDevComm: *mut *mut ncclNetDeviceHandle_v10_t,
        ) -> ncclResult_t,
    >,
    pub accept: Option<
        unsafe extern "C" fn(
            listenComm: *mut c_void,
            recvComm: *mut *mut c_void,
            recvDevComm: *mut *mut ncclNetDeviceHandle_v10_t,
        ) -> ncclResult_t,
    >,
    pub regMr: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub regMrDmaBuf: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            offset: u64,
            fd: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub deregMr: Option<unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void) -> ncclResult_t>,
    pub isend: Option<
        unsafe extern "C" fn(
            sendComm: *mut c_void,
            data: *mut c_void,
            size: usize,
            tag: c_int,
            mhandle: *mut c_void,
            phandle: *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub irecv: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut usize,
            tags: *mut c_int,
            mhandles: *mut *mut c_void,
            phandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub iflush: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub test: Option<unsafe extern "C" fn(request: *mut c_void, done: *mut c_int, sizes: *mut c_int) -> ncclResult_t>,
    pub closeSend: Option<unsafe extern "C" fn(sendComm: *mut c_void) -> ncclResult_t>,
    pub closeRecv: Option<unsafe extern "C" fn(recvComm: *mut c_void) -> ncclResult_t>,
    pub closeListen: Option<unsafe extern "C" fn(listenComm: *mut c_void) -> ncclResult_t>,
    pub getDeviceMr: Option<
        unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void, dptr_mhandle: *mut *mut c_void) -> ncclResult_t,
    >,
    pub irecvConsumed:
        Option<unsafe extern "C" fn(recvComm: *mut c_void, n: c_int, request: *mut c_void) -> ncclResult_t>,
    pub makeVDevice: Option<unsafe extern "C" fn(d: *mut c_int, props: *mut ncclNetVDeviceProps_v10_t) -> ncclResult_t>,
}

// SAFETY: tables are immutable statics whose only data pointer, `name`, is a static C string.
unsafe impl Sync for ncclNet_v10_t {}

/// The v11 table (`ncclNetPlugin_v11`): `init` returns a per-communicator context that
/// `listen`/`connect` take; adds `finalize` and `setNetAttr`.
///
/// Probed by NCCL 2.28.3 and every later release through 2.30.x (the 2.32.3 binary also names its
/// symbol); the newest one 2.28-2.29 know.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNet_v11_t {
    /// Name of the network (mainly for logs): a static NUL-terminated C string.
    pub name: *const c_char,
    pub init: Option<
        unsafe extern "C" fn(
            ctx: *mut *mut c_void,
            commId: u64,
            config: *mut ncclNetCommConfig_v11_t,
            logFunction: ncclDebugLogger_t,
            profFunction: ncclProfilerCallback_t,
        ) -> ncclResult_t,
    >,
    pub devices: Option<unsafe extern "C" fn(ndev: *mut c_int) -> ncclResult_t>,
    pub getProperties: Option<unsafe extern "C" fn(dev: c_int, props: *mut ncclNetProperties_v11_t) -> ncclResult_t>,
    pub listen: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            dev: c_int,
            handle: *mut c_void,
            listenComm: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub connect: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            dev: c_int,
            handle: *mut c_void,
            sendComm: *mut *mut c_void,
            sendDevComm: *mut *mut ncclNetDeviceHandle_v11_t,
        ) -> ncclResult_t,
    >,
    pub accept: Option<
        unsafe extern "C" fn(
            listenComm: *mut c_void,
            recvComm: *mut *mut c_void,
            recvDevComm: *mut *mut ncclNetDeviceHandle_v11_t,
        ) -> ncclResult_t,
    >,
    pub regMr: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub regMrDmaBuf: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            offset: u64,
            fd: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub deregMr: Option<unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void) -> ncclResult_t>,
    pub isend: Option<
        unsafe extern "C" fn(
            sendComm: *mut c_void,
            data: *mut c_void,
            size: usize,
            tag: c_int,
            mhandle: *mut c_void,
            phandle: *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub irecv: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut usize,
            tags: *mut c_int,
            mhandles: *mut *mut c_void,
            phandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub iflush: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub test: Option<unsafe extern "C" fn(request: *mut c_void, done: *mut c_int, sizes: *mut c_int) -> ncclResult_t>,
    pub closeSend: Option<unsafe extern "C" fn(sendComm: *mut c_void) -> ncclResult_t>,
    pub closeRecv: Option<unsafe extern "C" fn(recvComm: *mut c_void) -> ncclResult_t>,
    pub closeListen: Option<unsafe extern "C" fn(listenComm: *mut c_void) -> ncclResult_t>,
    pub getDeviceMr: Option<
        unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void, dptr_mhandle: *mut *mut c_void) -> ncclResult_t,
    >,
    pub irecvConsumed:
        Option<unsafe extern "C" fn(recvComm: *mut c_void, n: c_int, request: *mut c_void) -> ncclResult_t>,
    pub makeVDevice: Option<unsafe extern "C" fn(d: *mut c_int, props: *mut ncclNetVDeviceProps_v11_t) -> ncclResult_t>,
    pub finalize: Option<unsafe extern "C" fn(ctx: *mut c_void) -> ncclResult_t>,
    pub setNetAttr: Option<unsafe extern "C" fn(ctx: *mut c_void, netAttr: *mut ncclNetAttr_v11_t) -> ncclResult_t>,
}

// SAFETY: tables are immutable statics whose only data pointer, `name`, is a static C string.
unsafe impl Sync for ncclNet_v11_t {}

/// The v12 table (`ncclNetPlugin_v12`): same signatures as v11 over the v12 structs (8-device
/// vProps, railId/planeId).
///
/// Probed first by NCCL 2.30.3 through 2.30.7, and the newest version in the 2.32.3 binary. NCCL
/// uses this table in place, with no adapter.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclNet_v12_t {
    /// Name of the network (mainly for logs): a static NUL-terminated C string.
    pub name: *const c_char,
    pub init: Option<
        unsafe extern "C" fn(
            ctx: *mut *mut c_void,
            commId: u64,
            config: *mut ncclNetCommConfig_v12_t,
            logFunction: ncclDebugLogger_t,
            profFunction: ncclProfilerCallback_t,
        ) -> ncclResult_t,
    >,
    pub devices: Option<unsafe extern "C" fn(ndev: *mut c_int) -> ncclResult_t>,
    pub getProperties: Option<unsafe extern "C" fn(dev: c_int, props: *mut ncclNetProperties_v12_t) -> ncclResult_t>,
    pub listen: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            dev: c_int,
            handle: *mut c_void,
            listenComm: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub connect: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            dev: c_int,
            handle: *mut c_void,
            sendComm: *mut *mut c_void,
            sendDevComm: *mut *mut ncclNetDeviceHandle_v12_t,
        ) -> ncclResult_t,
    >,
    pub accept: Option<
        unsafe extern "C" fn(
            listenComm: *mut c_void,
            recvComm: *mut *mut c_void,
            recvDevComm: *mut *mut ncclNetDeviceHandle_v12_t,
        ) -> ncclResult_t,
    >,
    pub regMr: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub regMrDmaBuf: Option<
        unsafe extern "C" fn(
            comm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            offset: u64,
            fd: c_int,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub deregMr: Option<unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void) -> ncclResult_t>,
    pub isend: Option<
        unsafe extern "C" fn(
            sendComm: *mut c_void,
            data: *mut c_void,
            size: usize,
            tag: c_int,
            mhandle: *mut c_void,
            phandle: *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub irecv: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut usize,
            tags: *mut c_int,
            mhandles: *mut *mut c_void,
            phandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub iflush: Option<
        unsafe extern "C" fn(
            recvComm: *mut c_void,
            n: c_int,
            data: *mut *mut c_void,
            sizes: *mut c_int,
            mhandles: *mut *mut c_void,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub test: Option<unsafe extern "C" fn(request: *mut c_void, done: *mut c_int, sizes: *mut c_int) -> ncclResult_t>,
    pub closeSend: Option<unsafe extern "C" fn(sendComm: *mut c_void) -> ncclResult_t>,
    pub closeRecv: Option<unsafe extern "C" fn(recvComm: *mut c_void) -> ncclResult_t>,
    pub closeListen: Option<unsafe extern "C" fn(listenComm: *mut c_void) -> ncclResult_t>,
    pub getDeviceMr: Option<
        unsafe extern "C" fn(comm: *mut c_void, mhandle: *mut c_void, dptr_mhandle: *mut *mut c_void) -> ncclResult_t,
    >,
    pub irecvConsumed:
        Option<unsafe extern "C" fn(recvComm: *mut c_void, n: c_int, request: *mut c_void) -> ncclResult_t>,
    pub makeVDevice: Option<unsafe extern "C" fn(d: *mut c_int, props: *mut ncclNetVDeviceProps_v12_t) -> ncclResult_t>,
    pub finalize: Option<unsafe extern "C" fn(ctx: *mut c_void) -> ncclResult_t>,
    pub setNetAttr: Option<unsafe extern "C" fn(ctx: *mut c_void, netAttr: *mut ncclNetAttr_v12_t) -> ncclResult_t>,
}

// SAFETY: tables are immutable statics whose only data pointer, `name`, is a static C string.
unsafe impl Sync for ncclNet_v12_t {}
