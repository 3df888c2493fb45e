//! The registry of live objects: every comm (and v11+ context) tcpxr hands NCCL, by address, until
//! it is closed; and the checks every call makes on a pointer NCCL hands back before reading it
//! (the registry for listen, connect, accept, regMr, deregMr, close and finalize; a comm's tag on
//! the per-message path, which takes no lock).
use crate::engine::{CommTag, RecvComm, SendComm};
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::Mutex;

/// What tcpxr handed NCCL behind a `void*` that NCCL hands back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handed {
    Listen,
    Send,
    Recv,
    /// A v11+ communicator context (export::context).
    Context,
}

impl Handed {
    fn what(self) -> &'static str {
        match self {
            Handed::Listen => "listen comm",
            Handed::Send => "send comm",
            Handed::Recv => "receive comm",
            Handed::Context => "context",
        }
    }
}

/// Every object NCCL holds and has not closed, by address. Taken at listen, connect, accept,
/// regMr, deregMr and close (and init / finalize for contexts), never on the per-message path.
static LIVE: Mutex<BTreeMap<usize, Handed>> = Mutex::new(BTreeMap::new());

fn live() -> std::sync::MutexGuard<'static, BTreeMap<usize, Handed>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records `ptr` as a live object of kind `kind`, just before it goes to NCCL.
pub fn hand_out(ptr: *mut c_void, kind: Handed) -> *mut c_void {
    live().insert(ptr as usize, kind);
    ptr
}

/// Whether `ptr` is a live object of kind `kind`; an error naming it otherwise. Nothing at `ptr`
/// is read.
pub(super) fn check_live(ptr: *mut c_void, kind: Handed, call: &str) -> Result<()> {
    match live().get(&(ptr as usize)) {
        Some(&k) if k == kind => Ok(()),
        found => Err(not_live(ptr, kind, call, found.copied())),
    }
}

/// Whether `ptr` is a live object of kind `kind` (nothing at `ptr` is read).
pub fn is_live(ptr: *mut c_void, kind: Handed) -> bool {
    live().get(&(ptr as usize)) == Some(&kind)
}

/// Takes `ptr` out of the registry for its close: Ok once, for a live object of kind `kind`;
/// an error (and nothing read at `ptr`) for a second close, another kind, or a foreign pointer.
pub fn take_back(ptr: *mut c_void, kind: Handed, call: &str) -> Result<()> {
    let mut all = live();
    match all.get(&(ptr as usize)) {
        Some(&k) if k == kind => {
            all.remove(&(ptr as usize));
            Ok(())
        }
        found => Err(not_live(ptr, kind, call, found.copied())),
    }
}

fn not_live(ptr: *mut c_void, kind: Handed, call: &str, found: Option<Handed>) -> Error {
    match found {
        Some(other) => Error::internal(format!(
            "{call} of {ptr:p}: a tcpxr {}, not a {}",
            other.what(),
            kind.what()
        )),
        None => Error::internal(format!(
            "{call} of {ptr:p}: not a live tcpxr {} (closed already, or never handed out)",
            kind.what()
        )),
    }
}

/// The comm tag at `ptr` (the first field of every repr(C) comm), None for NULL or a misaligned
/// pointer.
///
/// # Safety
/// `ptr` must be NULL or, when aligned for a u32, point to at least 4 readable bytes.
unsafe fn tag_of(ptr: *mut c_void) -> Option<u32> {
    if ptr.is_null() || (ptr as usize) % std::mem::align_of::<u32>() != 0 {
        return None;
    }
    // SAFETY: non-NULL and aligned, so readable for 4 bytes (the caller's promise).
    Some(unsafe { std::ptr::read(ptr as *const u32) })
}

/// Checks that `ptr` is a live comm of the expected kind before treating it as one.
///
/// # Safety
/// `ptr` must be NULL, or point to at least 4 readable bytes; when they hold one of tcpxr's comm
/// tags, `ptr` must be the live comm of that kind (a `Box` from listen, connect or accept that NCCL
/// has not closed) and stay so for `'a`. `T` must be the comm type of `tag`. Pointers tcpxr handed
/// to NCCL and NCCL passes back meet this.
pub(super) unsafe fn comm_ref<'a, T>(ptr: *mut c_void, tag: CommTag, what: &str) -> Result<&'a T> {
    // SAFETY: the caller's promise.
    if unsafe { tag_of(ptr) } != Some(tag as u32) {
        return Err(Error::internal(format!("{ptr:p} is not a tcpxr {what}")));
    }
    // SAFETY: the tag matches, so (the caller's promise) a live T for 'a; comms are Sync (their
    // state sits behind a mutex), so a shared reference may be used from any of NCCL's threads.
    Ok(unsafe { &*(ptr as *const T) })
}

/// A send or receive comm, as regMr and deregMr take either.
pub(super) enum DataComm<'a> {
    Send(&'a SendComm),
    Recv(&'a RecvComm),
}

/// A live send or receive comm, for `call`: the registry is asked before `ptr` is read.
///
/// # Safety
/// A live comm must not be closed during `'a`.
pub(super) unsafe fn live_data_comm<'a>(ptr: *mut c_void, call: &str) -> Result<DataComm<'a>> {
    let kind = match live().get(&(ptr as usize)) {
        Some(&k @ (Handed::Send | Handed::Recv)) => k,
        found => {
            return Err(Error::internal(match found {
                Some(other) => format!(
                    "{call} of {ptr:p}: a tcpxr {}, not a send or receive comm",
                    other.what()
                ),
                None => format!(
                    "{call} of {ptr:p}: not a live tcpxr send or receive comm (closed already, or never handed out)"
                ),
            }))
        }
    };
    // SAFETY: the registry says `ptr` is a live comm of this kind (a Box from connect or accept),
    // and the caller keeps it open for 'a; comm_ref checks its tag too.
    unsafe {
        match kind {
            Handed::Send => comm_ref(ptr, CommTag::Send, "send comm").map(DataComm::Send),
            _ => comm_ref(ptr, CommTag::Recv, "receive comm").map(DataComm::Recv),
        }
    }
}
