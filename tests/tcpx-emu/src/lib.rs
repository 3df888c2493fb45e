//! tcpx-emu: a library with the ABI and the observable behaviour of Google's GPUDirect-TCPX NCCL
//! plugin (reference/tcpx.md sections 1.5-2.5), so tcpxr's tcpx transport can be proven without
//! A3 hardware. It exports one symbol, `ncclNetPlugin_v7`, and moves bytes over loopback TCP.
//!
//! What it does as TCPX does:
//! * 16 request slots per comm; the 17th isend/irecv returns 3 with the WARN "unable to allocate
//!   requests"; a send's slot is freed when test reports it done, a receive's only by
//!   `irecvConsumed`;
//! * FIFO matching per comm; tags are ignored; the receive size is the sender's;
//! * `test` on anything but the comm's oldest not-yet-reported request is an error (3); `test`
//!   never writes the size;
//! * connect and accept return NULL at first; connect keeps its in-progress state inside the
//!   caller's handle buffer; accept writes the device handle into storage the caller passes;
//! * connect completes only once the peer's accept has taken the connection and answered it
//!   (TCPX's connect thread waits for the accept thread's connection state, connect.cc), so a
//!   connect waits for as long as the peer's NCCL has not called accept; a listener that closes
//!   first fails it with 2, and one that refuses the connection is retried for 20 s, then 2;
//! * a failure of the connection (the peer closed or reset it) is reported by `test` as 2
//!   (tcpxSystemError) when it hits the control path, and not at all when it hits the data path
//!   that TCPX's helper threads serve: their requests then never complete, with a WARN, until a
//!   later request's control message fails (comm.rs explains the mapping);
//! * `deregMr` ignores its comm, so a handle may be deregistered after its comm was closed (TCPX
//!   closes the buffer's dmabuf fd there, which its helper threads send from until `close` joins
//!   them);
//! * received bytes land in a bounce pool as fragments of at most 4 KiB at arbitrary offsets;
//!   the n-th receive of a comm gets its `loadMeta` records in slot n % 16 of a `netUnpackMeta`
//!   ring (16 x 2048), whose count is published with release ordering before test says done;
//!   more than 2048 fragments in one receive is an error (TCPX exits the process);
//! * one bounce pool per GPU for the process, shared by every receive comm on that GPU, so the
//!   records of different comms index one base. TCPX imports RxDM's pool once per GPU
//!   (`gpu_get_rxmem`, gpu/cuda_wrapper.cu, caches it as the GPU's `rx.rxmem`) and every passive
//!   comm's device handle gets that address as `bounce_buf` (`__tcpxNetDeviceQueueNew`,
//!   devcomm/nccl/unpack1.cu). The emulator keeps one pool per device (`Emu::pool`, the device of
//!   the calling thread's context; one pool in host mode) and puts its base into every receive
//!   comm's handle;
//! * `irecvConsumed` must name the oldest completed receive (FIFO), else 3; only then are its
//!   pages recycled, and a recycled page is poisoned, so a consume before the unpack finished
//!   shows up as wrong data;
//! * `regMr` of CUDA memory must start on a 4 KiB boundary.
//!
//! Where it is stricter, to catch mistakes TCPX would turn into crashes or silent corruption:
//! isend/irecv with a NULL memory handle, one registered on another comm, or data outside the
//! registered range fail with 5 (TCPX: 3, or nothing); a message larger than the posted receive
//! fails the receive; accept with a NULL or misaligned device-handle pointer fails with 5 (TCPX
//! would write through it); connect with a different handle buffer than the one it started with
//! fails with 5; deregMr of a handle that a request in flight on the comm's running thread uses
//! is counted (`bad_deregs`) with a WARN, for host memory too (TCPX closes the dmabuf fd of CUDA
//! memory its helper threads send from; for host memory it only frees the handle).
//!
//! Where it differs: TCPX receives into host memory in place (WARN "requested receive on host
//! mem buffer"); the emulator always goes through the bounce pool, which is what makes the unpack
//! testable on a CPU-only machine. The NIC writes TCPX's pool by DMA; the emulator's receive
//! threads write it with the CPU or with copies (below).
//!
//! GPU modes and the application's CUDA context. The emulator stands for the NIC and TCPX, so
//! none of its GPU work may be queued in the application's context (the device's primary
//! context, where NCCL's kernel runs): with one hardware queue (`CUDA_DEVICE_MAX_CONNECTIONS=1`)
//! or under MPS such work can wait behind NCCL's kernel while the kernel waits for the bytes it
//! would deliver, a deadlock that would make a GPU test prove nothing. So (gpu.rs, pool.rs):
//! * all its GPU work runs in a context of its own per device (`cuCtxCreate`), pushed and popped
//!   around each use so the calling thread's context is unchanged;
//! * `gpu`: the pool is device memory mapped with the VMM API in that context, readable by every
//!   context on the device (as TCPX's imported pool). The receive thread reads the socket into
//!   pinned staging pages and copies each run of consecutive pool pages with one
//!   `cuMemcpyHtoDAsync` on its own stream; records are published only after the copies
//!   completed. Recycled pages are poisoned by `cuMemsetD8Async` in the private context and reused
//!   only after the fill's event (irecvConsumed never waits on the GPU);
//! * `gpu-mapped`: the pool is pinned host memory mapped into the device (`DEVICEMAP |
//!   PORTABLE`, one device address in every context); the receive thread reads the socket
//!   straight into the pages (readv, no copy) and recycling poisons with the CPU;
//! * both: the `netUnpackMeta` ring is mapped pinned host memory, written by the CPU; the
//!   `unpackNetDeviceHandle` is device memory (VMM) of the private context, written by a copy
//!   there that accept waits for, as TCPX keeps it in device memory: NCCL's kernel reads it and
//!   increments `head` in it, and tcpxr reads it once after accept with its own copy;
//! * sends from GPU memory are read with `cuMemcpyDtoHAsync` in the private context of the
//!   buffer's device, straight from its unified address (works for `cuMemAlloc` and VMM memory of
//!   the primary context); should a driver refuse that, through `cuMemcpyPeerAsync` into the
//!   private context's memory; a refusal of both fails the send naming both CUDA results.
//!
//! Settings (environment, read at init):
//! * `NCCL_GPUDIRECTTCPX_SOCKET_IFNAME`: comma-separated device names (default `lo`); data always
//!   moves over 127.0.0.1;
//! * `TCPX_EMU_MODE`: `host` (default: pool, metadata and handle in host memory; reports
//!   `NCCL_PTR_HOST` only; CI), `gpu` (pool in device memory, ring in mapped pinned host memory,
//!   handle in device memory: TCPX's layout, and the one to prove GPU paths with, since the CPU
//!   cannot read such a pool), `gpu-mapped` (as gpu, pool in mapped pinned host memory, which the
//!   CPU can read: faster to fill, but lets a consumer read the pool from the host where real
//!   TCPX would not allow it); the device is the one of the calling thread's CUDA context (NCCL's
//!   thread for that GPU), as with TCPX; `TCPX_EMU_GPU` picks it for a thread without a context
//!   (default 0). The GPU modes need a CUDA 12.5 driver or newer (`cuCtxCreate_v4`);
//! * `TCPX_EMU_POOL_MB`: bounce pool size per device (default 1024);
//! * `TCPX_EMU_SLOTS`: request slots per comm (default and at most 16; fewer provokes "unable to
//!   allocate requests");
//! * `TCPX_EMU_SEED`: seed of the fragment sizes and offsets;
//! * `TCPX_EMU_TX_COMPLETION_MS`: a send is reported done this long after its last byte went
//!   (default 0). TCPX reports a send of GPU memory once the kernel's zero-copy completion for it
//!   arrived, after the peer acknowledged the bytes, and its helper thread polled for it: a send
//!   may be reported after its receiver has everything, even after that receiver closed;
//! * `TCPX_EMU_SIGPIPE=1`: sends go without MSG_NOSIGNAL, as TCPX's, so a send on a connection
//!   its peer reset raises SIGPIPE on the sending thread; and test on a send comm whose connection
//!   failed sends the control message again from the calling thread, as TCPX's test does (its
//!   buffered control send keeps what it could not send and sends it again at every test,
//!   ctrl_sock.h `sync`), which is a send on a reset socket: EPIPE, and SIGPIPE. Off by default
//!   (the emulator's sends use MSG_NOSIGNAL);
//! * `TCPX_EMU_STATS`: a file to which every closed comm appends one line of counters (posts,
//!   most requests held, refusals, tests not on the oldest, out-of-order consumes, largest
//!   message, most records in one receive, regMr calls, deregMr calls flagged as above);
//! * `TCPXR_LOG_FILE`: without a logger from init, WARNs are appended to this file (as
//!   `[tcpx-emu WARN] ...`, where tcpxr's tests collect and check their logs) instead of stderr.
#![deny(unsafe_op_in_unsafe_fn)]

