//! The per-message calls (isend, irecv, test, irecvConsumed), which take no lock of the plugin's,
//! and close.
use super::connect::sweep_connects;
use super::live::{check_live, comm_ref, take_back, Handed};
use super::memory::{gpu_of, mem_arg, registration_of};
use crate::engine::profile;
use crate::engine::requests::{Kind, Lookup, Request};
use crate::engine::{CommTag, ListenComm, RecvComm, SendComm};
use crate::error::{Error, Result};
use std::ffi::{c_int, c_void};

/// Returns NULL when all requests of the comm are in use.
///
/// # Safety
/// `comm` must be NULL or a pointer NCCL passes back as a comm (see [`comm_ref`]), not closed
/// during the call; `mhandle` as for [`super::dereg_mr`]; `data..data+size` must stay readable and
/// unchanged until test says done. `phandle`: NCCL's profiler handle for the message (v10+), or
/// NULL.
pub unsafe fn isend(
    comm: *mut c_void,
    data: *mut c_void,
    size: usize,
    mhandle: *mut c_void,
    phandle: *mut c_void,
) -> Result<*mut c_void> {
    // SAFETY: the caller's promise on `comm`; comm_ref checks the tag before the reference.
    let s: &SendComm = unsafe { comm_ref(comm, CommTag::Send, "send comm") }?;
    // SAFETY: the caller's promise on `mhandle`.
    let mh = unsafe { mem_arg(mhandle) };
    let gpu = if size > 0 { gpu_of(data, &mh)? } else { None };
    let parent = profile::Parent::new(phandle);
    // SAFETY: the caller keeps data..data+size readable and unchanged until test says done.
    let req = unsafe { s.isend(data as *const u8, size, gpu, registration_of(&mh), parent) }?;
    Ok(req.unwrap_or(std::ptr::null_mut()))
}

/// Returns NULL when all requests of the comm are in use.
///
/// # Safety
/// `comm` must be NULL or a pointer NCCL passes back as a comm (see [`comm_ref`]), not closed
/// during the call; each of `mhandles` as for [`super::dereg_mr`]; each buffer `data[i]..+sizes[i]` must
/// stay writable, and untouched by others, until test says done. `phandle`: NCCL's profiler
/// handle for the receive (v10+), or NULL.
pub unsafe fn irecv(
    comm: *mut c_void,
    data: &[*mut c_void],
    sizes: &[usize],
    mhandles: &[*mut c_void],
    phandle: *mut c_void,
) -> Result<*mut c_void> {
    // SAFETY: the caller's promise on `comm`; comm_ref checks the tag before the reference.
    let r: &RecvComm = unsafe { comm_ref(comm, CommTag::Recv, "receive comm") }?;
    if data.len() != 1 {
        return Err(Error::internal(format!(
            "irecv with n={}: tcpxr reports maxRecvs=1 and takes one buffer per receive",
            data.len()
        )));
    }
    let mhandle = mhandles.first().copied().unwrap_or(std::ptr::null_mut());
    // SAFETY: the caller's promise on `mhandles`.
    let mh = unsafe { mem_arg(mhandle) };
    let gpu = if sizes[0] > 0 { gpu_of(data[0], &mh)? } else { None };
    let parent = profile::Parent::new(phandle);
    // SAFETY: the caller keeps data[0]..+sizes[0] writable and untouched until test says done.
    let req = unsafe { r.irecv(data[0] as *mut u8, sizes[0], gpu, registration_of(&mh), parent) }?;
    Ok(req.unwrap_or(std::ptr::null_mut()))
}

/// Tests a request; on completion writes the size and frees the request.
///
/// # Safety
/// `request` must be NULL, a request isend/irecv returned (its comm open, or closed before the
/// call: such a request is refused), or a pointer to at least `size_of::<Request>()` readable
/// bytes (see [`Request::lookup`]). A comm must not be closed during the call.
pub unsafe fn test(request: *mut c_void, done: &mut c_int, sizes: Option<&mut c_int>) -> Result<()> {
    *done = 0;
    // SAFETY: the caller's promise on `request`; lookup checks the magic before anything else.
    let req = match unsafe { Request::lookup(request) } {
        Lookup::Live(req) => req,
        Lookup::Closed => {
            return Err(Error::internal(format!(
                "test on {request:p}, a request of a comm that has been closed"
            )))
        }
        Lookup::Foreign => {
            return Err(Error::internal(format!(
                "test on {request:p}, which is not a request tcpxr returned"
            )))
        }
    };
    // A live request's `owner` is the open comm whose table it is in (set once the comm had its
    // final address), of the kind `kind` says; the caller does not close it during the call.
    let result = match req.kind {
        // SAFETY: a live send request's owner is an open SendComm (above).
        Kind::Send => unsafe { &*(req.owner as *const SendComm) }.test(req.slot)?,
        // SAFETY: a live receive request's owner is an open RecvComm (above).
        Kind::Recv => unsafe { &*(req.owner as *const RecvComm) }.test(req.slot)?,
    };
    if let Some(size) = result {
        // test's sizes are ints in every table; a sender refuses messages above that (and NCCL
        // posts none), so a larger size is a peer out of step, not a wrap to report.
        let size = c_int::try_from(size).map_err(|_| {
            Error::remote(format!(
                "test: a received size of {size} bytes does not fit test's int sizes"
            ))
        })?;
        *done = 1;
        if let Some(s) = sizes {
            *s = size;
        }
    }
    Ok(())
}

