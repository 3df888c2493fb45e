//! A registered window and where received bytes go in it (its placement), plus the one rule that
//! decides whether a window in GPU memory may be placed at all.
//!
//! Placement is on the critical path of a GPU kernel that spins on the signal after the bytes:
//! tcpxr must never queue the bytes or the signal behind that kernel (DESIGN.md). Host windows
//! are written by the CPU in place (the socket's recv lands there, a signal is an atomic add), so
//! nothing can queue. GPU windows are refused at registration with the reason until their
//! placement exists: a copy on tcpxr's own highest-priority non-blocking stream, allowed only
//! where [`gpu_window_rule`] says a copy can run beside a spinning kernel.
use crate::abi::{NCCL_PTR_CUDA, NCCL_PTR_HOST};
use crate::error::{Error, Result};
use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, Ordering};

/// How received bytes reach a window's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Host memory: written by the CPU, in place.
    Host,
}

#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub base: usize,
    pub size: usize,
    pub placement: Placement,
}

impl Window {
    /// A window of NCCL memory of `mem_type` (NCCL_PTR_HOST / NCCL_PTR_CUDA).
    /// NCCL's mrFlags (FORCE_SO, SIGNAL_NEVER_RESET) need nothing: every window is written in
    /// stream order, and host signals are only ever added to.
    pub fn new(base: usize, size: usize, mem_type: c_int) -> Result<Window> {
        if base == 0 && size > 0 {
            return Err(Error::invalid_argument("regMrSym: data is NULL"));
        }
        base.checked_add(size)
            .ok_or_else(|| Error::invalid_argument(format!("regMrSym: {size} bytes at {base:#x} wrap around")))?;
        let placement = match mem_type {
            NCCL_PTR_HOST => Placement::Host,
            NCCL_PTR_CUDA => return Err(gpu_refusal()),
            other => {
                return Err(Error::invalid_argument(format!(
                    "regMrSym: memory type {other} is neither NCCL_PTR_HOST nor NCCL_PTR_CUDA"
                )))
            }
        };
        Ok(Window { base, size, placement })
    }

    /// The address of `len` bytes at `offset`, after checking they lie inside the window;
    /// `what` names the window in the error ("destination window of rank 3").
    pub fn range(&self, offset: u64, len: u64, what: &str) -> Result<usize> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size as u64 => Ok(self.base + offset as usize),
            _ => Err(Error::invalid_argument(format!(
                "{len} bytes at offset {offset} do not fit the {what} ({} bytes)",
                self.size
            ))),
        }
    }

    /// Checks that a signal (8 bytes, 8-aligned) at `offset` lies inside the window.
    pub fn signal_at(&self, offset: u64, what: &str) -> Result<usize> {
        let addr = self.range(offset, 8, what)?;
        if addr % 8 != 0 {
            return Err(Error::invalid_argument(format!(
                "signal at offset {offset} of the {what} is not 8-byte aligned"
            )));
        }
        Ok(addr)
    }

    /// Adds `add` to the signal at `addr` (from [`Window::signal_at`] of this window) once every
    /// byte placed before it is visible: the add is a release, so a reader that acquires the
    /// signal sees the puts before it.
    pub fn apply_signal(&self, addr: usize, add: u64) {
        match self.placement {
            Placement::Host => {
                // SAFETY: `addr` is 8-aligned and lies inside this registered host window
                // (signal_at), which NCCL keeps mapped until deregMrSym; other writers of the
                // signal (NCCL's reader, a peer's add) use atomics too.
                let signal = unsafe { AtomicU64::from_ptr(addr as *mut u64) };
                signal.fetch_add(add, Ordering::Release);
            }
        }
    }
}

