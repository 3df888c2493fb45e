//! The `ncclNetPlugin_v5` … `_v12` tables NCCL looks up with dlsym: thin per-version adapters over
//! the core API in `plugin`. Each adapter only converts argument types (int vs size_t sizes,
//! property layouts, contexts, device handles); all behaviour lives in `plugin`. Every entry point
//! is instantiated once per table (`devices::<6>`), so a WARN names the version NCCL called.
#![allow(non_upper_case_globals, non_snake_case)]

mod context;
pub mod guard;
mod props;
pub mod rma;
mod tuner;

use crate::abi::*;
use crate::error::{Error, Result};
use crate::plugin;
use context::Context;
use guard::{ffi_fn, non_null};
use std::ffi::{c_char, c_int, c_void};

// --- init / finalize --------------------------------------------------------------------------

ffi_fn! { "init" fn init_v5(logFunction: ncclDebugLogger_t) { plugin::init(logFunction, V) } }

ffi_fn! {
    "init" fn init_v10(logFunction: ncclDebugLogger_t, profFunction: ncclProfilerCallback_t) {
        crate::engine::profile::install(profFunction);
        plugin::init(logFunction, V)
    }
}

/// NCCL's config pointer (v10 connect, v11+ init) as a traffic class; NULL: none.
///
/// # Safety
/// `config` is NULL or points to NCCL's readable `ncclNetCommConfig_t`.
unsafe fn config_traffic_class(config: *const ncclNetCommConfig_v10_t) -> Result<Option<u8>> {
    if config.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's promise.
    plugin::traffic_class(unsafe { (*config).trafficClass })
}

ffi_fn! {
    "init" fn init_v11(
        ctx: *mut *mut c_void,
        commId: u64,
        config: *mut ncclNetCommConfig_v11_t,
        logFunction: ncclDebugLogger_t,
        profFunction: ncclProfilerCallback_t,
    ) {
        // NCCL's logger first, so that even a refused call is logged where NCCL logs.
        crate::log::install(logFunction);
        non_null!(ctx, "init: ctx");
        crate::engine::profile::install(profFunction);
        // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
        unsafe { *ctx = std::ptr::null_mut() };
        plugin::init(logFunction, V)?;
        // SAFETY: NCCL's config, or NULL.
        let traffic_class = unsafe { config_traffic_class(config) }?;
        let open = plugin::context_opened();
        log::debug!("init for communicator {commId:#x} ({open} open), traffic class {traffic_class:?}");
        // SAFETY: as above.
        unsafe { *ctx = Context::create(commId, traffic_class) };
        Ok(())
    }
}

ffi_fn! {
    "finalize" fn finalize(ctx: *mut c_void) {
        // SAFETY: NCCL passes a context init_v11 returned and finalizes each once.
        let comm_id = unsafe { Context::free(ctx) }?;
        let open = plugin::context_closed();
        log::debug!("finalize for communicator {comm_id:#x} ({open} still open)");
        Ok(())
    }
}

ffi_fn! {
    "devices" fn devices(ndev: *mut c_int) {
        non_null!(ndev, "devices: ndev");
        let n = plugin::device_count()? as c_int;
        // SAFETY: NCCL passes a writable int (checked non-NULL).
        unsafe { *ndev = n };
        Ok(())
    }
}

// --- listen / connect / accept ----------------------------------------------------------------

/// NCCL's handle buffer as the bytes it is.
///
/// # Safety
/// `handle` must be non-NULL and point to NCCL_NET_HANDLE_MAXSIZE bytes, writable and used by
/// nothing else for `'a`.
unsafe fn handle_bytes<'a>(handle: *mut c_void) -> &'a mut [u8; NCCL_NET_HANDLE_MAXSIZE] {
    // SAFETY: the caller's promise; a byte array needs no alignment.
    unsafe { &mut *(handle as *mut [u8; NCCL_NET_HANDLE_MAXSIZE]) }
}