mod abi;
mod comm;
mod gpu;
mod pool;

use abi::*;
use comm::{Comm, Listen, Mr, Req};
use pool::{Mode, Pool};
use std::ffi::{c_char, c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

pub(crate) use abi::PAGE;

/// What an entry point failed with: a result code and the WARN that explains it.
pub(crate) struct Fail {
    pub rc: c_int,
    pub msg: String,
}

pub(crate) type R<T> = Result<T, Fail>;

/// TCPX's code for "no request slot" and most of its other failures.
pub(crate) const RC_BUSY: c_int = 3;
/// The emulator's code for a broken contract TCPX would not report (so it is never retried).
pub(crate) const RC_USAGE: c_int = 5;
/// TCPX's code for a failed socket operation, a peer that closed the connection included
/// (tcpxSystemError, from socketProgressOpt in misc/socket_utils.cc): TCPX never returns
/// tcpxRemoteError for a peer that is gone.
pub(crate) const RC_SYSTEM: c_int = 2;

pub(crate) fn fail<T>(rc: c_int, msg: impl Into<String>) -> R<T> {
    Err(Fail { rc, msg: msg.into() })
}

struct Device {
    name: CString,
    pci: Option<CString>,
    speed: c_int,
}

pub(crate) struct Emu {
    mode: Mode,
    devices: Vec<Device>,
    pub slots: usize,
    pub seed: u64,
    /// TCPX_EMU_TX_COMPLETION_MS: how long after its last byte went a send is reported done.
    pub tx_completion: std::time::Duration,
    /// TCPX_EMU_SIGPIPE=1: sends raise SIGPIPE as TCPX's do (see comm.rs `send_all`).
    pub sigpipe: bool,
    /// TCPX_EMU_SOCKET_BUFFER (bytes; 0, the default: the kernel's autotuning): SO_SNDBUF and
    /// SO_RCVBUF of every comm's connection, for a test that needs a bound on the bytes the
    /// kernel holds between a sender and a receive not yet posted (autotuned loopback buffers
    /// grow past 4 MiB each way).
    pub socket_buffer: usize,
    stats: Option<String>,
    pool_bytes: usize,
    gpu_ordinal: i32,
    /// Per device (ordinal; -1 in host mode): its GPU and its bounce pool, made on first use.
    gpus: Mutex<Vec<(i32, Arc<gpu::Gpu>)>>,
    pools: Mutex<Vec<(i32, Arc<Pool>)>>,
    stats_file: Mutex<()>,
}

static EMU: OnceLock<Result<Emu, String>> = OnceLock::new();
static LOGGER: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

pub(crate) fn emu() -> R<&'static Emu> {
    match EMU.get() {
        Some(Ok(e)) => Ok(e),
        Some(Err(e)) => fail(RC_BUSY, e.clone()),
        None => fail(RC_BUSY, "called before init"),
    }
}

