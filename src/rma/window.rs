//! A registered window and where received bytes go in it (its placement), plus the one rule that
//! decides, once per process, whether windows in GPU memory may be served at all.
//!
//! Placement is on the critical path of a GPU kernel that spins on the signal after the bytes:
//! tcpxr must never queue the bytes or the signal behind that kernel (DESIGN.md). Host windows
//! are written by the CPU in place (the socket's recv lands there, a signal is an atomic add), so
//! nothing can queue. GPU windows are written by copies on the group's own non-blocking stream
//! (stage.rs), which [`gpu_window_rule`] allows only where that stream can have a hardware queue
//! apart from the kernel's.
use crate::abi::{NCCL_PTR_CUDA, NCCL_PTR_HOST};
use crate::error::{Error, Result};
use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// How received bytes reach a window's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Host memory: written by the CPU, in place.
    Host,
    /// GPU memory of device `ordinal`: received into pinned staging, copied in on the group's stream;
    /// signals in it are written on the same stream (stage.rs).
    Gpu { ordinal: usize },
}

/// Where one operation's bytes land: host memory written in place, or device memory reached
/// through staging.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dest {
    Host(usize),
    Gpu(u64),
}

#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub base: usize,
    pub size: usize,
    pub placement: Placement,
}

impl Window {
    /// A window of NCCL memory of `mem_type` (NCCL_PTR_HOST / NCCL_PTR_CUDA) registered with
    /// NCCL's `flags`. Every window is written in stream order (which is what FORCE_SO asks of a
    /// signal window). Signals are added to atomically, so NCCL may reset them, except in a GPU
    /// window registered NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET, whose words tcpxr alone writes
    /// (stage.rs; group.rs reads the flag). A GPU window is served where the process's rule
    /// allows it ([`process_rule`]).
    pub fn new(base: usize, size: usize, mem_type: c_int, _flags: u64) -> Result<Window> {
        if base == 0 && size > 0 {
            return Err(Error::invalid_argument("regMrSym: data is NULL"));
        }
        base.checked_add(size)
            .ok_or_else(|| Error::invalid_argument(format!("regMrSym: {size} bytes at {base:#x} wrap around")))?;
        let placement = match mem_type {
            NCCL_PTR_HOST => Placement::Host,
            NCCL_PTR_CUDA => {
                process_rule().clone().map_err(|why| {
                    Error::invalid_usage(format!(
                        "regMrSym: tcpxr's RMA cannot serve a window in GPU memory (NCCL_PTR_CUDA): {why}"
                    ))
                })?;
                let gpu = crate::gpu::Gpu::of_pointer(base as *const std::ffi::c_void)?.ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "regMrSym: {base:#x} is registered as NCCL_PTR_CUDA but CUDA does not know it as device memory"
                    ))
                })?;
                Placement::Gpu { ordinal: gpu.ordinal }
            }
            other => {
                return Err(Error::invalid_argument(format!(
                    "regMrSym: memory type {other} is neither NCCL_PTR_HOST nor NCCL_PTR_CUDA"
                )))
            }
        };
        Ok(Window { base, size, placement })
    }

    /// Where bytes for `addr` (from [`Window::range`] of this window) land.
    pub fn dest(&self, addr: usize) -> Dest {
        match self.placement {
            Placement::Host => Dest::Host(addr),
            Placement::Gpu { .. } => Dest::Gpu(addr as u64),
        }
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
}

/// Adds `add` to the host signal at `addr` (from [`Window::signal_at`] of a host window) once
/// every byte placed before it is visible: the add is a release, so a reader that acquires the
/// signal sees the puts before it.
pub fn add_host_signal(addr: usize, add: u64) {
    // SAFETY: `addr` is 8-aligned and lies inside a registered host window (signal_at), which
    // NCCL keeps mapped until deregMrSym; other writers of the signal (NCCL's reader, a peer's
    // add) use atomics too.
    let signal = unsafe { AtomicU64::from_ptr(addr as *mut u64) };
    signal.fetch_add(add, Ordering::Release);
}

