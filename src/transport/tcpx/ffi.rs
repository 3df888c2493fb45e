//! The only place tcpxr calls into a TCPX-ABI library: loading it, calling its `ncclNetPlugin_v7`
//! table, and reading the memory it shares (the device handle `accept` writes and the
//! `netUnpackMeta` ring). Everything above this file sees safe functions and opaque pointers.
//!
//! The table is `abi::ncclNet_v7_t` itself: `ncclResult_t` is a plain `int` newtype, so whatever
//! a foreign library returns is a valid value, turned into an [`Error`] by [`error`].
#![allow(non_snake_case)]

use super::sigpipe;
use crate::abi::{
    loadMeta, ncclDebugLogger_t, ncclNetDeviceHandle_v7_t, ncclNetProperties_v7_t, ncclNet_v7_t, netUnpackMeta,
    unpackNetDeviceHandle, NCCL_NET_DEVICE_UNPACK, NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH,
    NCCL_NET_DEVICE_UNPACK_VERSION, NCCL_NET_HANDLE_MAXSIZE, NET_UNPACK_MAX_SLICE_PAGES,
};
use crate::error::{Error, Result};
use crate::transport::{DeviceJob, InnerHandle, MemKind};
use std::ffi::{c_char, c_int, c_ulong, c_void, CStr};
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicU64, Ordering};

/// TCPX's result for "unable to allocate requests" (and, alas, for most of its other errors).
pub const RC_INTERNAL: c_int = 3;
const NCCL_PTR_HOST: c_int = crate::abi::NCCL_PTR_HOST;
const NCCL_PTR_CUDA: c_int = crate::abi::NCCL_PTR_CUDA;

/// The NCCL error a TCPX result code stands for.
pub fn error(what: &str, rc: c_int) -> Error {
    use crate::abi::ncclResult_t as R;
    let (code, name) = match R(rc) {
        R::ncclUnhandledCudaError => (R::ncclUnhandledCudaError, "unhandled CUDA error"),
        R::ncclSystemError => (R::ncclSystemError, "system error"),
        R::ncclInternalError => (R::ncclInternalError, "internal error"),
        R::ncclInvalidArgument => (R::ncclInvalidArgument, "invalid argument"),
        R::ncclInvalidUsage => (R::ncclInvalidUsage, "invalid usage"),
        R::ncclRemoteError => (R::ncclRemoteError, "remote error"),
        _ => (R::ncclInternalError, "unknown result code"),
    };
    Error::new(
        code,
        format!("TCPX {what} failed with {rc} ({name}); TCPX's own WARN says why"),
    )
}

fn check(what: &str, rc: c_int) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(error(what, rc))
    }
}

/// A comm (listen, send or receive) the TCPX library handed out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comm(*mut c_void);
/// A request TCPX returned from isend or irecv.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request(*mut c_void);
/// A memory handle from TCPX's regMr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mr(*mut c_void);

// The three handles are opaque pointers TCPX hands out; TCPX does not tie them to a thread, and
// tcpxr uses each from one thread at a time (every stripe sits behind its comm's mutex).
// SAFETY: an opaque TCPX comm, not tied to a thread (above).
unsafe impl Send for Comm {}
// SAFETY: an opaque TCPX request, not tied to a thread (above).
unsafe impl Send for Request {}
// SAFETY: an opaque TCPX memory handle, not tied to a thread (above).
unsafe impl Send for Mr {}

impl Mr {
    pub fn as_usize(self) -> usize {
        self.0 as usize
    }
    pub fn from_usize(v: usize) -> Mr {
        Mr(v as *mut c_void)
    }
}

/// What one TCPX device says of itself, copied out of its properties.
#[derive(Clone, Debug)]
pub struct Props {
    pub name: String,
    pub pci_path: Option<String>,
    pub guid: u64,
    pub speed_mbps: c_int,
    pub ptr_support: c_int,
    pub net_device_type: c_int,
    pub net_device_version: c_int,
}

/// Where `isend`/`irecv` left a post.
#[derive(Debug)]
pub enum Posted {
    Yes(Request),
    /// `*request` came back NULL (not connected yet, or no slot).
    NoRequest,
    /// A non-zero result code.
    Refused(c_int),
}