impl Emu {
    fn from_env() -> Result<Emu, String> {
        let var = |n: &str| std::env::var(n).ok().filter(|v| !v.trim().is_empty());
        let mode_text = var("TCPX_EMU_MODE").unwrap_or_default();
        let mode =
            Mode::parse(&mode_text).ok_or(format!("TCPX_EMU_MODE={mode_text}: accepted host, gpu, gpu-mapped"))?;
        let num = |n: &str, default: u64| -> Result<u64, String> {
            match var(n) {
                None => Ok(default),
                Some(v) => v.trim().parse().map_err(|_| format!("{n}={v}: not a number")),
            }
        };
        let slots = num("TCPX_EMU_SLOTS", QUEUE_DEPTH as u64)? as usize;
        if !(1..=QUEUE_DEPTH).contains(&slots) {
            return Err(format!("TCPX_EMU_SLOTS={slots}: accepted 1-{QUEUE_DEPTH}"));
        }
        let names = var("NCCL_GPUDIRECTTCPX_SOCKET_IFNAME").unwrap_or_else(|| "lo".into());
        let devices = names
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| Device {
                name: CString::new(n).unwrap_or_default(),
                pci: std::fs::canonicalize(format!("/sys/class/net/{n}/device"))
                    .ok()
                    .and_then(|p| CString::new(p.to_string_lossy().into_owned()).ok()),
                speed: std::fs::read_to_string(format!("/sys/class/net/{n}/speed"))
                    .ok()
                    .and_then(|s| s.trim().parse::<c_int>().ok())
                    .filter(|s| *s > 0)
                    .unwrap_or(10_000),
            })
            .collect();
        Ok(Emu {
            mode,
            devices,
            slots,
            seed: num("TCPX_EMU_SEED", 0x7c9a_11ed)?,
            tx_completion: std::time::Duration::from_millis(num("TCPX_EMU_TX_COMPLETION_MS", 0)?),
            sigpipe: num("TCPX_EMU_SIGPIPE", 0)? != 0,
            socket_buffer: num("TCPX_EMU_SOCKET_BUFFER", 0)? as usize,
            stats: var("TCPX_EMU_STATS"),
            pool_bytes: num("TCPX_EMU_POOL_MB", 1024)? as usize * (1 << 20),
            gpu_ordinal: num("TCPX_EMU_GPU", 0)? as i32,
            gpus: Mutex::new(Vec::new()),
            pools: Mutex::new(Vec::new()),
            stats_file: Mutex::new(()),
        })
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The GPU of the calling thread's current context (as TCPX uses the device NCCL's thread
    /// works for), else TCPX_EMU_GPU.
    pub fn gpu(&self) -> R<Arc<gpu::Gpu>> {
        self.gpu_of(gpu::Gpu::current_ordinal().unwrap_or(self.gpu_ordinal))
    }

    /// The emulator's own context on device `ordinal`, made on first use (gpu.rs).
    pub fn gpu_of(&self, ordinal: i32) -> R<Arc<gpu::Gpu>> {
        let mut gpus = self.gpus.lock().unwrap();
        if let Some((_, g)) = gpus.iter().find(|(o, _)| *o == ordinal) {
            return Ok(g.clone());
        }
        let g = Arc::new(gpu::Gpu::open(ordinal).or_else(|e| fail(RC_BUSY, format!("GPU mode: {e}")))?);
        info(&format!(
            "GPU {ordinal}: the emulator's own CUDA context is made (cuCtxCreate); all its GPU work runs there"
        ));
        gpus.push((ordinal, g.clone()));
        Ok(g)
    }

