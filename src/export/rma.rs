//! The `ncclRmaPlugin_v14` table NCCL 2.30 finds in the net plugin's library (after
//! NCCL_RMA_PLUGIN, libnccl-rma.so and the GIN plugin's library), and the v15-v17 tables of
//! NVIDIA/nccl's later headers (v15: `optFlags` on iput, iputSignal and iget; v16:
//! getRmaProperties; v17: NCCL's abort flag on connect, a list of peers in createContext's
//! config): thin adapters over `crate::rma`, each writing its out-parameters (NULL first, so a
//! refused call leaves no stale value) inside the one panic-safe boundary.
#![allow(non_upper_case_globals, non_snake_case)]

use super::guard::{ffi_fn, non_null};
use crate::abi::*;
use crate::error::Error;
use crate::rma::{self, Abort, At, Reach, SignalArgs};
use std::ffi::{c_int, c_void};

ffi_fn! {
    "ncclRma" / "init" fn init(ctx: *mut *mut c_void, commId: u64, logFunction: ncclDebugLogger_t) {
        non_null!(ctx, "init: ctx");
        // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
        unsafe { *ctx = std::ptr::null_mut() };
        let token = rma::init(logFunction, commId)?;
        // SAFETY: as above.
        unsafe { *ctx = token };
        Ok(())
    }
}

ffi_fn! {
    "ncclRma" / "finalize" fn finalize(ctx: *mut c_void) { rma::finalize(ctx) }
}

ffi_fn! {
    "ncclRma" / "devices" fn devices(ndev: *mut c_int) {
        non_null!(ndev, "devices: ndev");
        let n = rma::devices()?.len() as c_int;
        // SAFETY: NCCL passes a writable int (checked non-NULL).
        unsafe { *ndev = n };
        Ok(())
    }
}

ffi_fn! {
    "ncclRma" / "getProperties" fn get_properties(dev: c_int, props: *mut ncclNetProperties_v12_t) {
        non_null!(props, "getProperties: props");
        let d = rma::device(dev)?;
        let mut devs = [0; NCCL_NET_MAX_DEVS_PER_NIC_V12];
        devs[0] = dev;
        let p = ncclNetProperties_v12_t {
            // NCCL only reads these strings; they live as long as the process.
            name: d.name.as_ptr() as *mut _,
            pciPath: d.pci_path.as_ref().map_or(std::ptr::null_mut(), |s| s.as_ptr() as *mut _),
            guid: d.guid,
            ptrSupport: rma::PTR_SUPPORT,
            regIsGlobal: 0,
            forceFlush: 0,
            speed: d.speed_mbps,
            port: 0,
            latency: 0.0,
            maxComms: 65536,
            // NCCL's GIN and RMA proxies keep 32 x maxRecvs operations in flight per peer.
            maxRecvs: 8,
            netDeviceType: NCCL_NET_DEVICE_GIN_PROXY,
            netDeviceVersion: NCCL_NET_DEVICE_INVALID_VERSION,
            vProps: ncclNetVDeviceProps_v12_t { ndevs: 1, devs },
            maxP2pBytes: MAX_NET_SIZE,
            maxCollBytes: MAX_NET_SIZE,
            maxMultiRequestSize: 1,
            railId: NCCL_NET_ID_UNDEF,
            planeId: NCCL_NET_ID_UNDEF,
        };
        // SAFETY: NCCL passes room for one v12 properties struct (checked non-NULL).
        unsafe { *props = p };
        Ok(())
    }
}

ffi_fn! {
    "ncclRma" / "listen" fn listen(_ctx: *mut c_void, dev: c_int, handle: *mut c_void, listenComm: *mut *mut c_void) {
        non_null!(handle, "listen: handle");
        non_null!(listenComm, "listen: listenComm");
        // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
        unsafe { *listenComm = std::ptr::null_mut() };
        // SAFETY: NCCL passes its NCCL_NET_HANDLE_MAXSIZE-byte handle buffer (checked non-NULL),
        // untouched by NCCL until listen returns; a byte array needs no alignment.
        let bytes = unsafe { &mut *(handle as *mut [u8; NCCL_NET_HANDLE_MAXSIZE]) };
        let l = rma::listen(dev, bytes)?;
        // SAFETY: as for the first write.
        unsafe { *listenComm = l };
        Ok(())
    }
}