/// NCCL's kernel has placed the receive `request` of `comm` (device unpack). Without device unpack
/// the request is not used: NCCL calls this for every receive, after test reported it done.
///
/// The request is looked up first: one of a closed comm (its table retired) is refused without
/// reading `comm`, which closed with it.
///
/// # Safety
/// `comm` must be NULL or a pointer NCCL passes back as a comm (see [`comm_ref`]), not closed
/// during the call, unless `request` is a request of `comm` that has been closed; `request` as
/// for [`test()`].
pub unsafe fn irecv_consumed(comm: *mut c_void, request: *mut c_void) -> Result<()> {
    // SAFETY: the caller's promise on `request`; lookup checks the magic before anything else.
    let req = match unsafe { Request::lookup(request) } {
        Lookup::Closed => {
            return Err(Error::internal(format!(
                "irecvConsumed of {request:p}, a request of a comm that has been closed"
            )))
        }
        Lookup::Live(req) if req.kind == Kind::Recv && std::ptr::eq(req.owner, comm) => Some(req),
        _ => None,
    };
    // SAFETY: the caller's promise on `comm`; comm_ref checks the tag before the reference.
    let r: &RecvComm = unsafe { comm_ref(comm, CommTag::Recv, "receive comm") }?;
    if !r.device_unpack() {
        return Ok(());
    }
    match req {
        Some(req) => r.consumed(req.slot),
        None => Err(Error::internal(format!(
            "irecvConsumed of {request:p}, which is not a receive request of this comm"
        ))),
    }
}

/// NCCL's iflush of `n` receive buffers on `comm`. Nothing to flush: test reports a receive done
/// only once its bytes are in place (or, with device unpack, once NCCL's kernel may place them);
/// the caller tells NCCL the flush is complete. The comm must be a live receive comm (asked of the
/// registry: the comm itself is never read) and `n` what irecv takes.
pub fn iflush(comm: *mut c_void, n: c_int) -> Result<()> {
    check_live(comm, Handed::Recv, "iflush")?;
    if n != 1 {
        return Err(Error::invalid_argument(format!(
            "iflush with n={n}: tcpxr reports maxRecvs=1 and takes n=1"
        )));
    }
    Ok(())
}

/// # Safety
/// `comm` may be any pointer: it is taken out of the registry of live comms before it is read,
/// so a second close, or a pointer tcpxr never handed out, is an error. A live send comm is freed:
/// no other call may use it now or later.
pub unsafe fn close_send(comm: *mut c_void) -> Result<()> {
    sweep_connects();
    take_back(comm, Handed::Send, "closeSend")?;
    // SAFETY: the registry held `comm` as a live Box<SendComm> from connect, now taken out of it,
    // and the caller hands it over.
    drop(unsafe { Box::from_raw(comm as *mut SendComm) });
    Ok(())
}

/// # Safety
/// As for [`close_send`]: a live receive comm is freed.
pub unsafe fn close_recv(comm: *mut c_void) -> Result<()> {
    sweep_connects();
    take_back(comm, Handed::Recv, "closeRecv")?;
    // SAFETY: the registry held `comm` as a live Box<RecvComm> from accept, now taken out of it,
    // and the caller hands it over.
    drop(unsafe { Box::from_raw(comm as *mut RecvComm) });
    Ok(())
}

/// # Safety
/// As for [`close_send`]: a live listen comm is freed.
pub unsafe fn close_listen(comm: *mut c_void) -> Result<()> {
    sweep_connects();
    take_back(comm, Handed::Listen, "closeListen")?;
    // SAFETY: the registry held `comm` as a live Box<ListenComm> from listen, now taken out of
    // it, and the caller hands it over.
    drop(unsafe { Box::from_raw(comm as *mut ListenComm) });
    Ok(())
}