    /// The bounce pool of the calling thread's device (one for the process in host mode).
    pub fn pool(&self) -> R<Arc<Pool>> {
        let gpu = match self.mode {
            Mode::Host => None,
            _ => Some(self.gpu()?),
        };
        let key = gpu.as_ref().map_or(-1, |g| g.ordinal);
        let mut pools = self.pools.lock().unwrap();
        if let Some((_, p)) = pools.iter().find(|(k, _)| *k == key) {
            return Ok(p.clone());
        }
        let p = Arc::new(
            Pool::new(self.mode, gpu, self.pool_bytes).or_else(|e| fail(RC_BUSY, format!("bounce pool: {e}")))?,
        );
        pools.push((key, p.clone()));
        Ok(p)
    }

    /// Appends one line to TCPX_EMU_STATS, if set.
    pub fn record(&self, line: &str) {
        let Some(path) = &self.stats else { return };
        let _g = self.stats_file.lock().unwrap();
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(f, "{line}");
        }
    }
}

fn log(level: c_int, msg: &str) {
    let raw = LOGGER.load(Ordering::Acquire);
    let text = format!("NET/tcpx-emu : {msg}");
    if raw.is_null() {
        if level == LOG_WARN {
            warn_without_logger(&text);
        }
        return;
    }
    // SAFETY: every non-null value stored in LOGGER is the logger function init was given.
    let f: unsafe extern "C" fn(c_int, std::ffi::c_ulong, *const c_char, c_int, *const c_char, ...) =
        unsafe { std::mem::transmute(raw) };
    // The message is the format, its % signs doubled, so no argument is ever read.
    let fmt = CString::new(text.replace('%', "%%").replace('\0', "")).unwrap_or_default();
    let flags = if level == LOG_WARN { ALL } else { NET };
    // SAFETY: NCCL-style logger; a NUL-terminated format without conversions and a static file name.
    unsafe { f(level, flags, c"tcpx-emu".as_ptr(), 0, fmt.as_ptr()) };
}

/// A WARN when no logger was given: appended to the file TCPXR_LOG_FILE names (where tcpxr's tests
/// collect the logs they check; tcpxr's own log goes there too), else to stderr.
fn warn_without_logger(text: &str) {
    use std::io::Write;
    if let Some(path) = std::env::var_os("TCPXR_LOG_FILE").filter(|p| !p.is_empty()) {
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
            // One write, so that lines of several threads and processes never interleave.
            let _ = f.write_all(format!("[tcpx-emu WARN] {text}\n").as_bytes());
            return;
        }
    }
    eprintln!("{text}");
}

pub(crate) fn warn(msg: &str) {
    log(LOG_WARN, msg);
}

pub(crate) fn info(msg: &str) {
    log(LOG_INFO, msg);
}

/// Runs an entry point: a failure becomes its WARN and result code, a panic a WARN and 3.
fn guard(what: &str, f: impl FnOnce() -> R<()>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => 0,
        Ok(Err(Fail { rc, msg })) => {
            if !msg.is_empty() {
                warn(&format!("{what}: {msg}"));
            }
            rc
        }
        Err(_) => {
            warn(&format!("{what}: panic"));
            RC_BUSY
        }
    }
}

macro_rules! non_null {
    ($p:expr, $what:expr) => {
        if $p.is_null() {
            return fail(RC_USAGE, concat!($what, " is NULL"));
        }
    };
}

// The entry points below are the v7 table's. Safety contract of each ("the v7 contract" in their
// `# Safety` sections): NCCL's v7 net ABI (as in reference/nccl-net-abi.md 1.7): every pointer
// argument NULL or valid for what that function reads and writes, and used by nobody else during
// the call; comms, memory handles and requests as this library returned them and not yet closed or
// freed. The emulator checks NULL and magics, not more.

/// # Safety
/// `logger`, if any, is a printf-style logger that stays callable for the process (the v7
/// contract).
unsafe extern "C" fn init(logger: Logger) -> c_int {
    LOGGER.store(
        logger.map_or(std::ptr::null_mut(), |f| f as *mut c_void),
        Ordering::Release,
    );
    guard("init", || {
        let e = emu_init()?;
        info(&format!(
            "TCPX-ABI emulator: {:?} mode, {} devices, {} request slots per comm",
            e.mode,
            e.devices.len(),
            e.slots
        ));
        Ok(())
    })
}

fn emu_init() -> R<&'static Emu> {
    EMU.get_or_init(Emu::from_env);
    emu()
}