fn listen_common(dev: c_int, handle: *mut c_void, listen: *mut *mut c_void) -> Result<()> {
    non_null!(handle, "listen: handle");
    non_null!(listen, "listen: listenComm");
    // SAFETY: NCCL passes its NCCL_NET_HANDLE_MAXSIZE-byte handle buffer (checked non-NULL), which
    // it does not touch until listen returns.
    let comm = plugin::listen(dev, unsafe { handle_bytes(handle) })?;
    // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
    unsafe { *listen = comm };
    Ok(())
}

ffi_fn! {
    "listen" fn listen(dev: c_int, handle: *mut c_void, listenComm: *mut *mut c_void) {
        listen_common(dev, handle, listenComm)
    }
}

ffi_fn! {
    "listen" fn listen_v11(ctx: *mut c_void, dev: c_int, handle: *mut c_void, listenComm: *mut *mut c_void) {
        listen_common(dev, handle, listenComm)?;
        // SAFETY: listen_common wrote the new listen comm (checked non-NULL there).
        context::remember_listen(unsafe { *listenComm }, ctx);
        Ok(())
    }
}

/// NCCL never asks for a device handle on the send side (`*sendDevComm` stays NULL); nothing is
/// written through it.
fn connect_common(
    dev: c_int,
    handle: *mut c_void,
    send: *mut *mut c_void,
    max: usize,
    traffic_class: Result<Option<u8>>,
    p2p: bool,
) -> Result<()> {
    non_null!(handle, "connect: handle");
    non_null!(send, "connect: sendComm");
    // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
    unsafe { *send = std::ptr::null_mut() };
    let traffic_class = traffic_class?;
    // SAFETY: `handle` is NCCL's NCCL_NET_HANDLE_MAXSIZE-byte buffer holding the peer's handle
    // (checked non-NULL), the same buffer on every call, untouched by NCCL until connect returns.
    let comm = plugin::connect(dev, unsafe { handle_bytes(handle) }, max, traffic_class, p2p)?;
    // SAFETY: as for the first write.
    unsafe { *send = comm };
    Ok(())
}

ffi_fn! {
    "connect" fn connect_v5(dev: c_int, handle: *mut c_void, sendComm: *mut *mut c_void) {
        connect_common(dev, handle, sendComm, NCCL_NET_MAX_REQUESTS_V6, Ok(None), false)
    }
}

ffi_fn! {
    "connect" fn connect_v7(dev: c_int, handle: *mut c_void, sendComm: *mut *mut c_void, _devComm: *mut *mut ncclNetDeviceHandle_v7_t) {
        connect_common(dev, handle, sendComm, NCCL_NET_MAX_REQUESTS, Ok(None), false)
    }
}

ffi_fn! {
    "connect" fn connect_v10(
        dev: c_int,
        config: *mut ncclNetCommConfig_v10_t,
        handle: *mut c_void,
        sendComm: *mut *mut c_void,
        _devComm: *mut *mut ncclNetDeviceHandle_v10_t,
    ) {
        // SAFETY: NCCL's config, or NULL.
        let class = unsafe { config_traffic_class(config) };
        connect_common(dev, handle, sendComm, NCCL_NET_MAX_REQUESTS, class, false)
    }
}

ffi_fn! {
    "connect" fn connect_v11(
        ctx: *mut c_void,
        dev: c_int,
        handle: *mut c_void,
        sendComm: *mut *mut c_void,
        _devComm: *mut *mut ncclNetDeviceHandle_v11_t,
    ) {
        // SAFETY: NCCL passes the context init_v11 returned for this communicator (or NULL).
        let context = unsafe { Context::of(ctx, "connect") };
        let p2p = matches!(context, Ok(Some(c)) if c.p2p_hinted());
        let class = context.map(|c| c.and_then(|c| c.traffic_class));
        connect_common(dev, handle, sendComm, NCCL_NET_MAX_REQUESTS, class, p2p)
    }
}

