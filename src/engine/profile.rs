//! NCCL's profiler callback (net v10+ `init`): tcpxr's events, in the shape of NCCL's own socket
//! transport so that a profiler plugin (and Nsight through it) reads them as it reads Socket's:
//! plugin id `NCCL_PROFILER_NET_TYPE_SOCK | 1`, data `ncclProfilerNetSockDescr_v1_t` (type
//! `ncclProfileSocket`, the socket's fd, the op, the length).
//!
//! - one event per message, on the control connection's fd, from post to the `test` that reports
//!   it done, with the posted size;
//! - one event per striped chunk, on its stripe's fd (-1 over tcpx, whose sockets are TCPX's), from
//!   its post to the stripe until the stripe completes it, with the chunk's length.
//!
//! Each has the message's profiler handle (NCCL's `phandle` of isend/irecv) as parent; without a
//! callback or a handle nothing is called. Every call is on NCCL's proxy thread (post and test),
//! never on an I/O thread, as NCCL's callback expects of its proxy.
use crate::abi::ncclProfilerCallback_t;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

/// NCCL's callback as an address (0: none). NCCL passes the same function to every init.
static CALLBACK: AtomicUsize = AtomicUsize::new(0);

const EVENT_START: c_int = 0;
const EVENT_STOP: c_int = 1;
/// `NCCL_PROFILER_NET_TYPE_SOCK | NCCL_PROFILER_NET_SOCKET_VER` (nccl_profiler.h, net_socket_v1.h).
pub const PLUGIN_ID: i64 = (2 << 16) | 1;
/// `ncclProfileSocket`: the one event type of the v1 socket descriptor.
pub const PROFILE_SOCKET: u8 = 1;

/// `ncclProfilerNetSockDescr_v1_t`: the type, then a union whose one member is `sock`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SockDescr {
    pub type_: u8,
    pub sock: SockFields,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SockFields {
    pub fd: c_int,
    pub op: c_int,
    pub length: usize,
}

/// `NCCL_SOCKET_SEND` / `NCCL_SOCKET_RECV`, the op values of NCCL's socket events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Send = 0,
    Recv = 1,
}

/// Records NCCL's callback (None leaves an earlier one: NCCL passes one per process).
pub fn install(callback: ncclProfilerCallback_t) {
    if let Some(f) = callback {
        CALLBACK.store(f as usize, Ordering::Release);
    }
}

fn callback() -> ncclProfilerCallback_t {
    match CALLBACK.load(Ordering::Acquire) {
        0 => None,
        // SAFETY: a non-zero value is a function pointer of this type that `install` stored.
        f => Some(unsafe {
            std::mem::transmute::<
                usize,
                unsafe extern "C" fn(
                    *mut *mut c_void,
                    c_int,
                    *mut c_void,
                    i64,
                    *mut c_void,
                ) -> crate::abi::ncclResult_t,
            >(f)
        }),
    }
}

/// A message's profiler handle from NCCL (its `phandle`), the parent of its events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parent(usize);

impl Parent {
    /// None for NULL (NCCL profiles nothing for this message) or when NCCL gave no callback.
    pub fn new(phandle: *mut c_void) -> Option<Parent> {
        (!phandle.is_null() && callback().is_some()).then_some(Parent(phandle as usize))
    }
}

/// An event NCCL's profiler opened (its event handle).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event(usize);

/// Starts an event under `parent`; None when NCCL's profiler made none (it records only the event
/// types it was asked for). Callers ask only for messages that have a parent, so nothing (not even
/// the fd) is looked up on the data path when NCCL profiles nothing.
pub fn start(parent: Parent, fd: c_int, op: Op, length: usize) -> Option<Event> {
    let f = callback()?;
    let mut descr = SockDescr {
        type_: PROFILE_SOCKET,
        sock: SockFields {
            fd,
            op: op as c_int,
            length,
        },
    };
    let mut handle: *mut c_void = std::ptr::null_mut();
    // SAFETY: NCCL's callback with its own phandle, a live out-slot and a descriptor it reads
    // during the call (the profiler copies what it keeps).
    unsafe {
        f(
            &mut handle,
            EVENT_START,
            parent.0 as *mut c_void,
            PLUGIN_ID,
            (&mut descr as *mut SockDescr).cast(),
        )
    };
    (!handle.is_null()).then_some(Event(handle as usize))
}

/// Stops an event `start` returned.
pub fn stop(event: Option<Event>) {
    let (Some(e), Some(f)) = (event, callback()) else {
        return;
    };
    let mut handle = e.0 as *mut c_void;
    // SAFETY: NCCL's callback with the handle it gave at start; stop reads nothing else.
    unsafe { f(&mut handle, EVENT_STOP, std::ptr::null_mut(), 0, std::ptr::null_mut()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_descriptor_is_ncclprofilernetsockdescr_v1_t() {
        // uint8_t type; then a union of { int fd; int op; size_t length; } aligned to 8.
        assert_eq!(std::mem::size_of::<SockDescr>(), 24);
        assert_eq!(std::mem::offset_of!(SockDescr, sock), 8);
        assert_eq!(std::mem::offset_of!(SockFields, op), 4);
        assert_eq!(std::mem::offset_of!(SockFields, length), 8);
    }
}