/// # Safety
/// `ndev` is NULL or a writable int (the v7 contract).
unsafe extern "C" fn devices(ndev: *mut c_int) -> c_int {
    guard("devices", || {
        non_null!(ndev, "ndev");
        let n = emu()?.devices.len() as c_int;
        // SAFETY: a writable int (checked non-NULL), the caller's promise.
        unsafe { *ndev = n };
        Ok(())
    })
}

/// # Safety
/// `props` is NULL or room for one writable `Props` (the v7 contract).
unsafe extern "C" fn get_properties(dev: c_int, props: *mut Props) -> c_int {
    guard("getProperties", || {
        non_null!(props, "props");
        let e = emu()?;
        let Some(d) = usize::try_from(dev).ok().and_then(|i| e.devices.get(i)) else {
            return fail(RC_USAGE, format!("device {dev} does not exist"));
        };
        let p = Props {
            name: d.name.as_ptr() as *mut c_char,
            pciPath: d
                .pci
                .as_ref()
                .map_or(std::ptr::null_mut(), |p| p.as_ptr() as *mut c_char),
            guid: dev as u64,
            // Host mode stands for a TCPX without GPU memory: tcpxr then stages GPU chunks itself.
            ptrSupport: if e.mode == Mode::Host {
                NCCL_PTR_HOST
            } else {
                NCCL_PTR_HOST | NCCL_PTR_CUDA
            },
            speed: d.speed,
            port: 0,
            latency: 0.0,
            maxComms: 65536,
            maxRecvs: 1,
            netDeviceType: NCCL_NET_DEVICE_UNPACK,
            netDeviceVersion: NCCL_NET_DEVICE_UNPACK_VERSION,
        };
        // SAFETY: room for one Props (checked non-NULL), the caller's promise.
        unsafe { *props = p };
        Ok(())
    })
}

fn check_dev(dev: c_int) -> R<()> {
    if dev < 0 || dev as usize >= emu()?.devices.len() {
        return fail(RC_USAGE, format!("device {dev} does not exist"));
    }
    Ok(())
}

/// # Safety
/// `handle` is NULL or a writable 128-byte handle buffer; `listen_comm` NULL or a writable
/// pointer slot (the v7 contract).
unsafe extern "C" fn listen(dev: c_int, handle: *mut c_void, listen_comm: *mut *mut c_void) -> c_int {
    guard("listen", || {
        non_null!(handle, "handle");
        non_null!(listen_comm, "listenComm");
        check_dev(dev)?;
        // SAFETY: the caller's 128-byte handle buffer (checked non-NULL), untouched by others
        // during the call; a byte array needs no alignment.
        let h = unsafe { &mut *(handle as *mut [u8; HANDLE_BYTES]) };
        let l = Box::into_raw(Listen::bind(h)?) as *mut c_void;
        // SAFETY: a writable pointer slot (checked non-NULL), the caller's promise.
        unsafe { *listen_comm = l };
        Ok(())
    })
}

/// # Safety
/// `handle` is NULL or the peer's 128-byte handle buffer, the same live buffer on every call of
/// one connect; `send_comm` NULL or a writable pointer slot (the v7 contract).
unsafe extern "C" fn connect(
    dev: c_int,
    handle: *mut c_void,
    send_comm: *mut *mut c_void,
    _send_dev: *mut *mut DevHandle,
) -> c_int {
    guard("connect", || {
        non_null!(handle, "handle");
        non_null!(send_comm, "sendComm");
        // SAFETY: a writable pointer slot (checked non-NULL), the caller's promise.
        unsafe { *send_comm = std::ptr::null_mut() };
        check_dev(dev)?;
        // SAFETY: the caller's live 128-byte handle buffer (checked non-NULL), the same one on
        // every call, untouched by others during the call.
        if let Some(c) = unsafe { comm::connect(handle as *mut [u8; HANDLE_BYTES]) }? {
            // SAFETY: as for the first write.
            unsafe { *send_comm = comm::hand_out(c) };
        }
        Ok(())
    })
}

/// # Safety
/// `listen_comm` is NULL or a listen comm from `listen` (or memory of at least a `Listen`'s size);
/// `recv_comm` NULL or a writable pointer slot; `recv_dev` NULL or a readable pointer to NULL or
/// to writable storage for a device handle (the v7 contract).
unsafe extern "C" fn accept(
    listen_comm: *mut c_void,
    recv_comm: *mut *mut c_void,
    recv_dev: *mut *mut DevHandle,
) -> c_int {
    guard("accept", || {
        non_null!(recv_comm, "recvComm");
        // SAFETY: a writable pointer slot (checked non-NULL), the caller's promise.
        unsafe { *recv_comm = std::ptr::null_mut() };
        // SAFETY: the caller's promise on `listen_comm`; from_ptr checks the magic first, and NCCL
        // calls accept on one listen comm from one thread.
        let l = unsafe { Listen::from_ptr(listen_comm) }?;
        let Some(c) = l.accept()? else { return Ok(()) };
        if !recv_dev.is_null() {
            // SAFETY: a non-NULL recv_dev is a readable pointer (the caller's promise).
            let storage = unsafe { *recv_dev };
            if storage.is_null() {
                c.close();
                return fail(RC_USAGE, "*recvDevComm is NULL: the caller must pass preallocated storage (TCPX would write through it and crash)");
            }
            if storage as usize % 16 != 0 {
                c.close();
                return fail(
                    RC_USAGE,
                    format!("device handle storage {storage:p} is not 16-byte aligned"),
                );
            }
            // SAFETY: the caller's writable device-handle storage, checked non-NULL and 16-byte
            // aligned (DevHandle's alignment is at most 8).
            unsafe { *storage = c.device_handle() };
        }
        // SAFETY: as for the first write.
        unsafe { *recv_comm = comm::hand_out(c) };
        Ok(())
    })
}