/// connect of every version: `*collComm` NULL first, then the group.
fn connect_common(
    handles: *mut *mut c_void,
    nranks: c_int,
    rank: c_int,
    listen_comm: *mut c_void,
    coll_comm: *mut *mut c_void,
    abort: Abort,
) -> crate::error::Result<()> {
    non_null!(handles, "connect: handles");
    non_null!(coll_comm, "connect: collComm");
    // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
    unsafe { *coll_comm = std::ptr::null_mut() };
    let n = usize::try_from(nranks)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Error::invalid_argument(format!("connect: nranks {nranks} is not positive")))?;
    let mut copies = Vec::with_capacity(n);
    for r in 0..n {
        // SAFETY: NCCL passes an array of `nranks` handle pointers (checked non-NULL).
        let h = unsafe { *handles.add(r) };
        non_null!(h, "connect: a rank's handle");
        // SAFETY: each points to a NCCL_NET_HANDLE_MAXSIZE-byte handle NCCL gathered.
        copies.push(unsafe { *(h as *const [u8; NCCL_NET_HANDLE_MAXSIZE]) });
    }
    let coll = rma::connect(&copies, rank, listen_comm, abort)?;
    // SAFETY: as for the first write.
    unsafe { *coll_comm = coll };
    Ok(())
}

ffi_fn! {
    // `ctx` is not read: NCCL's host RMA path passes the net plugin's context here, not ours.
    "ncclRma" / "connect" fn connect(
        _ctx: *mut c_void,
        handles: *mut *mut c_void,
        nranks: c_int,
        rank: c_int,
        listenComm: *mut c_void,
        collComm: *mut *mut c_void,
    ) {
        connect_common(handles, nranks, rank, listenComm, collComm, Abort::NONE)
    }
}

ffi_fn! {
    "ncclRma" / "connect" fn connect_v17(
        _ctx: *mut c_void,
        handles: *mut *mut c_void,
        nranks: c_int,
        rank: c_int,
        listenComm: *mut c_void,
        collComm: *mut *mut c_void,
        abortFlag: *mut u32,
    ) {
        // SAFETY: NCCL keeps its abort flag (or NULL) readable while connect runs.
        let abort = unsafe { Abort::from_ptr(abortFlag) };
        connect_common(handles, nranks, rank, listenComm, collComm, abort)
    }
}

ffi_fn! {
    "ncclRma" / "createContext" fn create_context(collComm: *mut c_void, config: *mut ncclRmaConfig_v14_t, rmaCtx: *mut *mut c_void) {
        non_null!(config, "createContext: config");
        non_null!(rmaCtx, "createContext: rmaCtx");
        // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
        unsafe { *rmaCtx = std::ptr::null_mut() };
        // SAFETY: NCCL passes its readable config (checked non-NULL).
        let c = unsafe { *config };
        let ctx = rma::create_context(collComm, c.nContexts, Reach::Stride(c.rankStride))?;
        // SAFETY: as for the first write.
        unsafe { *rmaCtx = ctx };
        Ok(())
    }
}

