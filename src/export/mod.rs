//! The `ncclNetPlugin_v5` … `_v12` tables NCCL looks up with dlsym: thin per-version adapters over
//! the core API in `plugin`. Each adapter only converts argument types (int vs size_t sizes,
//! property layouts, contexts); all behaviour lives in `plugin`.
#![allow(non_upper_case_globals, non_snake_case)]

pub mod guard;
mod props;

use crate::abi::*;
use crate::error::Error;
use crate::plugin;
use guard::{ffi_fn, non_null};
use std::ffi::{c_char, c_int, c_void};

/// NCCL matches NCCL_NET against this name.
pub const NAME: &std::ffi::CStr = c"tcpxr";

// --- init / finalize --------------------------------------------------------------------------

ffi_fn! { fn init_v5(logFunction: ncclDebugLogger_t) { plugin::init(logFunction) } }

ffi_fn! {
    fn init_v10(logFunction: ncclDebugLogger_t, _profFunction: ncclProfilerCallback_t) {
        plugin::init(logFunction)
    }
}

/// A v11+ context: one per communicator, counted so the last finalize is known.
struct Context {
    comm_id: u64,
}

ffi_fn! {
    fn init_v11(
        ctx: *mut *mut c_void,
        commId: u64,
        _config: *mut ncclNetCommConfig_v11_t,
        logFunction: ncclDebugLogger_t,
        _profFunction: ncclProfilerCallback_t,
    ) {
        non_null!(ctx, "init: ctx");
        *ctx = std::ptr::null_mut();
        plugin::init(logFunction)?;
        let open = plugin::context_opened();
        log::debug!("init for communicator {commId:#x} ({open} open)");
        *ctx = Box::into_raw(Box::new(Context { comm_id: commId })) as *mut c_void;
        Ok(())
    }
}

ffi_fn! {
    fn finalize(ctx: *mut c_void) {
        non_null!(ctx, "finalize: ctx");
        let ctx = Box::from_raw(ctx as *mut Context);
        let open = plugin::context_closed();
        log::debug!("finalize for communicator {:#x} ({open} still open)", ctx.comm_id);
        Ok(())
    }
}

ffi_fn! {
    fn devices(ndev: *mut c_int) {
        non_null!(ndev, "devices: ndev");
        *ndev = plugin::device_count()? as c_int;
        Ok(())
    }
}

// --- listen / connect / accept ----------------------------------------------------------------

ffi_fn! {
    fn listen(dev: c_int, handle: *mut c_void, listenComm: *mut *mut c_void) {
        non_null!(handle, "listen: handle");
        non_null!(listenComm, "listen: listenComm");
        *listenComm = plugin::listen(dev, handle)?;
        Ok(())
    }
}

ffi_fn! {
    fn listen_v11(_ctx: *mut c_void, dev: c_int, handle: *mut c_void, listenComm: *mut *mut c_void) {
        non_null!(handle, "listen: handle");
        non_null!(listenComm, "listen: listenComm");
        *listenComm = plugin::listen(dev, handle)?;
        Ok(())
    }
}

unsafe fn connect_common(
    dev: c_int,
    handle: *mut c_void,
    send: *mut *mut c_void,
    max: usize,
) -> crate::error::Result<()> {
    non_null!(handle, "connect: handle");
    non_null!(send, "connect: sendComm");
    *send = std::ptr::null_mut();
    *send = plugin::connect(dev, handle, max)?;
    Ok(())
}

ffi_fn! {
    fn connect_v5(dev: c_int, handle: *mut c_void, sendComm: *mut *mut c_void) {
        connect_common(dev, handle, sendComm, NCCL_NET_MAX_REQUESTS_V6)
    }
}

ffi_fn! {
    fn connect_v7(dev: c_int, handle: *mut c_void, sendComm: *mut *mut c_void, _devComm: *mut *mut ncclNetDeviceHandle_v7_t) {
        connect_common(dev, handle, sendComm, NCCL_NET_MAX_REQUESTS)
    }
}

ffi_fn! {
    fn connect_v10(
        dev: c_int,
        _config: *mut ncclNetCommConfig_v10_t,
        handle: *mut c_void,
        sendComm: *mut *mut c_void,
        _devComm: *mut *mut ncclNetDeviceHandle_v10_t,
    ) {
        connect_common(dev, handle, sendComm, NCCL_NET_MAX_REQUESTS)
    }
}

ffi_fn! {
    fn connect_v11(
        _ctx: *mut c_void,
        dev: c_int,
        handle: *mut c_void,
        sendComm: *mut *mut c_void,
        _devComm: *mut *mut ncclNetDeviceHandle_v11_t,
    ) {
        connect_common(dev, handle, sendComm, NCCL_NET_MAX_REQUESTS)
    }
}