/// # Safety
/// `comm` is NULL or a send or receive comm from connect or accept, not closed (or memory of at
/// least a `Comm`'s size); `mhandle` NULL or a writable pointer slot (the v7 contract).
unsafe extern "C" fn reg_mr(
    comm: *mut c_void,
    data: *mut c_void,
    size: c_int,
    type_: c_int,
    mhandle: *mut *mut c_void,
) -> c_int {
    guard("regMr", || {
        non_null!(mhandle, "mhandle");
        // SAFETY: the caller's promise on `comm`; from_ptr checks the magic first.
        let c = unsafe { Comm::from_ptr(comm) }?;
        let mr = Box::into_raw(Mr::new(c, data as usize, size, type_)?) as *mut c_void;
        // SAFETY: a writable pointer slot (checked non-NULL), the caller's promise.
        unsafe { *mhandle = mr };
        Ok(())
    })
}

/// As TCPX's deregMr, which never reads its comm argument (it frees the handle and, for CUDA
/// memory, closes the buffer's dmabuf fd and its TX registration: net_tcpx.cc tcpxDeregMr), a
/// handle may be deregistered after its comm was closed: the emulator then does not look at the
/// comm. While the comm is open the handle must have been registered on it, and deregistering it
/// while a request using it is in flight on a running helper thread is flagged (a WARN and the
/// `bad_deregs` counter): TCPX would close the fd that thread sends from.
///
/// # Safety
/// `comm` is any pointer (it is looked up among the open comms before it is read); `mhandle`
/// NULL or a handle `reg_mr` returned, not yet deregistered (or memory of at least an `Mr`'s
/// size); it is freed (the v7 contract).
unsafe extern "C" fn dereg_mr(comm: *mut c_void, mhandle: *mut c_void) -> c_int {
    guard("deregMr", || {
        // SAFETY: the caller's promise on `mhandle`; from_ptr_any checks its magic first.
        let mr = unsafe { Mr::from_ptr_any(mhandle) }?;
        if comm::is_open_id(mr.comm) {
            if comm::open_id(comm) != Some(mr.comm) {
                return fail(
                    RC_USAGE,
                    format!(
                        "deregMr of a memory handle of open comm {} given {comm:p}, which is not that comm",
                        mr.comm
                    ),
                );
            }
            // SAFETY: `comm` is open (in the registry of handed-out comms, not closed), so it is
            // a live Comm; from_ptr checks its magic too.
            let c = unsafe { Comm::from_ptr(comm) }?;
            c.deregistering(mr);
        }
        // SAFETY: from_ptr_any accepted it; NCCL deregisters a handle once and never uses it again.
        unsafe { Mr::free(mhandle) };
        Ok(())
    })
}

/// # Safety
/// `comm` as for [`reg_mr`]; `mhandle` as for [`dereg_mr`] (not freed); `request` NULL or a
/// writable pointer slot; `data..data+size` readable and unchanged until test says done (the v7
/// contract).
unsafe extern "C" fn isend(
    comm: *mut c_void,
    data: *mut c_void,
    size: c_int,
    _tag: c_int,
    mhandle: *mut c_void,
    request: *mut *mut c_void,
) -> c_int {
    guard("isend", || {
        non_null!(request, "request");
        // SAFETY: a writable pointer slot (checked non-NULL), the caller's promise.
        unsafe { *request = std::ptr::null_mut() };
        // SAFETY: the caller's promise on `comm`; from_ptr checks the magic first.
        let c = unsafe { Comm::from_ptr(comm) }?;
        // SAFETY: the caller's promise on `mhandle`; from_ptr checks magic and comm first.
        let mr = unsafe { Mr::from_ptr(mhandle, c) }?;
        let req = c.post(data as usize, size, mr)? as *mut c_void;
        // SAFETY: as for the first write.
        unsafe { *request = req };
        Ok(())
    })
}