ffi_fn! {
    "ncclRma" / "createContext" fn create_context_v17(collComm: *mut c_void, config: *mut ncclRmaConfig_v17_t, rmaCtx: *mut *mut c_void) {
        non_null!(config, "createContext: config");
        non_null!(rmaCtx, "createContext: rmaCtx");
        // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
        unsafe { *rmaCtx = std::ptr::null_mut() };
        // SAFETY: NCCL passes its readable config (checked non-NULL).
        let c = unsafe { *config };
        let count = usize::try_from(c.peerArrayCount).map_err(|_| {
            Error::invalid_argument(format!("createContext: peerArrayCount {} is negative", c.peerArrayCount))
        })?;
        let peers: &[c_int] = if count == 0 {
            &[]
        } else {
            non_null!(c.peerArray, "createContext: peerArray (with a positive peerArrayCount)");
            // SAFETY: NCCL's config points to `peerArrayCount` ints (checked non-NULL), read
            // only during this call.
            unsafe { std::slice::from_raw_parts(c.peerArray, count) }
        };
        let ctx = rma::create_context(collComm, c.nContexts, Reach::Peers(peers))?;
        // SAFETY: as for the first write.
        unsafe { *rmaCtx = ctx };
        Ok(())
    }
}

ffi_fn! {
    "ncclRma" / "getRmaProperties" fn get_rma_properties(collComm: *mut c_void, rmaProps: *mut ncclRmaProperties_v16_t) {
        non_null!(rmaProps, "getRmaProperties: rmaProps");
        let flushes = rma::flushes_all_puts_on_any_signal(collComm)?;
        // SAFETY: NCCL passes room for its properties struct (checked non-NULL).
        unsafe { *rmaProps = ncclRmaProperties_v16_t { flushesAllPutsOnAnySignal: flushes } };
        Ok(())
    }
}

/// Writes `*mhandle` for regMrSym and regMrSymDmaBuf.
fn reg_common(
    coll: *mut c_void,
    data: *mut c_void,
    size: usize,
    ty: c_int,
    flags: u64,
    mhandle: *mut *mut c_void,
) -> crate::error::Result<()> {
    non_null!(mhandle, "regMrSym: mhandle");
    // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
    unsafe { *mhandle = std::ptr::null_mut() };
    let mh = rma::reg(coll, data, size, ty, flags)?;
    // SAFETY: as above.
    unsafe { *mhandle = mh };
    Ok(())
}

ffi_fn! {
    "ncclRma" / "regMrSym" fn reg_mr_sym(collComm: *mut c_void, data: *mut c_void, size: usize, type_: c_int, mrFlags: u64, mhandle: *mut *mut c_void) {
        reg_common(collComm, data, size, type_, mrFlags, mhandle)
    }
}

ffi_fn! {
    // The DMA-BUF descriptor is not needed: tcpxr's CPU reaches the memory by its address.
    "ncclRma" / "regMrSymDmaBuf" fn reg_mr_sym_dma_buf(
        collComm: *mut c_void,
        data: *mut c_void,
        size: usize,
        type_: c_int,
        _offset: u64,
        _fd: c_int,
        mrFlags: u64,
        mhandle: *mut *mut c_void,
    ) {
        reg_common(collComm, data, size, type_, mrFlags, mhandle)
    }
}

ffi_fn! {
    "ncclRma" / "deregMrSym" fn dereg_mr_sym(collComm: *mut c_void, mhandle: *mut c_void) { rma::dereg(collComm, mhandle) }
}

ffi_fn! {
    "ncclRma" / "destroyContext" fn destroy_context(rmaCtx: *mut c_void) { rma::destroy_context(rmaCtx) }
}

ffi_fn! {
    "ncclRma" / "closeColl" fn close_coll(collComm: *mut c_void) { rma::close_group(collComm) }
}

ffi_fn! {
    "ncclRma" / "closeListen" fn close_listen(listenComm: *mut c_void) { rma::close_listen(listenComm) }
}

/// Writes `*request` (NULL first, then the operation's request).
fn post(
    request: *mut *mut c_void,
    what: &'static str,
    op: impl FnOnce() -> crate::error::Result<*mut c_void>,
) -> crate::error::Result<()> {
    if request.is_null() {
        return Err(Error::invalid_argument(format!("{what}: request is NULL")));
    }
    // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
    unsafe { *request = std::ptr::null_mut() };
    let r = op()?;
    // SAFETY: as above.
    unsafe { *request = r };
    Ok(())
}

/// A memory handle and offset; None where NCCL passes no handle.
fn at(mhandle: *mut c_void, offset: u64) -> Option<At> {
    (!mhandle.is_null()).then_some(At { mhandle, offset })
}