unsafe fn accept_common(listen: *mut c_void, recv: *mut *mut c_void, max: usize) -> crate::error::Result<()> {
    non_null!(recv, "accept: recvComm");
    *recv = std::ptr::null_mut();
    *recv = plugin::accept(listen, max)?;
    Ok(())
}

ffi_fn! {
    fn accept_v5(listenComm: *mut c_void, recvComm: *mut *mut c_void) {
        accept_common(listenComm, recvComm, NCCL_NET_MAX_REQUESTS_V6)
    }
}

ffi_fn! {
    fn accept_v7(listenComm: *mut c_void, recvComm: *mut *mut c_void, _devComm: *mut *mut ncclNetDeviceHandle_v7_t) {
        accept_common(listenComm, recvComm, NCCL_NET_MAX_REQUESTS)
    }
}

// --- memory registration ----------------------------------------------------------------------

ffi_fn! {
    fn regMr_v5(comm: *mut c_void, data: *mut c_void, size: c_int, type_: c_int, mhandle: *mut *mut c_void) {
        non_null!(mhandle, "regMr: mhandle");
        if size < 0 {
            return Err(Error::invalid_argument(format!("regMr of {size} bytes: a size must not be negative")));
        }
        *mhandle = plugin::reg_mr(comm, data, size as usize, type_)?;
        Ok(())
    }
}

ffi_fn! {
    fn regMr_v8(comm: *mut c_void, data: *mut c_void, size: usize, type_: c_int, mhandle: *mut *mut c_void) {
        non_null!(mhandle, "regMr: mhandle");
        *mhandle = plugin::reg_mr(comm, data, size, type_)?;
        Ok(())
    }
}

ffi_fn! { fn deregMr(comm: *mut c_void, mhandle: *mut c_void) { plugin::dereg_mr(comm, mhandle) } }

// --- isend / irecv / iflush / test ------------------------------------------------------------

unsafe fn isend_common(
    comm: *mut c_void,
    data: *mut c_void,
    size: usize,
    mhandle: *mut c_void,
    request: *mut *mut c_void,
) -> crate::error::Result<()> {
    non_null!(request, "isend: request");
    *request = std::ptr::null_mut();
    *request = plugin::isend(comm, data, size, mhandle)?;
    Ok(())
}

ffi_fn! {
    fn isend_v5(sendComm: *mut c_void, data: *mut c_void, size: c_int, _tag: c_int, mhandle: *mut c_void, request: *mut *mut c_void) {
        if size < 0 {
            if !request.is_null() {
                *request = std::ptr::null_mut();
            }
            return Err(Error::invalid_argument(format!("isend of {size} bytes: a size must not be negative")));
        }
        isend_common(sendComm, data, size as usize, mhandle, request)
    }
}

ffi_fn! {
    fn isend_v9(sendComm: *mut c_void, data: *mut c_void, size: usize, _tag: c_int, mhandle: *mut c_void, request: *mut *mut c_void) {
        isend_common(sendComm, data, size, mhandle, request)
    }
}

ffi_fn! {
    fn isend_v10(
        sendComm: *mut c_void,
        data: *mut c_void,
        size: usize,
        _tag: c_int,
        mhandle: *mut c_void,
        _phandle: *mut c_void,
        request: *mut *mut c_void,
    ) {
        isend_common(sendComm, data, size, mhandle, request)
    }
}

unsafe fn irecv_common(
    comm: *mut c_void,
    n: c_int,
    data: *mut *mut c_void,
    mhandles: *mut *mut c_void,
    size_of: impl Fn(usize) -> crate::error::Result<usize>,
    request: *mut *mut c_void,
) -> crate::error::Result<()> {
    non_null!(request, "irecv: request");
    // NCCL may preset *request (v11+: NCCL_NET_OPTIONAL_RECV_COMPLETION); always overwrite it.
    *request = std::ptr::null_mut();
    non_null!(data, "irecv: data");
    if !(1..=8).contains(&n) {
        return Err(Error::internal(format!(
            "irecv with n={n}: tcpxr reports maxRecvs=1 and takes n=1"
        )));
    }
    let n = n as usize;
    let buffers = std::slice::from_raw_parts(data, n);
    let sizes = (0..n).map(&size_of).collect::<crate::error::Result<Vec<usize>>>()?;
    let mhandles = if mhandles.is_null() {
        &[][..]
    } else {
        std::slice::from_raw_parts(mhandles, n)
    };
    *request = plugin::irecv(comm, buffers, &sizes, mhandles)?;
    Ok(())
}