/// `dev_handle`: where NCCL asks for the receive comm's device handle (v7+): NULL, or a pointer
/// to NULL, for none; a pointer to NCCL's handle struct (type and version filled in) for NCCL's
/// device unpack.
fn accept_common(
    listen: *mut c_void,
    recv: *mut *mut c_void,
    max: usize,
    dev_handle: *mut *mut ncclNetDeviceHandle_v7_t,
) -> Result<()> {
    non_null!(recv, "accept: recvComm");
    // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
    unsafe { *recv = std::ptr::null_mut() };
    let wanted = if dev_handle.is_null() {
        std::ptr::null_mut()
    } else {
        // SAFETY: a non-NULL dev_handle points to NCCL's (readable) pointer to its handle struct.
        unsafe { *dev_handle }
    };
    // SAFETY: a non-NULL `wanted` is NCCL's handle struct (type and version filled in), aligned,
    // and read and written by nobody else until accept returns.
    let wanted = unsafe { wanted.as_mut() };
    // NCCL's hints for the connection (v11+) are on the context the listen was made with.
    let p2p = context::listen_p2p_hinted(listen);
    // SAFETY: `listen` is what NCCL got from listen (plugin::accept checks its tag before use),
    // and NCCL does not close it during accept.
    let comm = unsafe { plugin::accept(listen, max, wanted, p2p) }?;
    // SAFETY: as above.
    unsafe { *recv = comm };
    Ok(())
}

ffi_fn! {
    "accept" fn accept_v5(listenComm: *mut c_void, recvComm: *mut *mut c_void) {
        accept_common(listenComm, recvComm, NCCL_NET_MAX_REQUESTS_V6, std::ptr::null_mut())
    }
}

ffi_fn! {
    "accept" fn accept_v7(listenComm: *mut c_void, recvComm: *mut *mut c_void, devComm: *mut *mut ncclNetDeviceHandle_v7_t) {
        accept_common(listenComm, recvComm, NCCL_NET_MAX_REQUESTS, devComm)
    }
}

// --- memory registration ----------------------------------------------------------------------

fn reg_mr_common(
    comm: *mut c_void,
    data: *mut c_void,
    size: usize,
    type_: c_int,
    mhandle: *mut *mut c_void,
) -> Result<()> {
    non_null!(mhandle, "regMr: mhandle");
    // SAFETY: `comm` is what NCCL got from connect or accept (plugin::reg_mr checks its tag before
    // use), not closed during the call.
    let mh = unsafe { plugin::reg_mr(comm, data, size, type_) }?;
    // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
    unsafe { *mhandle = mh };
    Ok(())
}

ffi_fn! {
    "regMr" fn regMr_v5(comm: *mut c_void, data: *mut c_void, size: c_int, type_: c_int, mhandle: *mut *mut c_void) {
        let size = usize::try_from(size)
            .map_err(|_| Error::invalid_argument(format!("regMr of {size} bytes: a size must not be negative")))?;
        reg_mr_common(comm, data, size, type_, mhandle)
    }
}

ffi_fn! {
    "regMr" fn regMr_v8(comm: *mut c_void, data: *mut c_void, size: usize, type_: c_int, mhandle: *mut *mut c_void) {
        reg_mr_common(comm, data, size, type_, mhandle)
    }
}

ffi_fn! {
    "deregMr" fn deregMr(comm: *mut c_void, mhandle: *mut c_void) {
        // SAFETY: NCCL passes back a comm and a memory handle of that comm that tcpxr returned
        // (plugin::dereg_mr checks tag and magic before use), deregistering each handle once.
        unsafe { plugin::dereg_mr(comm, mhandle) }
    }
}

ffi_fn! {
    /// NCCL's device unpack kernel does not read memory handles, so none is made for the device
    /// (NCCL keeps NULL); the comm and handle are checked all the same.
    "getDeviceMr" fn getDeviceMr(comm: *mut c_void, mhandle: *mut c_void, dptr_mhandle: *mut *mut c_void) {
        non_null!(dptr_mhandle, "getDeviceMr: dptr_mhandle");
        // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
        unsafe { *dptr_mhandle = std::ptr::null_mut() };
        // SAFETY: NCCL passes back a comm and a memory handle of it that tcpxr returned
        // (plugin::get_device_mr checks tag and magic before use).
        unsafe { plugin::get_device_mr(comm, mhandle) }
    }
}

// --- isend / irecv / iflush / test ------------------------------------------------------------