/// iputSignal's signal: the operation and where it lands.
fn signal_args(
    mhandle: *mut c_void,
    offset: u64,
    value: u64,
    op: u32,
    strong: bool,
) -> crate::error::Result<SignalArgs> {
    let add = match op {
        NCCL_NET_SIGNAL_OP_INC => 1,
        NCCL_NET_SIGNAL_OP_ADD => value,
        other => {
            return Err(Error::invalid_argument(format!(
                "iputSignal: signalOp {other} is neither NCCL_NET_SIGNAL_OP_INC nor NCCL_NET_SIGNAL_OP_ADD"
            )))
        }
    };
    let at = at(mhandle, offset).ok_or_else(|| Error::invalid_argument("iputSignal: signalMhandle is NULL"))?;
    Ok(SignalArgs { at, add, strong })
}

/// iget of every version, once the flags are checked.
#[allow(clippy::too_many_arguments)]
fn get_common(
    ctx: *mut c_void,
    context: c_int,
    remote_off: u64,
    remote_mhandle: *mut c_void,
    size: usize,
    local_off: u64,
    local_mhandle: *mut c_void,
    rank: u32,
) -> crate::error::Result<*mut c_void> {
    let remote =
        at(remote_mhandle, remote_off).ok_or_else(|| Error::invalid_argument("iget: remoteMhandle is NULL"))?;
    let local = at(local_mhandle, local_off).ok_or_else(|| Error::invalid_argument("iget: localMhandle is NULL"))?;
    rma::get(ctx, context, remote, size, local, rank)
}

ffi_fn! {
    "ncclRma" / "iput" fn iput(
        rmaCtx: *mut c_void,
        context: c_int,
        srcOff: u64,
        srcMhandle: *mut c_void,
        size: usize,
        dstOff: u64,
        dstMhandle: *mut c_void,
        rank: u32,
        request: *mut *mut c_void,
    ) {
        post(request, "iput", || rma::put(rmaCtx, context, at(srcMhandle, srcOff), size, at(dstMhandle, dstOff), rank, None))
    }
}

ffi_fn! {
    "ncclRma" / "iput" fn iput_v15(
        rmaCtx: *mut c_void,
        context: c_int,
        srcOff: u64,
        srcMhandle: *mut c_void,
        size: usize,
        dstOff: u64,
        dstMhandle: *mut c_void,
        rank: u32,
        optFlags: u32,
        request: *mut *mut c_void,
    ) {
        post(request, "iput", || {
            rma::check_opt_flags(optFlags, "iput")?;
            rma::put(rmaCtx, context, at(srcMhandle, srcOff), size, at(dstMhandle, dstOff), rank, None)
        })
    }
}

ffi_fn! {
    "ncclRma" / "iputSignal" fn iput_signal(
        rmaCtx: *mut c_void,
        context: c_int,
        srcOff: u64,
        srcMhandle: *mut c_void,
        size: usize,
        dstOff: u64,
        dstMhandle: *mut c_void,
        rank: u32,
        signalOff: u64,
        signalMhandle: *mut c_void,
        signalValue: u64,
        signalOp: u32,
        isStrongSignal: bool,
        request: *mut *mut c_void,
    ) {
        post(request, "iputSignal", || {
            let signal = signal_args(signalMhandle, signalOff, signalValue, signalOp, isStrongSignal)?;
            rma::put(rmaCtx, context, at(srcMhandle, srcOff), size, at(dstMhandle, dstOff), rank, Some(signal))
        })
    }
}

