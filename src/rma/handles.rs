//! What NCCL holds of the RMA plugin are tokens, not pointers: a kind in the top byte and a
//! process-wide serial below (never reused), so NCCL never holds tcpxr memory, a stale or foreign
//! handle is found by a lookup and never read, and every token fits the 63 bits NCCL's GIN proxy
//! keeps of a memory handle. Listeners, groups (collComm) and contexts live in [`Registry`]s until
//! closed; windows and requests are looked up inside their group.
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Init = 1,
    Listen = 2,
    Group = 3,
    Context = 4,
    Window = 5,
    Request = 6,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Init => "RMA context (init)",
            Kind::Listen => "listenComm",
            Kind::Group => "collComm",
            Kind::Context => "rmaCtx",
            Kind::Window => "mhandle",
            Kind::Request => "request",
        }
    }
}

const KIND_SHIFT: u32 = 56;
const SERIAL_MASK: u64 = (1 << KIND_SHIFT) - 1;

static SERIAL: AtomicU64 = AtomicU64::new(1);

/// A fresh serial, never handed out before in this process.
pub fn serial() -> u64 {
    SERIAL.fetch_add(1, Ordering::Relaxed) & SERIAL_MASK
}

/// The token of `serial` as NCCL holds it.
pub fn token(kind: Kind, serial: u64) -> *mut c_void {
    (((kind as u64) << KIND_SHIFT) | (serial & SERIAL_MASK)) as usize as *mut c_void
}

/// The serial a token of `kind` carries; an error naming `what` (the argument) otherwise.
pub fn serial_of(kind: Kind, p: *mut c_void, what: &str) -> Result<u64> {
    let t = p as usize as u64;
    if p.is_null() {
        return Err(Error::invalid_argument(format!("{what} is NULL")));
    }
    if t >> KIND_SHIFT != kind as u64 {
        return Err(Error::invalid_argument(format!(
            "{what} {p:p} is not a tcpxr {} (a pointer from elsewhere, or another kind of handle)",
            kind.name()
        )));
    }
    Ok(t & SERIAL_MASK)
}

/// The live objects of one kind handed to NCCL, by serial.
pub struct Registry<T> {
    kind: Kind,
    live: Mutex<Option<HashMap<u64, Arc<T>>>>,
}

impl<T> Registry<T> {
    pub const fn new(kind: Kind) -> Self {
        Registry {
            kind,
            live: Mutex::new(None),
        }
    }

    /// Keeps `obj` and returns its token.
    pub fn add(&self, obj: T) -> (*mut c_void, Arc<T>) {
        let s = serial();
        let obj = Arc::new(obj);
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(s, obj.clone());
        (token(self.kind, s), obj)
    }

    /// The object a token names, while it is live.
    pub fn get(&self, p: *mut c_void, what: &str) -> Result<Arc<T>> {
        let s = serial_of(self.kind, p, what)?;
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.as_ref()
            .and_then(|m| m.get(&s).cloned())
            .ok_or_else(|| self.gone(p, what))
    }

    /// Takes the object out: later uses of the token are refused.
    pub fn take(&self, p: *mut c_void, what: &str) -> Result<Arc<T>> {
        let s = serial_of(self.kind, p, what)?;
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.as_mut()
            .and_then(|m| m.remove(&s))
            .ok_or_else(|| self.gone(p, what))
    }

    /// Objects live now.
    pub fn count(&self) -> usize {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map_or(0, |m| m.len())
    }

    fn gone(&self, p: *mut c_void, what: &str) -> Error {
        Error::invalid_argument(format!(
            "{what} {p:p} names no live tcpxr {} (closed already, or never handed out)",
            self.kind.name()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked_by_kind_and_liveness_never_read() {
        static R: Registry<u32> = Registry::new(Kind::Group);
        let (t, _) = R.add(7);
        assert_eq!(*R.get(t, "collComm").unwrap(), 7);
        assert!((t as usize as u64) >> 63 == 0, "tokens fit 63 bits");
        let wrong = token(Kind::Context, serial_of(Kind::Group, t, "x").unwrap());
        assert!(R
            .get(wrong, "collComm")
            .unwrap_err()
            .msg
            .contains("not a tcpxr collComm"));
        assert!(R
            .get(std::ptr::null_mut(), "collComm")
            .unwrap_err()
            .msg
            .contains("NULL"));
        R.take(t, "collComm").unwrap();
        let e = R.take(t, "collComm").unwrap_err();
        assert!(e.msg.contains("closed already"), "{e}");
        assert!(R.get(0x1234 as *mut c_void, "collComm").is_err());
    }
}