fn isend_common(
    comm: *mut c_void,
    data: *mut c_void,
    size: usize,
    mhandle: *mut c_void,
    phandle: *mut c_void,
    request: *mut *mut c_void,
) -> Result<()> {
    non_null!(request, "isend: request");
    // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL), always written.
    unsafe { *request = std::ptr::null_mut() };
    // SAFETY: NCCL passes back a send comm and its memory handle as tcpxr returned them
    // (plugin::isend checks tag and magic), and keeps `data..data+size` valid and unchanged
    // until test says done.
    let req = unsafe { plugin::isend(comm, data, size, mhandle, phandle) }?;
    // SAFETY: as for the first write.
    unsafe { *request = req };
    Ok(())
}

ffi_fn! {
    "isend" fn isend_v5(sendComm: *mut c_void, data: *mut c_void, size: c_int, _tag: c_int, mhandle: *mut c_void, request: *mut *mut c_void) {
        match usize::try_from(size) {
            Ok(size) => isend_common(sendComm, data, size, mhandle, std::ptr::null_mut(), request),
            Err(_) => {
                if !request.is_null() {
                    // SAFETY: a non-NULL request is NCCL's writable slot.
                    unsafe { *request = std::ptr::null_mut() };
                }
                Err(Error::invalid_argument(format!("isend of {size} bytes: a size must not be negative")))
            }
        }
    }
}

ffi_fn! {
    "isend" fn isend_v9(sendComm: *mut c_void, data: *mut c_void, size: usize, _tag: c_int, mhandle: *mut c_void, request: *mut *mut c_void) {
        isend_common(sendComm, data, size, mhandle, std::ptr::null_mut(), request)
    }
}

ffi_fn! {
    "isend" fn isend_v10(
        sendComm: *mut c_void,
        data: *mut c_void,
        size: usize,
        _tag: c_int,
        mhandle: *mut c_void,
        phandle: *mut c_void,
        request: *mut *mut c_void,
    ) {
        isend_common(sendComm, data, size, mhandle, phandle, request)
    }
}

/// # Safety
/// A non-NULL `data`, `mhandles` and `phandles` (v10+ profiler handles) point to `n` readable
/// pointers; `size_of(i)` reads NCCL's size array for `i < n` (checking it, so that a bad one is
/// refused after `*request` is written); `comm`, the buffers and the memory handles are as NCCL's
/// irecv passes them (see plugin::irecv).
unsafe fn irecv_common(
    comm: *mut c_void,
    n: c_int,
    data: *mut *mut c_void,
    mhandles: *mut *mut c_void,
    size_of: impl Fn(usize) -> Result<usize>,
    phandles: *mut *mut c_void,
    request: *mut *mut c_void,
) -> Result<()> {
    non_null!(request, "irecv: request");
    // NCCL may preset *request (v11+: NCCL_NET_OPTIONAL_RECV_COMPLETION); always overwrite it.
    // SAFETY: NCCL's writable slot (checked non-NULL).
    unsafe { *request = std::ptr::null_mut() };
    non_null!(data, "irecv: data");
    if !(1..=8).contains(&n) {
        return Err(Error::internal(format!(
            "irecv with n={n}: tcpxr reports maxRecvs=1 and takes n=1"
        )));
    }
    let n = n as usize;
    // SAFETY: the caller's promise: n readable pointers at data, and at mhandles when non-NULL.
    let buffers = unsafe { std::slice::from_raw_parts(data, n) };
    let sizes = (0..n).map(&size_of).collect::<Result<Vec<usize>>>()?;
    let mhandles = if mhandles.is_null() {
        &[][..]
    } else {
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(mhandles, n) }
    };
    let phandle = if phandles.is_null() {
        std::ptr::null_mut()
    } else {
        // SAFETY: the caller's promise: n readable profiler handles (n >= 1 checked above).
        unsafe { *phandles }
    };
    // SAFETY: the caller's promise: NCCL's receive comm and memory handles as tcpxr returned them
    // (plugin::irecv checks tag and magic), and buffers NCCL keeps valid until test says done.
    let req = unsafe { plugin::irecv(comm, buffers, &sizes, mhandles, phandle) }?;
    // SAFETY: NCCL's writable slot, as above.
    unsafe { *request = req };
    Ok(())
}