/// # Safety
/// `comm` as for [`reg_mr`]; `data`, `sizes` and `mhandles` NULL or `n` readable entries, each
/// memory handle as for [`dereg_mr`] (not freed); `request` NULL or a writable pointer slot; each
/// buffer writable and untouched by others until test says done (the v7 contract).
unsafe extern "C" fn irecv(
    comm: *mut c_void,
    n: c_int,
    data: *mut *mut c_void,
    sizes: *mut c_int,
    _tags: *mut c_int,
    mhandles: *mut *mut c_void,
    request: *mut *mut c_void,
) -> c_int {
    guard("irecv", || {
        non_null!(request, "request");
        // SAFETY: a writable pointer slot (checked non-NULL), the caller's promise.
        unsafe { *request = std::ptr::null_mut() };
        if n != 1 {
            return fail(RC_USAGE, format!("irecv with n={n}: maxRecvs is 1"));
        }
        non_null!(data, "data");
        non_null!(sizes, "sizes");
        non_null!(mhandles, "mhandles");
        // SAFETY: n == 1 readable entries in each array (checked non-NULL), the caller's promise.
        let (data, size, mhandle) = unsafe { (*data, *sizes, *mhandles) };
        // SAFETY: the caller's promise on `comm`; from_ptr checks the magic first.
        let c = unsafe { Comm::from_ptr(comm) }?;
        // SAFETY: the caller's promise on the memory handle; from_ptr checks magic and comm first.
        let mr = unsafe { Mr::from_ptr(mhandle, c) }?;
        let req = c.post(data as usize, size, mr)? as *mut c_void;
        // SAFETY: as for the first write.
        unsafe { *request = req };
        Ok(())
    })
}

/// # Safety
/// `request` is NULL or a writable pointer slot (the v7 contract).
unsafe extern "C" fn iflush(
    _comm: *mut c_void,
    _n: c_int,
    _data: *mut *mut c_void,
    _sizes: *mut c_int,
    _mhandles: *mut *mut c_void,
    request: *mut *mut c_void,
) -> c_int {
    guard("iflush", || {
        non_null!(request, "request");
        // SAFETY: a writable pointer slot (checked non-NULL), the caller's promise.
        unsafe { *request = std::ptr::null_mut() };
        Ok(())
    })
}

/// # Safety
/// `request` is NULL or a request isend/irecv returned whose comm is open (or memory of at least
/// a `Req`'s size); `done` NULL or a writable int (the v7 contract).
unsafe extern "C" fn test(request: *mut c_void, done: *mut c_int, _size: *mut c_int) -> c_int {
    guard("test", || {
        non_null!(done, "done");
        // SAFETY: a writable int (checked non-NULL), the caller's promise.
        unsafe { *done = 0 };
        // SAFETY: the caller's promise on `request`; from_ptr checks the magic first.
        let req = unsafe { Req::from_ptr(request) }?;
        // TCPX never writes *size: the emulator does not touch it either.
        if req.comm().test(req)? {
            // SAFETY: as above.
            unsafe { *done = 1 };
        }
        Ok(())
    })
}

/// # Safety
/// `comm` is NULL or a send or receive comm from connect or accept (or memory of at least a
/// `Comm`'s size), not used again once closed (the v7 contract).
unsafe extern "C" fn close_comm(comm: *mut c_void) -> c_int {
    guard("close", || {
        // SAFETY: the caller's promise on `comm`; from_ptr checks the magic first.
        unsafe { Comm::from_ptr(comm) }?;
        comm::closing(comm);
        // SAFETY: the magic says `comm` came from Arc::into_raw in connect or accept; NCCL closes
        // it once, handing that reference back.
        let c = unsafe { Arc::from_raw(comm as *const Comm) };
        c.close();
        Ok(())
    })
}

/// # Safety
/// `listen_comm` is NULL or a listen comm from `listen` (or memory of at least a `Listen`'s
/// size), not used again once closed (the v7 contract).
unsafe extern "C" fn close_listen(listen_comm: *mut c_void) -> c_int {
    guard("closeListen", || {
        // SAFETY: the caller's promise on `listen_comm`; from_ptr checks the magic first.
        unsafe { Listen::from_ptr(listen_comm) }?;
        // SAFETY: the magic says it is the Box from listen; NCCL closes it once, after its last
        // accept, so no reference from from_ptr is alive.
        drop(unsafe { Box::from_raw(listen_comm as *mut Listen) });
        Ok(())
    })
}

/// Reads and writes nothing, so it is safe to call with any arguments.
extern "C" fn get_device_mr(_comm: *mut c_void, _mhandle: *mut c_void, _dptr: *mut *mut c_void) -> c_int {
    0
}

/// # Safety
/// `comm` as for [`close_comm`] (not closed); `request` as for [`test()`] (the v7 contract).
unsafe extern "C" fn irecv_consumed(comm: *mut c_void, n: c_int, request: *mut c_void) -> c_int {
    guard("irecvConsumed", || {
        if n != 1 {
            return fail(RC_BUSY, format!("irecvConsumed with n={n}"));
        }
        // SAFETY: the caller's promise on `comm`; from_ptr checks the magic first.
        let c = unsafe { Comm::from_ptr(comm) }?;
        // SAFETY: the caller's promise on `request`; from_ptr checks the magic first.
        let req = unsafe { Req::from_ptr(request) }?;
        c.consumed(req)
    })
}