ffi_fn! {
    "ncclRma" / "iputSignal" fn iput_signal_v15(
        rmaCtx: *mut c_void,
        context: c_int,
        srcOff: u64,
        srcMhandle: *mut c_void,
        size: usize,
        dstOff: u64,
        dstMhandle: *mut c_void,
        rank: u32,
        signalOff: u64,
        signalMhandle: *mut c_void,
        signalValue: u64,
        signalOp: u32,
        isStrongSignal: bool,
        optFlags: u32,
        request: *mut *mut c_void,
    ) {
        post(request, "iputSignal", || {
            rma::check_opt_flags(optFlags, "iputSignal")?;
            let signal = signal_args(signalMhandle, signalOff, signalValue, signalOp, isStrongSignal)?;
            rma::put(rmaCtx, context, at(srcMhandle, srcOff), size, at(dstMhandle, dstOff), rank, Some(signal))
        })
    }
}

ffi_fn! {
    "ncclRma" / "iget" fn iget(
        rmaCtx: *mut c_void,
        context: c_int,
        remoteOff: u64,
        remoteMhandle: *mut c_void,
        size: usize,
        localOff: u64,
        localMhandle: *mut c_void,
        rank: u32,
        request: *mut *mut c_void,
    ) {
        post(request, "iget", || get_common(rmaCtx, context, remoteOff, remoteMhandle, size, localOff, localMhandle, rank))
    }
}

ffi_fn! {
    "ncclRma" / "iget" fn iget_v15(
        rmaCtx: *mut c_void,
        context: c_int,
        remoteOff: u64,
        remoteMhandle: *mut c_void,
        size: usize,
        localOff: u64,
        localMhandle: *mut c_void,
        rank: u32,
        optFlags: u32,
        request: *mut *mut c_void,
    ) {
        post(request, "iget", || {
            rma::check_opt_flags(optFlags, "iget")?;
            get_common(rmaCtx, context, remoteOff, remoteMhandle, size, localOff, localMhandle, rank)
        })
    }
}

ffi_fn! {
    // NULL is a request done at once (NCCL's GIN proxy reads it so).
    "ncclRma" / "iflush" fn iflush(rmaCtx: *mut c_void, context: c_int, _mhandle: *mut c_void, rank: u32, request: *mut *mut c_void) {
        non_null!(request, "iflush: request");
        // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
        unsafe { *request = std::ptr::null_mut() };
        let r = rma::flush(rmaCtx, context, rank)?;
        // SAFETY: as above.
        unsafe { *request = r.unwrap_or(std::ptr::null_mut()) };
        Ok(())
    }
}

ffi_fn! {
    "ncclRma" / "test" fn test(collComm: *mut c_void, request: *mut c_void, done: *mut c_int) {
        non_null!(done, "test: done");
        // SAFETY: NCCL passes a writable int (checked non-NULL).
        unsafe { *done = 0 };
        let d = rma::test(collComm, request)?;
        // SAFETY: as above.
        unsafe { *done = c_int::from(d) };
        Ok(())
    }
}

ffi_fn! {
    "ncclRma" / "rmaProgress" fn rma_progress(rmaCtx: *mut c_void) { rma::progress(rmaCtx) }
}

ffi_fn! {
    "ncclRma" / "queryLastError" fn query_last_error(rmaCtx: *mut c_void, hasError: *mut bool) {
        non_null!(hasError, "queryLastError: hasError");
        let e = rma::has_error(rmaCtx)?;
        // SAFETY: NCCL passes a writable bool (checked non-NULL).
        unsafe { *hasError = e };
        Ok(())
    }
}

#[no_mangle]
pub static ncclRmaPlugin_v14: ncclRma_v14_t = ncclRma_v14_t {
    name: crate::name::NAME_C.as_ptr(),
    init: Some(init::<14>),
    devices: Some(devices::<14>),
    getProperties: Some(get_properties::<14>),
    listen: Some(listen::<14>),
    connect: Some(connect::<14>),
    createContext: Some(create_context::<14>),
    regMrSym: Some(reg_mr_sym::<14>),
    regMrSymDmaBuf: Some(reg_mr_sym_dma_buf::<14>),
    deregMrSym: Some(dereg_mr_sym::<14>),
    destroyContext: Some(destroy_context::<14>),
    closeColl: Some(close_coll::<14>),
    closeListen: Some(close_listen::<14>),
    iput: Some(iput::<14>),
    iputSignal: Some(iput_signal::<14>),
    iget: Some(iget::<14>),
    iflush: Some(iflush::<14>),
    test: Some(test::<14>),
    rmaProgress: Some(rma_progress::<14>),
    queryLastError: Some(query_last_error::<14>),
    finalize: Some(finalize::<14>),
};