ffi_fn! {
    "irecv" fn irecv_v5(
        recvComm: *mut c_void,
        n: c_int,
        data: *mut *mut c_void,
        sizes: *mut c_int,
        _tags: *mut c_int,
        mhandles: *mut *mut c_void,
        request: *mut *mut c_void,
    ) {
        let size_of = |i: usize| {
            non_null!(sizes, "irecv: sizes");
            // SAFETY: NCCL passes n sizes (checked non-NULL); irecv_common asks only for i < n.
            let s = unsafe { *sizes.add(i) };
            usize::try_from(s).map_err(|_| Error::invalid_argument(format!("irecv of {s} bytes: a size must not be negative")))
        };
        // SAFETY: NCCL's arrays of n entries (data, mhandles) and its irecv contract.
        unsafe { irecv_common(recvComm, n, data, mhandles, size_of, std::ptr::null_mut(), request) }
    }
}

ffi_fn! {
    "irecv" fn irecv_v9(
        recvComm: *mut c_void,
        n: c_int,
        data: *mut *mut c_void,
        sizes: *mut usize,
        _tags: *mut c_int,
        mhandles: *mut *mut c_void,
        request: *mut *mut c_void,
    ) {
        let size_of = |i: usize| {
            non_null!(sizes, "irecv: sizes");
            // SAFETY: NCCL passes n sizes (checked non-NULL); irecv_common asks only for i < n.
            Ok(unsafe { *sizes.add(i) })
        };
        // SAFETY: NCCL's arrays of n entries (data, mhandles) and its irecv contract.
        unsafe { irecv_common(recvComm, n, data, mhandles, size_of, std::ptr::null_mut(), request) }
    }
}

ffi_fn! {
    "irecv" fn irecv_v10(
        recvComm: *mut c_void,
        n: c_int,
        data: *mut *mut c_void,
        sizes: *mut usize,
        _tags: *mut c_int,
        mhandles: *mut *mut c_void,
        phandles: *mut *mut c_void,
        request: *mut *mut c_void,
    ) {
        let size_of = |i: usize| {
            non_null!(sizes, "irecv: sizes");
            // SAFETY: NCCL passes n sizes (checked non-NULL); irecv_common asks only for i < n.
            Ok(unsafe { *sizes.add(i) })
        };
        // SAFETY: NCCL's arrays of n entries (data, mhandles) and its irecv contract.
        unsafe { irecv_common(recvComm, n, data, mhandles, size_of, phandles, request) }
    }
}

ffi_fn! {
    /// Nothing to flush: test() reports a receive done only once its bytes are in place (or, with
    /// device unpack, once NCCL's kernel may place them). A NULL request tells NCCL the flush is
    /// complete.
    "iflush" fn iflush(
        recvComm: *mut c_void,
        n: c_int,
        _data: *mut *mut c_void,
        _sizes: *mut c_int,
        _mhandles: *mut *mut c_void,
        request: *mut *mut c_void,
    ) {
        non_null!(request, "iflush: request");
        // SAFETY: NCCL's writable slot (checked non-NULL).
        unsafe { *request = std::ptr::null_mut() };
        plugin::iflush(recvComm, n)
    }
}

ffi_fn! {
    "test" fn test(request: *mut c_void, done: *mut c_int, sizes: *mut c_int) {
        non_null!(done, "test: done");
        // SAFETY: NCCL's writable int (checked non-NULL), used by nobody else during the call.
        let done = unsafe { &mut *done };
        // SAFETY: NCCL's `sizes` is NULL or one writable int, used by nobody else during the call.
        let sizes = unsafe { sizes.as_mut() };
        // SAFETY: `request` is what isend/irecv returned (plugin::test checks its magic), its comm
        // not closed while NCCL tests it.
        unsafe { plugin::test(request, done, sizes) }
    }
}