/// A loaded TCPX-ABI library and its v7 table. It is never unloaded: TCPX starts threads that
/// must outlive any comm, and NCCL never unloads its plugins mid-process either.
pub struct Lib {
    pub path: String,
    pub name: String,
    table: ncclNet_v7_t,
    _lib: ManuallyDrop<libloading::Library>,
}

// SAFETY: the table is plain function pointers plus a static name, and the library handle is never
// used again after load (it is never unloaded); nothing ties them to a thread.
unsafe impl Send for Lib {}
// SAFETY: nothing in Lib changes after load; TCPX is called from several threads (one per comm at
// a time), as NCCL calls it.
unsafe impl Sync for Lib {}

/// Why a candidate library was not taken.
pub enum Skip {
    NotFound(String),
    Refused(String),
}

impl Lib {
    /// Loads `path` and takes its `ncclNetPlugin_v7`. Refuses tcpxr itself (found by the table's
    /// name), and, when `want_tcpx_name`, any table not named `GPUDirectTCPX*`.
    pub fn load(path: &str, want_tcpx_name: bool) -> std::result::Result<Lib, Skip> {
        // SAFETY: loading a library runs its initialisers; the path is a TCPX-ABI plugin the user
        // named or one of the places TCPX is installed, which NCCL would load just the same.
        let lib = unsafe { libloading::Library::new(path) }
            // dlerror's reason is the source; libloading's own text is only "dlopen failed".
            .map_err(|e| Skip::NotFound(std::error::Error::source(&e).map_or(e.to_string(), |s| s.to_string())))?;
        // SAFETY: the symbol, if present, is the plugin's `ncclNet_v7_t` static; we read its address.
        let table_ptr = match unsafe { lib.get::<*const ncclNet_v7_t>(b"ncclNetPlugin_v7\0") } {
            Ok(sym) => *sym,
            Err(_) => return Err(Skip::Refused("it exports no ncclNetPlugin_v7".into())),
        };
        if table_ptr.is_null() {
            return Err(Skip::Refused("its ncclNetPlugin_v7 is NULL".into()));
        }
        // SAFETY: a plugin's v7 table is an initialised static of ncclNet_v7_t; it is copied out once
        // (every bit pattern of its result type is valid).
        let table = unsafe { *table_ptr };
        let name = if table.name.is_null() {
            String::new()
        } else {
            // SAFETY: `name` is the plugin's static NUL-terminated name.
            unsafe { CStr::from_ptr(table.name) }.to_string_lossy().into_owned()
        };
        if name == crate::name::NAME {
            return Err(Skip::Refused("it is tcpxr itself".into()));
        }
        if want_tcpx_name && !name.starts_with("GPUDirectTCPX") {
            return Err(Skip::Refused(format!("its net is {name:?}, not GPUDirectTCPX")));
        }
        let missing: Vec<&str> = [
            ("init", table.init.is_some()),
            ("devices", table.devices.is_some()),
            ("getProperties", table.getProperties.is_some()),
            ("listen", table.listen.is_some()),
            ("connect", table.connect.is_some()),
            ("accept", table.accept.is_some()),
            ("regMr", table.regMr.is_some()),
            ("deregMr", table.deregMr.is_some()),
            ("isend", table.isend.is_some()),
            ("irecv", table.irecv.is_some()),
            ("test", table.test.is_some()),
            ("closeSend", table.closeSend.is_some()),
            ("closeRecv", table.closeRecv.is_some()),
            ("closeListen", table.closeListen.is_some()),
            ("irecvConsumed", table.irecvConsumed.is_some()),
        ]
        .into_iter()
        .filter_map(|(n, present)| (!present).then_some(n))
        .collect();
        if !missing.is_empty() {
            return Err(Skip::Refused(format!("its v7 table lacks {}", missing.join(", "))));
        }
        Ok(Lib {
            path: path.to_owned(),
            name,
            table,
            _lib: ManuallyDrop::new(lib),
        })
    }