/// What the rule reads of the process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// `CUDA_DEVICE_MAX_CONNECTIONS` as set (None: unset, CUDA's default of 8).
    pub max_connections: Option<String>,
    /// Whether the process is an MPS client: the driver's answer (CU_DEVICE_ATTRIBUTE_MPS_ENABLED
    /// of any device); None without a driver or when it cannot say.
    pub mps_attribute: Option<bool>,
    /// An MPS control pipe is there (`CUDA_MPS_PIPE_DIRECTORY`, else /tmp/nvidia-mps): read only
    /// where the driver cannot say, since then every CUDA process of the host is a client.
    pub mps_pipe: bool,
    /// libgdrapi.so loads (named in the refusal only: tcpxr does not write through GDRCopy yet).
    pub gdrcopy: bool,
}

impl Facts {
    /// This process's facts, read now (the CUDA driver is initialised where it is present).
    pub fn read() -> Facts {
        let pipe_dir = std::env::var("CUDA_MPS_PIPE_DIRECTORY").unwrap_or_else(|_| "/tmp/nvidia-mps".into());
        Facts {
            max_connections: std::env::var("CUDA_DEVICE_MAX_CONNECTIONS").ok(),
            mps_attribute: crate::gpu::mps_client(),
            mps_pipe: std::path::Path::new(&pipe_dir).join("control").exists(),
            gdrcopy: gdrcopy_present(),
        }
    }
}

/// How tcpxr places received bytes into GPU windows, where the rule allows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuPlacement {
    /// Pinned host staging, then a host-to-device copy on the group's own non-blocking
    /// highest-priority stream; signals written on the same stream after the data.
    Stream,
}

/// Whether tcpxr may place received bytes into windows in GPU memory, and how; the one rule,
/// decided once per process. NCCL's kernel spins on a signal until tcpxr's placement of the
/// bytes and the signal has run, so that placement must never wait for the kernel:
///
/// 1. GDRCopy (CPU stores through a mapping of GPU memory, which queue behind nothing) would be
///    first; it is not implemented, so its presence only changes the refusal's words.
/// 2. A copy on a stream of tcpxr's own, where that stream can get a hardware queue apart from the
///    kernel's: `CUDA_DEVICE_MAX_CONNECTIONS` unset (CUDA's default, 8) or 2 and more, and the
///    process not a client of MPS (whose server funnels its clients' work into queues of its own).
/// 3. Anything else is refused: `CUDA_DEVICE_MAX_CONNECTIONS=1` (every stream of the process
///    shares one queue, so the copy waits behind the kernel that waits for it: a deadlock,
///    measured 2026-11-23), a value CUDA's documented range (1-32) does not cover, or MPS.
///
/// The refusal is at init: the RMA table then reports no device, so NCCL goes on without it
/// (and a direct caller's regMrSym of a GPU window is refused with the same words).
///
/// Residual risk where it allows: CUDA promises no concurrency between streams. With 8
/// connections a stream usually gets a queue apart from NCCL's kernel's, but streams are mapped
/// onto queues round-robin, so a process with many streams may share one with the kernel; the
/// copy then waits for the kernel to end, as any stream work of the application would. Each RMA
/// group adds one stream (stage.rs), as each receive comm that copies into GPU memory does.
pub fn gpu_window_rule(f: &Facts) -> std::result::Result<GpuPlacement, String> {
    let gdr = if f.gdrcopy {
        "libgdrapi.so is present, but tcpxr does not write GPU memory through GDRCopy yet"
    } else {
        "GDRCopy (libgdrapi.so), which tcpxr does not use yet, would not be enough either"
    };
    let mps = f.mps_attribute.unwrap_or(f.mps_pipe);
    if mps {
        return Err(format!(
            "this process is a CUDA MPS client, and under MPS a copy tcpxr queues can wait behind the \
             kernel that waits for it ({gdr}); run without MPS to allow tcpxr's RMA"
        ));
    }
    match f.max_connections.as_deref().map(|v| v.trim().parse::<u32>()) {
        None => Ok(GpuPlacement::Stream),
        Some(Ok(n)) if (2..=32).contains(&n) => Ok(GpuPlacement::Stream),
        Some(Ok(1)) => Err(format!(
            "CUDA_DEVICE_MAX_CONNECTIONS=1 puts every stream of the process on one hardware queue, so \
             tcpxr's copies would wait behind the kernel that waits for them ({gdr}); unset it or set \
             it to 2 or more to allow tcpxr's RMA"
        )),
        Some(_) => Err(format!(
            "CUDA_DEVICE_MAX_CONNECTIONS={:?} is not a number of connections CUDA documents (1-32), \
             so tcpxr cannot tell whether its copies get a hardware queue of their own ({gdr}); unset \
             it or set it to 2..32 to allow tcpxr's RMA",
            f.max_connections.as_deref().unwrap_or_default()
        )),
    }
}