ffi_fn! {
    /// NCCL's kernel has placed receive `request`: its bounce memory may be reused (device
    /// unpack). NCCL calls it for every receive; without device unpack it does nothing.
    "irecvConsumed" fn irecvConsumed(recvComm: *mut c_void, n: c_int, request: *mut c_void) {
        if n != 1 {
            return Err(Error::internal(format!("irecvConsumed with n={n}: tcpxr takes n=1")));
        }
        // SAFETY: NCCL passes back a receive comm and one of its requests as tcpxr returned them
        // (plugin::irecv_consumed checks tag and magic before use).
        unsafe { plugin::irecv_consumed(recvComm, request) }
    }
}

ffi_fn! {
    "closeSend" fn closeSend(sendComm: *mut c_void) {
        // SAFETY: NCCL closes a comm it got from connect once, after its last call on it
        // (plugin::close_send checks the tag before freeing it).
        unsafe { plugin::close_send(sendComm) }
    }
}

ffi_fn! {
    "closeRecv" fn closeRecv(recvComm: *mut c_void) {
        // SAFETY: NCCL closes a comm it got from accept once, after its last call on it
        // (plugin::close_recv checks the tag before freeing it).
        unsafe { plugin::close_recv(recvComm) }
    }
}

ffi_fn! {
    "closeListen" fn closeListen(listenComm: *mut c_void) {
        context::forget_listen(listenComm);
        // SAFETY: NCCL closes a comm it got from listen once, after its last accept on it
        // (plugin::close_listen checks the tag before freeing it).
        unsafe { plugin::close_listen(listenComm) }
    }
}

// --- fused devices and NCCL's hints (v9+, v11+) -----------------------------------------------

/// makeVDevice: `ndevs` of `devs` (the struct's room, which decides the limit) become one device.
fn make_vdevice_common(d: *mut c_int, ndevs: c_int, devs: &[c_int]) -> Result<()> {
    non_null!(d, "makeVDevice: d");
    let members = usize::try_from(ndevs).ok().and_then(|n| devs.get(..n)).ok_or_else(|| {
        Error::invalid_argument(format!(
            "makeVDevice of {ndevs} devices: accepted 1-{} distinct physical devices",
            devs.len()
        ))
    })?;
    let made = plugin::make_vdevice(members, devs.len())?;
    // SAFETY: NCCL passes a writable int (checked non-NULL).
    unsafe { *d = made };
    Ok(())
}

ffi_fn! {
    "makeVDevice" fn makeVDevice_v9(d: *mut c_int, props: *mut ncclNetVDeviceProps_v9_t) {
        non_null!(props, "makeVDevice: props");
        // SAFETY: NCCL passes its readable vProps struct of this version (checked non-NULL).
        let p = unsafe { *props };
        make_vdevice_common(d, p.ndevs, &p.devs)
    }
}

ffi_fn! {
    "makeVDevice" fn makeVDevice_v12(d: *mut c_int, props: *mut ncclNetVDeviceProps_v12_t) {
        non_null!(props, "makeVDevice: props");
        // SAFETY: NCCL passes its readable vProps struct of this version (checked non-NULL).
        let p = unsafe { *props };
        make_vdevice_common(d, p.ndevs, &p.devs)
    }
}

ffi_fn! {
    /// NCCL's hints for a communicator (peers, flows per peer, the operation now): kept in its
    /// context and logged. Stripes are not sized from them: NCCL passes a connection's hints to
    /// its connect and accept, after the listen that fixed its stripes (docs/ARCHITECTURE.md).
    "setNetAttr" fn setNetAttr(ctx: *mut c_void, netAttr: *mut ncclNetAttr_v11_t) {
        non_null!(ctx, "setNetAttr: ctx");
        non_null!(netAttr, "setNetAttr: netAttr");
        // SAFETY: NCCL passes a context init_v11 returned (the tag is checked) and its readable
        // attributes (checked non-NULL); v12's struct is the same type.
        let (c, attr) = unsafe { (Context::of(ctx, "setNetAttr")?, &*netAttr) };
        if let Some(c) = c {
            c.hint(attr);
        }
        Ok(())
    }
}

// --- the tables -------------------------------------------------------------------------------