    /// `init`, with NCCL's logger when tcpxr has one, else [`log_without_args`].
    pub fn init(&self, logger: ncclDebugLogger_t) -> Result<()> {
        let logger = logger.or_else(|| {
            // SAFETY: see log_without_args: the fixed arguments of a variadic call are passed
            // exactly as those of this non-variadic function on the Linux ABIs tcpxr builds for.
            Some(unsafe { std::mem::transmute::<LoggerNoArgs, LoggerFn>(log_without_args) })
        });
        let _sigpipe = sigpipe::Scoped::new();
        // SAFETY: init takes a logger function pointer, which lives for the process.
        check("init", unsafe { self.table.init.unwrap()(logger).0 })
    }

    pub fn devices(&self) -> Result<usize> {
        let mut n: c_int = 0;
        // SAFETY: valid out-pointer.
        check("devices", unsafe { self.table.devices.unwrap()(&mut n).0 })?;
        usize::try_from(n).map_err(|_| Error::internal(format!("TCPX reports {n} devices")))
    }

    pub fn properties(&self, dev: usize) -> Result<Props> {
        // SAFETY: all-zero is a valid ncclNetProperties_v7_t (null pointers, zero numbers).
        let mut p: ncclNetProperties_v7_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointer; dev is below devices().
        check("getProperties", unsafe {
            self.table.getProperties.unwrap()(dev as c_int, &mut p).0
        })?;
        // SAFETY: TCPX's name and pciPath are NUL-terminated strings it keeps for the process, or NULL.
        let text = |s: *mut c_char| (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned());
        Ok(Props {
            name: text(p.name).unwrap_or_else(|| format!("tcpx{dev}")),
            pci_path: text(p.pciPath),
            guid: p.guid,
            speed_mbps: p.speed,
            ptr_support: p.ptrSupport,
            net_device_type: p.netDeviceType,
            net_device_version: p.netDeviceVersion,
        })
    }

    pub fn listen(&self, dev: usize) -> Result<(InnerHandle, Comm)> {
        let mut handle = [0u8; NCCL_NET_HANDLE_MAXSIZE];
        let mut comm: *mut c_void = std::ptr::null_mut();
        // SAFETY: handle is NCCL_NET_HANDLE_MAXSIZE writable bytes, comm a valid out-pointer.
        check("listen", unsafe {
            self.table.listen.unwrap()(dev as c_int, handle.as_mut_ptr() as *mut c_void, &mut comm).0
        })?;
        if comm.is_null() {
            return Err(Error::internal("TCPX listen returned no listen comm"));
        }
        Ok((handle, Comm(comm)))
    }

    /// One connect call; None until TCPX has the connection. TCPX keeps its in-progress state
    /// inside `handle`, so every call must pass the same buffer (the caller boxes it).
    pub fn connect(&self, dev: usize, handle: &mut InnerHandle) -> Result<Option<Comm>> {
        let mut comm: *mut c_void = std::ptr::null_mut();
        // The send side gets no device handle (NCCL passes a pointer to NULL).
        let mut dev_handle: *mut ncclNetDeviceHandle_v7_t = std::ptr::null_mut();
        let _sigpipe = sigpipe::Scoped::new();
        // SAFETY: handle is the peer's 128-byte handle buffer, stable across calls; out-pointers valid.
        check("connect", unsafe {
            self.table.connect.unwrap()(
                dev as c_int,
                handle.as_mut_ptr() as *mut c_void,
                &mut comm,
                &mut dev_handle,
            )
            .0
        })?;
        Ok((!comm.is_null()).then_some(Comm(comm)))
    }

    /// One accept call; None until the peer has connected. On success TCPX has written the device
    /// handle into `storage`.
    pub fn accept(&self, listen: Comm, storage: &mut DevHandleStorage) -> Result<Option<Comm>> {
        let mut comm: *mut c_void = std::ptr::null_mut();
        let mut dev_handle = storage.0.as_mut_ptr() as *mut ncclNetDeviceHandle_v7_t;
        let _sigpipe = sigpipe::Scoped::new();
        // SAFETY: listen is a live TCPX listen comm; dev_handle points at 512 writable, 16-byte
        // aligned bytes (TCPX writes one ncclNetDeviceHandle_v7_t through it).
        check("accept", unsafe {
            self.table.accept.unwrap()(listen.0, &mut comm, &mut dev_handle).0
        })?;
        Ok((!comm.is_null()).then_some(Comm(comm)))
    }