ffi_fn! {
    fn irecv_v5(
        recvComm: *mut c_void,
        n: c_int,
        data: *mut *mut c_void,
        sizes: *mut c_int,
        _tags: *mut c_int,
        mhandles: *mut *mut c_void,
        request: *mut *mut c_void,
    ) {
        non_null!(sizes, "irecv: sizes");
        irecv_common(recvComm, n, data, mhandles, |i| {
            let s = *sizes.add(i);
            usize::try_from(s).map_err(|_| Error::invalid_argument(format!("irecv of {s} bytes: a size must not be negative")))
        }, request)
    }
}

ffi_fn! {
    fn irecv_v9(
        recvComm: *mut c_void,
        n: c_int,
        data: *mut *mut c_void,
        sizes: *mut usize,
        _tags: *mut c_int,
        mhandles: *mut *mut c_void,
        request: *mut *mut c_void,
    ) {
        non_null!(sizes, "irecv: sizes");
        irecv_common(recvComm, n, data, mhandles, |i| Ok(*sizes.add(i)), request)
    }
}

ffi_fn! {
    fn irecv_v10(
        recvComm: *mut c_void,
        n: c_int,
        data: *mut *mut c_void,
        sizes: *mut usize,
        _tags: *mut c_int,
        mhandles: *mut *mut c_void,
        _phandles: *mut *mut c_void,
        request: *mut *mut c_void,
    ) {
        non_null!(sizes, "irecv: sizes");
        irecv_common(recvComm, n, data, mhandles, |i| Ok(*sizes.add(i)), request)
    }
}

ffi_fn! {
    /// Nothing to flush: test() reports a receive done only once its bytes are in place, for GPU
    /// buffers after the unpack kernel's event has completed (its writes are then visible to any
    /// later kernel). A NULL request tells NCCL the flush is complete.
    fn iflush(
        _recvComm: *mut c_void,
        _n: c_int,
        _data: *mut *mut c_void,
        _sizes: *mut c_int,
        _mhandles: *mut *mut c_void,
        request: *mut *mut c_void,
    ) {
        non_null!(request, "iflush: request");
        *request = std::ptr::null_mut();
        Ok(())
    }
}

ffi_fn! {
    fn test(request: *mut c_void, done: *mut c_int, sizes: *mut c_int) {
        non_null!(done, "test: done");
        plugin::test(request, &mut *done, sizes)
    }
}

ffi_fn! { fn closeSend(sendComm: *mut c_void) { plugin::close_send(sendComm) } }
ffi_fn! { fn closeRecv(recvComm: *mut c_void) { plugin::close_recv(recvComm) } }
ffi_fn! { fn closeListen(listenComm: *mut c_void) { plugin::close_listen(listenComm) } }

// --- the tables -------------------------------------------------------------------------------

const fn name() -> *const c_char {
    NAME.as_ptr()
}

#[no_mangle]
pub static ncclNetPlugin_v5: ncclNet_v5_t = ncclNet_v5_t {
    name: name(),
    init: Some(init_v5),
    devices: Some(devices),
    getProperties: Some(props::get_properties_v6),
    listen: Some(listen),
    connect: Some(connect_v5),
    accept: Some(accept_v5),
    regMr: Some(regMr_v5),
    deregMr: Some(deregMr),
    isend: Some(isend_v5),
    irecv: Some(irecv_v5),
    iflush: Some(iflush),
    test: Some(test),
    closeSend: Some(closeSend),
    closeRecv: Some(closeRecv),
    closeListen: Some(closeListen),
};

#[no_mangle]
pub static ncclNetPlugin_v6: ncclNet_v6_t = ncclNet_v6_t {
    name: name(),
    init: Some(init_v5),
    devices: Some(devices),
    getProperties: Some(props::get_properties_v6),
    listen: Some(listen),
    connect: Some(connect_v5),
    accept: Some(accept_v5),
    regMr: Some(regMr_v5),
    regMrDmaBuf: None,
    deregMr: Some(deregMr),
    isend: Some(isend_v5),
    irecv: Some(irecv_v5),
    iflush: Some(iflush),
    test: Some(test),
    closeSend: Some(closeSend),
    closeRecv: Some(closeRecv),
    closeListen: Some(closeListen),
};