/// NCCL matches NCCL_NET against this name.
const fn name() -> *const c_char {
    crate::name::NAME_C.as_ptr()
}

#[no_mangle]
pub static ncclNetPlugin_v5: ncclNet_v5_t = ncclNet_v5_t {
    name: name(),
    init: Some(init_v5::<5>),
    devices: Some(devices::<5>),
    getProperties: Some(props::get_properties_v6::<5>),
    listen: Some(listen::<5>),
    connect: Some(connect_v5::<5>),
    accept: Some(accept_v5::<5>),
    regMr: Some(regMr_v5::<5>),
    deregMr: Some(deregMr::<5>),
    isend: Some(isend_v5::<5>),
    irecv: Some(irecv_v5::<5>),
    iflush: Some(iflush::<5>),
    test: Some(test::<5>),
    closeSend: Some(closeSend::<5>),
    closeRecv: Some(closeRecv::<5>),
    closeListen: Some(closeListen::<5>),
};

#[no_mangle]
pub static ncclNetPlugin_v6: ncclNet_v6_t = ncclNet_v6_t {
    name: name(),
    init: Some(init_v5::<6>),
    devices: Some(devices::<6>),
    getProperties: Some(props::get_properties_v6::<6>),
    listen: Some(listen::<6>),
    connect: Some(connect_v5::<6>),
    accept: Some(accept_v5::<6>),
    regMr: Some(regMr_v5::<6>),
    regMrDmaBuf: None,
    deregMr: Some(deregMr::<6>),
    isend: Some(isend_v5::<6>),
    irecv: Some(irecv_v5::<6>),
    iflush: Some(iflush::<6>),
    test: Some(test::<6>),
    closeSend: Some(closeSend::<6>),
    closeRecv: Some(closeRecv::<6>),
    closeListen: Some(closeListen::<6>),
};

#[no_mangle]
pub static ncclNetPlugin_v7: ncclNet_v7_t = ncclNet_v7_t {
    name: name(),
    init: Some(init_v5::<7>),
    devices: Some(devices::<7>),
    getProperties: Some(props::get_properties_v7::<7>),
    listen: Some(listen::<7>),
    connect: Some(connect_v7::<7>),
    accept: Some(accept_v7::<7>),
    regMr: Some(regMr_v5::<7>),
    regMrDmaBuf: None,
    deregMr: Some(deregMr::<7>),
    isend: Some(isend_v5::<7>),
    irecv: Some(irecv_v5::<7>),
    iflush: Some(iflush::<7>),
    test: Some(test::<7>),
    closeSend: Some(closeSend::<7>),
    closeRecv: Some(closeRecv::<7>),
    closeListen: Some(closeListen::<7>),
    getDeviceMr: Some(getDeviceMr::<7>),
    irecvConsumed: Some(irecvConsumed::<7>),
};

#[no_mangle]
pub static ncclNetPlugin_v8: ncclNet_v8_t = ncclNet_v8_t {
    name: name(),
    init: Some(init_v5::<8>),
    devices: Some(devices::<8>),
    getProperties: Some(props::get_properties_v8::<8>),
    listen: Some(listen::<8>),
    connect: Some(connect_v7::<8>),
    accept: Some(accept_v7::<8>),
    regMr: Some(regMr_v8::<8>),
    regMrDmaBuf: None,
    deregMr: Some(deregMr::<8>),
    isend: Some(isend_v5::<8>),
    irecv: Some(irecv_v5::<8>),
    iflush: Some(iflush::<8>),
    test: Some(test::<8>),
    closeSend: Some(closeSend::<8>),
    closeRecv: Some(closeRecv::<8>),
    closeListen: Some(closeListen::<8>),
    getDeviceMr: Some(getDeviceMr::<8>),
    irecvConsumed: Some(irecvConsumed::<8>),
};