    /// Registers `len` bytes at `ptr` with `comm`. TCPX takes an `int` size.
    pub fn reg_mr(&self, comm: Comm, ptr: *mut u8, len: usize, kind: MemKind) -> Result<Mr> {
        let size = c_int::try_from(len).map_err(|_| {
            Error::invalid_argument(format!("TCPX registers at most 2 GiB at once; asked for {len} bytes"))
        })?;
        let type_ = match kind {
            MemKind::Host => NCCL_PTR_HOST,
            MemKind::Cuda => NCCL_PTR_CUDA,
        };
        let mut mh: *mut c_void = std::ptr::null_mut();
        // SAFETY: comm is live; TCPX records ptr/size (CUDA: exports the range as a dmabuf).
        check("regMr", unsafe {
            self.table.regMr.unwrap()(comm.0, ptr as *mut c_void, size, type_, &mut mh).0
        })?;
        if mh.is_null() {
            return Err(Error::internal("TCPX regMr returned no memory handle"));
        }
        Ok(Mr(mh))
    }

    pub fn dereg_mr(&self, comm: Comm, mr: Mr) -> Result<()> {
        // SAFETY: mr came from reg_mr on this comm and no request using it is outstanding.
        check("deregMr", unsafe { self.table.deregMr.unwrap()(comm.0, mr.0).0 })
    }

    /// Posts a send. TCPX reads `ptr .. ptr + len` until the request tests done; the engine keeps
    /// that memory valid (NCCL's contract for isend).
    pub fn isend(&self, comm: Comm, ptr: *const u8, len: usize, tag: c_int, mr: Mr) -> Posted {
        let Ok(size) = c_int::try_from(len) else {
            return Posted::Refused(RC_INTERNAL);
        };
        let mut req: *mut c_void = std::ptr::null_mut();
        sigpipe::hold_for_data_path();
        // SAFETY: comm is live, mr registered on it and covering ptr..ptr+len; req is an out-pointer.
        let rc = unsafe { self.table.isend.unwrap()(comm.0, ptr as *mut c_void, size, tag, mr.0, &mut req).0 };
        posted(rc, req)
    }

    /// Posts one receive (n = 1). TCPX lands the bytes in its bounce pool (device memory) or,
    /// for host memory, in place; `ptr .. ptr + len` stays valid until consumed.
    pub fn irecv(&self, comm: Comm, ptr: *mut u8, len: usize, tag: c_int, mr: Mr) -> Posted {
        let Ok(size) = c_int::try_from(len) else {
            return Posted::Refused(RC_INTERNAL);
        };
        let mut data = [ptr as *mut c_void];
        let mut sizes = [size];
        let mut tags = [tag];
        let mut mhs = [mr.0];
        let mut req: *mut c_void = std::ptr::null_mut();
        sigpipe::hold_for_data_path();
        // SAFETY: one-element arrays for n = 1, live for the call; comm and mr as for isend.
        let rc = unsafe {
            self.table.irecv.unwrap()(
                comm.0,
                1,
                data.as_mut_ptr(),
                sizes.as_mut_ptr(),
                tags.as_mut_ptr(),
                mhs.as_mut_ptr(),
                &mut req,
            )
            .0
        };
        posted(rc, req)
    }

    /// Tests a request: Ok(true) when done. TCPX never writes the size; a result code is returned
    /// as Err for the caller to judge.
    pub fn test(&self, req: Request) -> std::result::Result<bool, c_int> {
        let mut done: c_int = 0;
        let mut size: c_int = -1;
        sigpipe::hold_for_data_path();
        // SAFETY: req is a live request of this library; out-pointers valid.
        let rc = unsafe { self.table.test.unwrap()(req.0, &mut done, &mut size).0 };
        if rc != 0 {
            sigpipe::after_data_path_failure();
            return Err(rc);
        }
        Ok(done != 0)
    }