#[no_mangle]
pub static ncclNetPlugin_v7: ncclNet_v7_t = ncclNet_v7_t {
    name: name(),
    init: Some(init_v5),
    devices: Some(devices),
    getProperties: Some(props::get_properties_v7),
    listen: Some(listen),
    connect: Some(connect_v7),
    accept: Some(accept_v7),
    regMr: Some(regMr_v5),
    regMrDmaBuf: None,
    deregMr: Some(deregMr),
    isend: Some(isend_v5),
    irecv: Some(irecv_v5),
    iflush: Some(iflush),
    test: Some(test),
    closeSend: Some(closeSend),
    closeRecv: Some(closeRecv),
    closeListen: Some(closeListen),
    getDeviceMr: None,
    irecvConsumed: None,
};

#[no_mangle]
pub static ncclNetPlugin_v8: ncclNet_v8_t = ncclNet_v8_t {
    name: name(),
    init: Some(init_v5),
    devices: Some(devices),
    getProperties: Some(props::get_properties_v8),
    listen: Some(listen),
    connect: Some(connect_v7),
    accept: Some(accept_v7),
    regMr: Some(regMr_v8),
    regMrDmaBuf: None,
    deregMr: Some(deregMr),
    isend: Some(isend_v5),
    irecv: Some(irecv_v5),
    iflush: Some(iflush),
    test: Some(test),
    closeSend: Some(closeSend),
    closeRecv: Some(closeRecv),
    closeListen: Some(closeListen),
    getDeviceMr: None,
    irecvConsumed: None,
};

#[no_mangle]
pub static ncclNetPlugin_v9: ncclNet_v9_t = ncclNet_v9_t {
    name: name(),
    init: Some(init_v5),
    devices: Some(devices),
    getProperties: Some(props::get_properties_v9),
    listen: Some(listen),
    connect: Some(connect_v7),
    accept: Some(accept_v7),
    regMr: Some(regMr_v8),
    regMrDmaBuf: None,
    deregMr: Some(deregMr),
    isend: Some(isend_v9),
    irecv: Some(irecv_v9),
    iflush: Some(iflush),
    test: Some(test),
    closeSend: Some(closeSend),
    closeRecv: Some(closeRecv),
    closeListen: Some(closeListen),
    getDeviceMr: None,
    irecvConsumed: None,
    makeVDevice: None,
};

#[no_mangle]
pub static ncclNetPlugin_v10: ncclNet_v10_t = ncclNet_v10_t {
    name: name(),
    init: Some(init_v10),
    devices: Some(devices),
    getProperties: Some(props::get_properties_v9),
    listen: Some(listen),
    connect: Some(connect_v10),
    accept: Some(accept_v7),
    regMr: Some(regMr_v8),
    regMrDmaBuf: None,
    deregMr: Some(deregMr),
    isend: Some(isend_v10),
    irecv: Some(irecv_v10),
    iflush: Some(iflush),
    test: Some(test),
    closeSend: Some(closeSend),
    closeRecv: Some(closeRecv),
    closeListen: Some(closeListen),
    getDeviceMr: None,
    irecvConsumed: None,
    makeVDevice: None,
};

#[no_mangle]
pub static ncclNetPlugin_v11: ncclNet_v11_t = ncclNet_v11_t {
    name: name(),
    init: Some(init_v11),
    devices: Some(devices),
    getProperties: Some(props::get_properties_v11),
    listen: Some(listen_v11),
    connect: Some(connect_v11),
    accept: Some(accept_v7),
    regMr: Some(regMr_v8),
    regMrDmaBuf: None,
    deregMr: Some(deregMr),
    isend: Some(isend_v10),
    irecv: Some(irecv_v10),
    iflush: Some(iflush),
    test: Some(test),
    closeSend: Some(closeSend),
    closeRecv: Some(closeRecv),
    closeListen: Some(closeListen),
    getDeviceMr: None,
    irecvConsumed: None,
    makeVDevice: None,
    finalize: Some(finalize),
    setNetAttr: None,
};

#[no_mangle]
pub static ncclNetPlugin_v12: ncclNet_v12_t = ncclNet_v12_t {
    name: name(),
    init: Some(init_v11),
    devices: Some(devices),
    getProperties: Some(props::get_properties_v12),
    listen: Some(listen_v11),
    connect: Some(connect_v11),
    accept: Some(accept_v7),
    regMr: Some(regMr_v8),
    regMrDmaBuf: None,
    deregMr: Some(deregMr),
    isend: Some(isend_v10),
    irecv: Some(irecv_v10),
    iflush: Some(iflush),
    test: Some(test),
    closeSend: Some(closeSend),
    closeRecv: Some(closeRecv),
    closeListen: Some(closeListen),
    getDeviceMr: None,
    irecvConsumed: None,
    makeVDevice: None,
    finalize: Some(finalize),
    setNetAttr: None,
};