#[no_mangle]
pub static ncclNetPlugin_v9: ncclNet_v9_t = ncclNet_v9_t {
    name: name(),
    init: Some(init_v5::<9>),
    devices: Some(devices::<9>),
    getProperties: Some(props::get_properties_v9::<9>),
    listen: Some(listen::<9>),
    connect: Some(connect_v7::<9>),
    accept: Some(accept_v7::<9>),
    regMr: Some(regMr_v8::<9>),
    regMrDmaBuf: None,
    deregMr: Some(deregMr::<9>),
    isend: Some(isend_v9::<9>),
    irecv: Some(irecv_v9::<9>),
    iflush: Some(iflush::<9>),
    test: Some(test::<9>),
    closeSend: Some(closeSend::<9>),
    closeRecv: Some(closeRecv::<9>),
    closeListen: Some(closeListen::<9>),
    getDeviceMr: Some(getDeviceMr::<9>),
    irecvConsumed: Some(irecvConsumed::<9>),
    makeVDevice: Some(makeVDevice_v9::<9>),
};

#[no_mangle]
pub static ncclNetPlugin_v10: ncclNet_v10_t = ncclNet_v10_t {
    name: name(),
    init: Some(init_v10::<10>),
    devices: Some(devices::<10>),
    getProperties: Some(props::get_properties_v9::<10>),
    listen: Some(listen::<10>),
    connect: Some(connect_v10::<10>),
    accept: Some(accept_v7::<10>),
    regMr: Some(regMr_v8::<10>),
    regMrDmaBuf: None,
    deregMr: Some(deregMr::<10>),
    isend: Some(isend_v10::<10>),
    irecv: Some(irecv_v10::<10>),
    iflush: Some(iflush::<10>),
    test: Some(test::<10>),
    closeSend: Some(closeSend::<10>),
    closeRecv: Some(closeRecv::<10>),
    closeListen: Some(closeListen::<10>),
    getDeviceMr: Some(getDeviceMr::<10>),
    irecvConsumed: Some(irecvConsumed::<10>),
    makeVDevice: Some(makeVDevice_v9::<10>),
};

#[no_mangle]
pub static ncclNetPlugin_v11: ncclNet_v11_t = ncclNet_v11_t {
    name: name(),
    init: Some(init_v11::<11>),
    devices: Some(devices::<11>),
    getProperties: Some(props::get_properties_v11::<11>),
    listen: Some(listen_v11::<11>),
    connect: Some(connect_v11::<11>),
    accept: Some(accept_v7::<11>),
    regMr: Some(regMr_v8::<11>),
    regMrDmaBuf: None,
    deregMr: Some(deregMr::<11>),
    isend: Some(isend_v10::<11>),
    irecv: Some(irecv_v10::<11>),
    iflush: Some(iflush::<11>),
    test: Some(test::<11>),
    closeSend: Some(closeSend::<11>),
    closeRecv: Some(closeRecv::<11>),
    closeListen: Some(closeListen::<11>),
    getDeviceMr: Some(getDeviceMr::<11>),
    irecvConsumed: Some(irecvConsumed::<11>),
    makeVDevice: Some(makeVDevice_v9::<11>),
    finalize: Some(finalize::<11>),
    setNetAttr: Some(setNetAttr::<11>),
};

#[no_mangle]
pub static ncclNetPlugin_v12: ncclNet_v12_t = ncclNet_v12_t {
    name: name(),
    init: Some(init_v11::<12>),
    devices: Some(devices::<12>),
    getProperties: Some(props::get_properties_v12::<12>),
    listen: Some(listen_v11::<12>),
    connect: Some(connect_v11::<12>),
    accept: Some(accept_v7::<12>),
    regMr: Some(regMr_v8::<12>),
    regMrDmaBuf: None,
    deregMr: Some(deregMr::<12>),
    isend: Some(isend_v10::<12>),
    irecv: Some(irecv_v10::<12>),
    iflush: Some(iflush::<12>),
    test: Some(test::<12>),
    closeSend: Some(closeSend::<12>),
    closeRecv: Some(closeRecv::<12>),
    closeListen: Some(closeListen::<12>),
    getDeviceMr: Some(getDeviceMr::<12>),
    irecvConsumed: Some(irecvConsumed::<12>),
    makeVDevice: Some(makeVDevice_v12::<12>),
    finalize: Some(finalize::<12>),
    setNetAttr: Some(setNetAttr::<12>),
};