/// The rule's verdict for this process, decided at the first call (the RMA table's first
/// devices or registration) and kept.
pub fn process_rule() -> &'static std::result::Result<GpuPlacement, String> {
    static RULE: OnceLock<std::result::Result<GpuPlacement, String>> = OnceLock::new();
    RULE.get_or_init(|| gpu_window_rule(&Facts::read()))
}

/// Whether GDRCopy's library can be loaded (looked for, never used yet).
fn gdrcopy_present() -> bool {
    // SAFETY: loading libgdrapi runs only its own initialisers; the handle is dropped at once.
    unsafe { libloading::Library::new("libgdrapi.so.2").or_else(|_| libloading::Library::new("libgdrapi.so")) }.is_ok()
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
        let w = Window::new(buf.as_mut_ptr() as usize, 32, NCCL_PTR_HOST, 0).unwrap();
        assert_eq!(w.range(8, 24, "w").unwrap(), w.base + 8);
        assert!(w
            .range(8, 25, "w")
            .unwrap_err()
            .msg
            .contains("do not fit the w (32 bytes)"));
        assert!(w.range(u64::MAX, 2, "w").is_err());
        assert!(w.signal_at(4, "w").unwrap_err().msg.contains("aligned"));
        let s = w.signal_at(24, "w").unwrap();
        add_host_signal(s, 5);
        add_host_signal(s, 1);
        assert_eq!(buf[3], 6);
        assert_eq!(w.dest(s), Dest::Host(s));
        assert!(Window::new(0, 8, NCCL_PTR_HOST, 0).is_err());
        assert!(Window::new(8, 8, 9, 0).unwrap_err().msg.contains("memory type 9"));
    }

    fn facts(max: Option<&str>, mps_attribute: Option<bool>, mps_pipe: bool, gdrcopy: bool) -> Facts {
        Facts {
            max_connections: max.map(str::to_owned),
            mps_attribute,
            mps_pipe,
            gdrcopy,
        }
    }

    /// The rule's whole decision table.
    #[test]
    fn gpu_windows_need_a_hardware_queue_of_their_own() {
        let ok = Ok(GpuPlacement::Stream);
        // Allowed: CUDA's default (unset), or 2..32 connections, outside MPS.
        for max in [None, Some("8"), Some(" 2 "), Some("32")] {
            assert_eq!(gpu_window_rule(&facts(max, Some(false), false, false)), ok, "{max:?}");
            assert_eq!(
                gpu_window_rule(&facts(max, None, false, false)),
                ok,
                "{max:?}, no driver"
            );
        }
        // One queue: refused, saying why and what allows it, GDRCopy or not.
        for gdr in [false, true] {
            let why = gpu_window_rule(&facts(Some(" 1 "), Some(false), false, gdr)).unwrap_err();
            assert!(why.contains("CUDA_DEVICE_MAX_CONNECTIONS=1"), "{why}");
            assert!(why.contains("unset it or set it to 2 or more"), "{why}");
            assert!(why.contains("GDRCopy"), "{why}");
            assert_eq!(why.contains("libgdrapi.so is present"), gdr, "{why}");
        }
        // Values CUDA does not document: refused.
        for max in ["0", "64", "many", ""] {
            let why = gpu_window_rule(&facts(Some(max), Some(false), false, false)).unwrap_err();
            assert!(
                why.contains("not a number of connections CUDA documents"),
                "{max}: {why}"
            );
        }
        // MPS: refused whatever the connections; the driver's answer wins over the pipe.
        for max in [None, Some("8"), Some("1")] {
            let why = gpu_window_rule(&facts(max, Some(true), false, false)).unwrap_err();
            assert!(
                why.contains("CUDA MPS client") && why.contains("run without MPS"),
                "{why}"
            );
        }
        assert!(
            gpu_window_rule(&facts(None, None, true, false)).is_err(),
            "pipe, driver silent"
        );
        assert_eq!(
            gpu_window_rule(&facts(None, Some(false), true, false)),
            ok,
            "driver says no MPS"
        );
    }
}