    /// Releases a completed receive and its bounce pages (n = 1).
    pub fn irecv_consumed(&self, comm: Comm, req: Request) -> Result<()> {
        sigpipe::hold_for_data_path();
        // SAFETY: req is this comm's oldest completed, not yet consumed receive.
        check("irecvConsumed", unsafe {
            self.table.irecvConsumed.unwrap()(comm.0, 1, req.0).0
        })
        .inspect_err(|_| sigpipe::after_data_path_failure())
    }

    pub fn close_send(&self, comm: Comm) -> Result<()> {
        let _sigpipe = sigpipe::Scoped::new();
        // SAFETY: comm is a live send comm, closed once.
        check("closeSend", unsafe { self.table.closeSend.unwrap()(comm.0).0 })
    }

    pub fn close_recv(&self, comm: Comm) -> Result<()> {
        let _sigpipe = sigpipe::Scoped::new();
        // SAFETY: comm is a live receive comm, closed once.
        check("closeRecv", unsafe { self.table.closeRecv.unwrap()(comm.0).0 })
    }

    pub fn close_listen(&self, comm: Comm) -> Result<()> {
        let _sigpipe = sigpipe::Scoped::new();
        // SAFETY: comm is a live listen comm, closed once.
        check("closeListen", unsafe { self.table.closeListen.unwrap()(comm.0).0 })
    }
}

fn posted(rc: c_int, req: *mut c_void) -> Posted {
    match (rc, req.is_null()) {
        (0, false) => Posted::Yes(Request(req)),
        (0, true) => Posted::NoRequest,
        (rc, _) => {
            sigpipe::after_data_path_failure();
            Posted::Refused(rc)
        }
    }
}

/// Storage for the device handle TCPX's accept writes: preallocated, 16-byte aligned, larger than
/// `ncclNetDeviceHandle_v7_t` (UCCL's crash when accept wrote through a NULL pointer is the reason).
#[repr(C, align(16))]
pub struct DevHandleStorage([u8; 512]);

impl DevHandleStorage {
    pub fn new() -> Box<DevHandleStorage> {
        Box::new(DevHandleStorage([0; 512]))
    }

    fn handle(&self) -> ncclNetDeviceHandle_v7_t {
        // SAFETY: the storage is 512 aligned bytes, and any bit pattern is a valid handle value
        // (ints, a raw pointer and a size).
        unsafe { std::ptr::read(self.0.as_ptr() as *const ncclNetDeviceHandle_v7_t) }
    }
}

/// The unpack queue of one receive comm, read once after accept: the host-mapped
/// `netUnpackMeta` ring and the bounce pool its records point into.
pub struct UnpackQueue {
    meta: *const netUnpackMeta,
    /// The ring's address on the GPU (it is host memory mapped into the device), when the driver
    /// can tell: the unpack kernel reads the records there.
    meta_dev: Option<u64>,
    pub bounce: *const u8,
    /// Whether the CPU can read the bounce pool (host memory, or pinned host memory mapped into
    /// the device); false for TCPX's real pool in GPU memory.
    pub bounce_on_host: bool,
}

// SAFETY: the ring and pool belong to the TCPX comm, which outlives this value; reads are ordered
// by the acquire load of `cnt`.
unsafe impl Send for UnpackQueue {}