#[no_mangle]
pub static ncclNetPlugin_v7: NetV7 = NetV7 {
    name: c"GPUDirectTCPX_v7_emulator".as_ptr(),
    init,
    devices,
    getProperties: get_properties,
    listen,
    connect,
    accept,
    regMr: reg_mr,
    regMrDmaBuf: None,
    deregMr: dereg_mr,
    isend,
    irecv,
    iflush,
    test,
    closeSend: close_comm,
    closeRecv: close_comm,
    closeListen: close_listen,
    getDeviceMr: get_device_mr,
    irecvConsumed: irecv_consumed,
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Host-mode throughput of the emulator alone (no unpack): 4 MiB messages, one at a time.
    /// `cargo test --release -p tcpx-emu -- --ignored --nocapture throughput`
    #[test]
    #[ignore]
    fn throughput_of_4_mib_messages_in_host_mode() {
        let null = std::ptr::null_mut;
        // Every call below passes the entry points what NCCL would: live buffers and out-pointers,
        // and the comms, handles and requests they returned, each closed or freed once at the end.
        // SAFETY: no logger.
        assert_eq!(unsafe { init(None) }, 0);
        let mut handle = [0u8; HANDLE_BYTES];
        let mut l = null();
        // SAFETY: a 128-byte handle buffer and a writable slot.
        assert_eq!(unsafe { listen(0, handle.as_mut_ptr() as *mut c_void, &mut l) }, 0);
        #[repr(C, align(16))]
        struct Storage([u8; 64]);
        let mut storage = Storage([0; 64]);
        let mut dh = storage.0.as_mut_ptr() as *mut DevHandle;
        let (mut s, mut r) = (null(), null());
        while s.is_null() || r.is_null() {
            if s.is_null() {
                // SAFETY: the handle listen wrote, the same buffer on every call; a writable slot.
                let rc = unsafe { connect(0, handle.as_mut_ptr() as *mut c_void, &mut s, std::ptr::null_mut()) };
                assert_eq!(rc, 0);
            }
            if r.is_null() {
                // SAFETY: the listen comm; a writable slot; aligned storage for the device handle.
                assert_eq!(unsafe { accept(l, &mut r, &mut dh) }, 0);
            }
        }
        let n = 4 << 20;
        let (mut sbuf, mut rbuf) = (vec![1u8; n], vec![0u8; n]);
        let (mut smh, mut rmh) = (null(), null());
        // SAFETY: the send comm, a live buffer of n bytes and a writable slot.
        let rc = unsafe { reg_mr(s, sbuf.as_mut_ptr() as *mut c_void, n as c_int, NCCL_PTR_HOST, &mut smh) };
        assert_eq!(rc, 0);
        // SAFETY: the receive comm, a live buffer of n bytes and a writable slot.
        let rc = unsafe { reg_mr(r, rbuf.as_mut_ptr() as *mut c_void, n as c_int, NCCL_PTR_HOST, &mut rmh) };
        assert_eq!(rc, 0);
        let rounds = 256;
        let t0 = Instant::now();
        for _ in 0..rounds {
            let (mut sq, mut rq) = (null(), null());
            let mut data = [rbuf.as_mut_ptr() as *mut c_void];
            let (mut size, mut tag, mut mh) = ([n as c_int], [0], [rmh]);
            // SAFETY: one-entry arrays, rbuf registered on r and untouched until consumed below.
            let rc = unsafe {
                irecv(
                    r,
                    1,
                    data.as_mut_ptr(),
                    size.as_mut_ptr(),
                    tag.as_mut_ptr(),
                    mh.as_mut_ptr(),
                    &mut rq,
                )
            };
            assert_eq!(rc, 0);
            // SAFETY: sbuf registered on s, unchanged until the send tests done below.
            let rc = unsafe { isend(s, sbuf.as_mut_ptr() as *mut c_void, n as c_int, 0, smh, &mut sq) };
            assert_eq!(rc, 0);
            let (mut sd, mut rd, mut sz) = (0, 0, 0);
            while sd == 0 || rd == 0 {
                if sd == 0 {
                    // SAFETY: the live send request and writable ints.
                    assert_eq!(unsafe { test(sq, &mut sd, &mut sz) }, 0);
                }
                if rd == 0 {
                    // SAFETY: the live receive request and writable ints.
                    assert_eq!(unsafe { test(rq, &mut rd, &mut sz) }, 0);
                }
            }
            // SAFETY: the receive comm and its oldest completed receive.
            assert_eq!(unsafe { irecv_consumed(r, 1, rq) }, 0);
        }
        let secs = t0.elapsed().as_secs_f64();
        eprintln!(
            "host mode, 4 MiB messages one at a time: {:.2} GB/s",
            (rounds * n) as f64 / secs / 1e9
        );
        // SAFETY: each handle deregistered once on its comm, each comm closed once, nothing
        // outstanding.
        unsafe {
            assert_eq!(dereg_mr(s, smh), 0);
            assert_eq!(dereg_mr(r, rmh), 0);
            assert_eq!(close_comm(s), 0);
            assert_eq!(close_comm(r), 0);
            assert_eq!(close_listen(l), 0);
        }
    }
}