/// Whether tcpxr may place received bytes into a window in GPU memory, and why not: the one
/// rule. A copy tcpxr queues must run while NCCL's kernel spins on the signal after it. With
/// `CUDA_DEVICE_MAX_CONNECTIONS=1` every stream of the process shares one hardware queue, so the
/// copy waits behind the kernel that waits for it (DESIGN.md, measured 2026-11-23): refused,
/// unless GDRCopy (libgdrapi.so) is there, whose CPU stores into mapped GPU memory queue behind
/// nothing. Any other value (or unset: CUDA's default of 8) gives tcpxr's stream a queue of its own.
pub fn gpu_window_rule(max_connections: Option<&str>, gdrcopy: bool) -> std::result::Result<(), String> {
    let one_queue = max_connections.is_some_and(|v| v.trim().parse::<u32>() == Ok(1));
    if one_queue && !gdrcopy {
        return Err(
            "CUDA_DEVICE_MAX_CONNECTIONS=1 puts tcpxr's copies behind the kernel that waits for \
                    them, and GDRCopy (libgdrapi.so) is not there to write GPU memory from the CPU"
                .into(),
        );
    }
    Ok(())
}

/// Whether GDRCopy's library can be loaded (looked for, never used yet).
fn gdrcopy_present() -> bool {
    // SAFETY: loading libgdrapi runs only its own initialisers; the handle is dropped at once.
    unsafe { libloading::Library::new("libgdrapi.so.2").or_else(|_| libloading::Library::new("libgdrapi.so")) }.is_ok()
}

/// The refusal of a GPU window, with the reason the rule gives where it refuses.
fn gpu_refusal() -> Error {
    let env = std::env::var("CUDA_DEVICE_MAX_CONNECTIONS").ok();
    let why = match gpu_window_rule(env.as_deref(), gdrcopy_present()) {
        Err(why) => why,
        Ok(()) => "this build does not place received bytes into GPU memory yet".into(),
    };
    Error::invalid_usage(format!(
        "regMrSym: tcpxr's RMA cannot serve a window in GPU memory (NCCL_PTR_CUDA): {why}"
    ))
}

/// NCCL's memory type as text, for log lines.
pub fn type_name(mem_type: c_int) -> &'static str {
    match mem_type {
        NCCL_PTR_HOST => "host",
        NCCL_PTR_CUDA => "cuda",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_signals_are_checked_against_the_window() {
        let mut buf = vec![0u64; 4];
        let w = Window::new(buf.as_mut_ptr() as usize, 32, NCCL_PTR_HOST).unwrap();
        assert_eq!(w.range(8, 24, "w").unwrap(), w.base + 8);
        assert!(w
            .range(8, 25, "w")
            .unwrap_err()
            .msg
            .contains("do not fit the w (32 bytes)"));
        assert!(w.range(u64::MAX, 2, "w").is_err());
        assert!(w.signal_at(4, "w").unwrap_err().msg.contains("aligned"));
        let s = w.signal_at(24, "w").unwrap();
        w.apply_signal(s, 5);
        w.apply_signal(s, 1);
        assert_eq!(buf[3], 6);
        assert!(Window::new(0, 8, NCCL_PTR_HOST).is_err());
        assert!(Window::new(8, 8, 9).unwrap_err().msg.contains("memory type 9"));
    }

    #[test]
    fn gpu_windows_need_a_queue_of_their_own_or_gdrcopy() {
        assert!(gpu_window_rule(None, false).is_ok());
        assert!(gpu_window_rule(Some("8"), false).is_ok());
        assert!(gpu_window_rule(Some("1"), true).is_ok());
        let why = gpu_window_rule(Some(" 1 "), false).unwrap_err();
        assert!(
            why.contains("CUDA_DEVICE_MAX_CONNECTIONS=1") && why.contains("GDRCopy"),
            "{why}"
        );
        let e = Window::new(4096, 8, NCCL_PTR_CUDA).unwrap_err();
        assert_eq!(e.code, crate::abi::ncclResult_t::ncclInvalidUsage);
        assert!(e.msg.contains("NCCL_PTR_CUDA"), "{e}");
    }
}