impl UnpackQueue {
    /// Reads what accept wrote into `storage`. None when TCPX reports a plain host device (no
    /// unpack: data lands in place).
    pub fn from_accept(storage: &DevHandleStorage) -> Result<Option<UnpackQueue>> {
        let h = storage.handle();
        if h.netDeviceType != NCCL_NET_DEVICE_UNPACK {
            return Ok(None);
        }
        if h.netDeviceVersion != NCCL_NET_DEVICE_UNPACK_VERSION {
            return Err(Error::internal(format!(
                "TCPX's unpack device handle has version {:#x}; tcpxr reads version {NCCL_NET_DEVICE_UNPACK_VERSION:#x}",
                h.netDeviceVersion
            )));
        }
        if h.handle.is_null() || h.size < std::mem::size_of::<unpackNetDeviceHandle>() {
            return Err(Error::internal(format!(
                "TCPX accept gave an unpack device handle of {} bytes at {:p}",
                h.size, h.handle
            )));
        }
        // The handle itself is in device memory for real TCPX (read with cuMemcpyDtoH) and in host
        // memory for the emulator's host mode.
        let mut raw = [0u8; std::mem::size_of::<unpackNetDeviceHandle>()];
        // SAFETY: TCPX says `handle` points to `size` (>= 24) bytes of its unpack handle.
        unsafe { crate::gpu::copy_to_host(h.handle as *const u8, &mut raw) }?;
        // SAFETY: raw holds the bytes of an unpackNetDeviceHandle (two pointers and a u64).
        let u: unpackNetDeviceHandle = unsafe { std::ptr::read_unaligned(raw.as_ptr() as *const _) };
        if u.meta.is_null() {
            return Err(Error::internal("TCPX's unpack handle has no metadata ring"));
        }
        if crate::gpu::is_device_memory(u.meta as *const u8) {
            return Err(Error::internal(
                "TCPX's unpack metadata is device memory; tcpxr reads it from the host and needs it host-mapped",
            ));
        }
        Ok(Some(UnpackQueue {
            meta: u.meta,
            meta_dev: crate::gpu::device_address(u.meta as *const u8),
            bounce: u.bounce_buf as *const u8,
            bounce_on_host: !u.bounce_buf.is_null() && !crate::gpu::is_device_memory(u.bounce_buf as *const u8),
        }))
    }

    /// Whether the GPU can read the ring (the unpack kernel can place receives).
    pub fn on_device(&self) -> bool {
        self.meta_dev.is_some()
    }

    /// The unpack kernel's view of the `len`-byte receive of queue slot `slot`, which has tested
    /// done: its records' device address and count, and the pool's base. The records are checked
    /// first (every fragment inside the receive, together exactly `len` bytes), so a bad record
    /// places nothing. None when TCPX published no records (it landed the bytes in place).
    pub fn device_job(&self, slot: usize, len: usize) -> Result<Option<DeviceJob>> {
        let records = self.records(slot)?;
        if records.is_empty() {
            return Ok(None);
        }
        let job = super::unpack::Job {
            records,
            bounce: self.bounce,
            dst: std::ptr::null_mut(),
            len,
        };
        job.check()?;
        let meta_dev = self
            .meta_dev
            .ok_or_else(|| Error::internal("TCPX's unpack ring is not visible to the GPU"))?;
        Ok(Some(DeviceJob {
            records: meta_dev + (records.as_ptr() as u64 - self.meta as u64),
            count: records.len() as u32,
            bounce: self.bounce as u64,
        }))
    }

    /// The records of queue slot `slot` once the receive there has tested done. The count is read
    /// with acquire ordering, pairing with the release store TCPX publishes it with, so the
    /// records it covers are complete.
    pub fn records(&self, slot: usize) -> Result<&[loadMeta]> {
        let slot = slot % NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH;
        // SAFETY: meta points to a live netUnpackMeta (host-mapped, checked in from_accept); cnt is
        // an aligned u64 TCPX writes with release ordering, read here atomically.
        let cnt = unsafe {
            let cnt_ptr = std::ptr::addr_of!((*self.meta).cnt[slot]) as *mut u64;
            AtomicU64::from_ptr(cnt_ptr).load(Ordering::Acquire)
        };
        if cnt as usize > NET_UNPACK_MAX_SLICE_PAGES {
            return Err(Error::internal(format!(
                "TCPX published {cnt} unpack records for one receive; the ring holds {NET_UNPACK_MAX_SLICE_PAGES}"
            )));
        }
        // SAFETY: mem[slot][..cnt] was written before cnt was published and stays unchanged until
        // this receive is consumed.
        Ok(unsafe {
            let first = std::ptr::addr_of!((*self.meta).mem[slot]) as *const loadMeta;
            std::slice::from_raw_parts(first, cnt as usize)
        })
    }
}