#[no_mangle]
pub static ncclRmaPlugin_v15: ncclRma_v15_t = ncclRma_v15_t {
    name: crate::name::NAME_C.as_ptr(),
    init: Some(init::<15>),
    devices: Some(devices::<15>),
    getProperties: Some(get_properties::<15>),
    listen: Some(listen::<15>),
    connect: Some(connect::<15>),
    createContext: Some(create_context::<15>),
    regMrSym: Some(reg_mr_sym::<15>),
    regMrSymDmaBuf: Some(reg_mr_sym_dma_buf::<15>),
    deregMrSym: Some(dereg_mr_sym::<15>),
    destroyContext: Some(destroy_context::<15>),
    closeColl: Some(close_coll::<15>),
    closeListen: Some(close_listen::<15>),
    iput: Some(iput_v15::<15>),
    iputSignal: Some(iput_signal_v15::<15>),
    iget: Some(iget_v15::<15>),
    iflush: Some(iflush::<15>),
    test: Some(test::<15>),
    rmaProgress: Some(rma_progress::<15>),
    queryLastError: Some(query_last_error::<15>),
    finalize: Some(finalize::<15>),
};

#[no_mangle]
pub static ncclRmaPlugin_v16: ncclRma_v16_t = ncclRma_v16_t {
    name: crate::name::NAME_C.as_ptr(),
    init: Some(init::<16>),
    devices: Some(devices::<16>),
    getRmaProperties: Some(get_rma_properties::<16>),
    getProperties: Some(get_properties::<16>),
    listen: Some(listen::<16>),
    connect: Some(connect::<16>),
    createContext: Some(create_context::<16>),
    regMrSym: Some(reg_mr_sym::<16>),
    regMrSymDmaBuf: Some(reg_mr_sym_dma_buf::<16>),
    deregMrSym: Some(dereg_mr_sym::<16>),
    destroyContext: Some(destroy_context::<16>),
    closeColl: Some(close_coll::<16>),
    closeListen: Some(close_listen::<16>),
    iput: Some(iput_v15::<16>),
    iputSignal: Some(iput_signal_v15::<16>),
    iget: Some(iget_v15::<16>),
    iflush: Some(iflush::<16>),
    test: Some(test::<16>),
    rmaProgress: Some(rma_progress::<16>),
    queryLastError: Some(query_last_error::<16>),
    finalize: Some(finalize::<16>),
};

#[no_mangle]
pub static ncclRmaPlugin_v17: ncclRma_v17_t = ncclRma_v17_t {
    name: crate::name::NAME_C.as_ptr(),
    init: Some(init::<17>),
    devices: Some(devices::<17>),
    getRmaProperties: Some(get_rma_properties::<17>),
    getProperties: Some(get_properties::<17>),
    listen: Some(listen::<17>),
    connect: Some(connect_v17::<17>),
    createContext: Some(create_context_v17::<17>),
    regMrSym: Some(reg_mr_sym::<17>),
    regMrSymDmaBuf: Some(reg_mr_sym_dma_buf::<17>),
    deregMrSym: Some(dereg_mr_sym::<17>),
    destroyContext: Some(destroy_context::<17>),
    closeColl: Some(close_coll::<17>),
    closeListen: Some(close_listen::<17>),
    iput: Some(iput_v15::<17>),
    iputSignal: Some(iput_signal_v15::<17>),
    iget: Some(iget_v15::<17>),
    iflush: Some(iflush::<17>),
    test: Some(test::<17>),
    rmaProgress: Some(rma_progress::<17>),
    queryLastError: Some(query_last_error::<17>),
    finalize: Some(finalize::<17>),
};