type LoggerFn = unsafe extern "C" fn(c_int, c_ulong, *const c_char, c_int, *const c_char, ...);
type LoggerNoArgs = unsafe extern "C" fn(c_int, c_ulong, *const c_char, c_int, *const c_char);

/// TCPX's logger when NCCL gave tcpxr none (tests, the bench): routes TCPX's lines to tcpxr's log
/// with the format string as it is (stable Rust cannot read C varargs, so "%d" stays "%d").
///
/// # Safety
/// `fmt` and `file` must each be NULL or a NUL-terminated string, readable during the call.
unsafe extern "C" fn log_without_args(
    level: c_int,
    _flags: c_ulong,
    file: *const c_char,
    line: c_int,
    fmt: *const c_char,
) {
    if fmt.is_null() {
        return;
    }
    // SAFETY: a non-NULL `fmt` is a NUL-terminated string (the caller's promise).
    let text = unsafe { CStr::from_ptr(fmt) }.to_string_lossy();
    let origin = if file.is_null() {
        "tcpx".into()
    } else {
        // SAFETY: a non-NULL `file` is a NUL-terminated string (the caller's promise).
        unsafe { CStr::from_ptr(file) }.to_string_lossy()
    };
    // TCPX calls this from its own threads, outside tcpxr's guarded entry points: a panic in a
    // logger (a failed write) must not unwind into C, where Rust aborts the process.
    let _ = std::panic::catch_unwind(|| match level {
        crate::abi::NCCL_LOG_WARN => log::warn!(target: "tcpxr::tcpx", "[{origin}:{line}] {text}"),
        crate::abi::NCCL_LOG_INFO => log::info!(target: "tcpxr::tcpx", "[{origin}:{line}] {text}"),
        _ => log::trace!(target: "tcpxr::tcpx", "[{origin}:{line}] {text}"),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    #[test]
    fn device_handle_storage_is_aligned_and_large_enough() {
        assert_eq!(std::mem::align_of::<DevHandleStorage>(), 16);
        assert!(size_of::<DevHandleStorage>() >= 512);
        assert!(size_of::<DevHandleStorage>() >= size_of::<ncclNetDeviceHandle_v7_t>());
    }

    #[test]
    fn result_codes_map_to_nccl_errors() {
        use crate::abi::ncclResult_t as R;
        assert_eq!(error("x", 6).code, R::ncclRemoteError);
        assert_eq!(error("x", 2).code, R::ncclSystemError);
        assert_eq!(error("x", 3).code, R::ncclInternalError);
        assert_eq!(error("x", 99).code, R::ncclInternalError);
    }

    #[test]
    fn records_come_from_the_slot_and_stop_at_the_published_count() {
        let layout = std::alloc::Layout::new::<netUnpackMeta>();
        // SAFETY: a layout of non-zero size.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) } as *mut netUnpackMeta;
        assert!(!raw.is_null(), "cannot allocate {} bytes", layout.size());
        // SAFETY: all-zero is a valid netUnpackMeta; the non-NULL allocation has its layout (as
        // the global allocator's Box expects) and is owned by the Box from here (512 KiB, too
        // large for the stack).
        let mut meta: Box<netUnpackMeta> = unsafe { Box::from_raw(raw) };
        meta.mem[3][0] = loadMeta {
            src_off: 4096,
            len: 10,
            dst_off: 0,
        };
        meta.mem[3][1] = loadMeta {
            src_off: 77,
            len: 5,
            dst_off: 10,
        };
        meta.cnt[3] = 2;
        let q = UnpackQueue {
            meta: &*meta,
            meta_dev: None,
            bounce: std::ptr::null(),
            bounce_on_host: true,
        };
        let r = q.records(19).unwrap(); // 19 % 16 == 3
        assert_eq!(r.len(), 2);
        assert_eq!((r[1].src_off, r[1].len, r[1].dst_off), (77, 5, 10));
        assert!(q.records(4).unwrap().is_empty());
        meta.cnt[5] = 2049;
        let q = UnpackQueue {
            meta: &*meta,
            meta_dev: None,
            bounce: std::ptr::null(),
            bounce_on_host: true,
        };
        assert!(q.records(5).is_err());
    }
}
