//! The core API every exported NCCL table adapts to, in Rust types: init, devices, properties,
//! listen, connect, accept, memory registration, isend, irecv, iflush, test, close.
//!
//! It owns the configuration and the devices, chooses the inner transport, and checks every
//! pointer NCCL hands back (comms carry a tag, requests a magic) before using it.
use crate::abi::{ncclDebugLogger_t, NCCL_PTR_CUDA, NCCL_PTR_HOST};
use crate::config::{self, Config};
use crate::engine::memory::Registration;
use crate::engine::requests::{Kind, Request};
use crate::engine::wire::{HANDLE_BYTES, HANDLE_TICKET_OFFSET};
use crate::engine::{CommTag, Connecting, ListenComm, RecvComm, SendComm, Tuning};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::transport::socket::{SocketOptions, SocketTransport};
use crate::transport::tcpx::{TcpxOptions, TcpxTransport};
use crate::transport::{MemKind, Transport};
use std::collections::HashMap;
use std::ffi::{c_int, c_void, CString};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const PLUGIN_NAME: &str = "tcpxr";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A device as NCCL sees it. The strings live as long as the plugin.
pub struct Device {
    pub name: CString,
    pub pci_path: Option<CString>,
    pub guid: u64,
    pub ptr_support: c_int,
    pub speed_mbps: c_int,
}

pub struct Plugin {
    pub config: &'static Config,
    pub transport: Arc<dyn Transport>,
    pub devices: Vec<Device>,
    /// The configured chunk size and windows, capped to what the transport can take
    /// ([`Transport::limits`]: TCPX receives at most 4 MiB, holds 12 sends and 16 receives).
    pub chunk_bytes: usize,
    pub send_window: usize,
    pub recv_window: usize,
}

static PLUGIN: Mutex<Option<Arc<Plugin>>> = Mutex::new(None);
/// Communicators (v11+ contexts) currently initialised.
static CONTEXTS: AtomicUsize = AtomicUsize::new(0);
/// Whether this process offered NCCL GPU buffers (decided once at init), so isend/irecv need not
/// ask the CUDA driver about pointers when it did not.
static GPU_BUFFERS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Loads configuration and devices the first time; later calls only refresh the logger.
pub fn init(logger: ncclDebugLogger_t) -> Result<()> {
    crate::log::install(logger);
    let mut slot = PLUGIN.lock().unwrap();
    if slot.is_some() {
        return Ok(());
    }
    let config = config::global()?;
    let opts = SocketOptions {
        sndbuf: config.sndbuf,
        rcvbuf: config.rcvbuf,
        handshake_timeout: Duration::from_millis(config.handshake_timeout_ms),
        peer_timeout_ms: config.peer_timeout_ms,
        io_threads: crate::transport::socket::io_threads(config.io_threads),
        handoff_bytes: config.handoff_bytes,
    };
    let ifname = config
        .ifname
        .clone()
        .or_else(|| std::env::var("NCCL_SOCKET_IFNAME").ok().filter(|s| !s.is_empty()));
    let transport = open_transport(config, logger, ifname.as_deref(), opts)?;
    let limits = transport.limits();
    let chunk_bytes = capped(
        "NCCL_TCPXR_CHUNK_BYTES",
        config.chunk_bytes,
        limits.max_chunk_bytes,
        transport.name(),
    );
    let send_window = capped(
        "NCCL_TCPXR_SEND_WINDOW",
        config.send_window,
        limits.send_slots,
        transport.name(),
    );
    let recv_window = capped(
        "NCCL_TCPXR_RECV_WINDOW",
        config.recv_window,
        limits.recv_slots,
        transport.name(),
    );
    let gpu_buffers = config.gpu_buffers.wanted(transport.name()) && crate::gpu::available();
    GPU_BUFFERS.store(gpu_buffers, Ordering::Release);
    let devices: Vec<Device> = transport
        .devices()
        .iter()
        .map(|d| Device {
            name: CString::new(d.name.clone()).unwrap_or_default(),
            pci_path: d.pci_path.clone().and_then(|p| CString::new(p).ok()),
            guid: d.guid,
            // GPU buffers: straight to TCPX, or through tcpxr's staging and unpack kernel over the
            // socket; offered when NCCL_TCPXR_GPU_BUFFERS asks (auto: over tcpx) and a CUDA driver
            // is present.
            ptr_support: if gpu_buffers {
                NCCL_PTR_HOST | NCCL_PTR_CUDA
            } else {
                NCCL_PTR_HOST
            },
            speed_mbps: d.speed_mbps,
        })
        .collect();
    let list: Vec<String> = transport
        .devices()
        .iter()
        .enumerate()
        .map(|(i, d)| format!("[{i}]{}:{}", d.name, d.ctrl_addr))
        .collect();
    log::info!(
        target: "tcpxr::init",
        "tcpxr {VERSION}: transport {}, {} stripes x {} B chunks, windows {} sends / {} receives per stripe, GPU buffers {}, devices {}",
        transport.name(),
        config.stripes,
        chunk_bytes,
        send_window,
        recv_window,
        match (config.gpu_buffers.wanted(transport.name()), crate::gpu::available()) {
            (true, true) => "yes".to_string(),
            (true, false) => "no (no CUDA driver)".to_string(),
            (false, _) => format!(
                "no (NCCL_TCPXR_GPU_BUFFERS={} over {})",
                config.gpu_buffers,
                transport.name()
            ),
        },
        list.join(" ")
    );
    *slot = Some(Arc::new(Plugin {
        config,
        transport,
        devices,
        chunk_bytes,
        send_window,
        recv_window,
    }));
    Ok(())
}

/// The inner transport NCCL_TCPXR_TRANSPORT asks for: `socket`; `tcpx` (an error when the TCPX
/// library does not load or has no device); `auto`: tcpx when it loads and reports a device, else
/// socket. The choice and its reason are logged.
fn open_transport(
    config: &Config,
    logger: ncclDebugLogger_t,
    ifname: Option<&str>,
    opts: SocketOptions,
) -> Result<Arc<dyn Transport>> {
    let socket = |why: &str| -> Result<Arc<dyn Transport>> {
        log::info!(target: "tcpxr::init", "inner transport: socket ({why})");
        Ok(Arc::new(SocketTransport::new(ifname, config.speed_mbps, opts.clone())?))
    };
    let tcpx = || {
        TcpxTransport::open(&TcpxOptions {
            lib: config.tcpx_lib.as_deref(),
            logger,
            ifname,
        })
    };
    let chosen = |t: TcpxTransport, why: &str| -> Arc<dyn Transport> {
        let (path, name) = t.library();
        log::info!(target: "tcpxr::init", "inner transport: tcpx ({why}: {name} from {path})");
        Arc::new(t)
    };
    match config.transport {
        config::Transport::Socket => socket("NCCL_TCPXR_TRANSPORT=socket"),
        config::Transport::Tcpx => {
            let t = tcpx().map_err(|e| e.context("NCCL_TCPXR_TRANSPORT=tcpx"))?;
            if t.devices().is_empty() {
                return Err(Error::system(format!(
                    "NCCL_TCPXR_TRANSPORT=tcpx: the TCPX library {} reports no devices",
                    t.library().0
                )));
            }
            Ok(chosen(t, "NCCL_TCPXR_TRANSPORT=tcpx"))
        }
        config::Transport::Auto => match tcpx() {
            Ok(t) if !t.devices().is_empty() => Ok(chosen(t, "auto, TCPX loaded with devices")),
            Ok(t) => socket(&format!("auto: TCPX {} reports no devices", t.library().0)),
            Err(e) => socket(&format!("auto: {}", e.msg)),
        },
    }
}

/// `value` capped to the transport's `limit`, saying so when it was.
fn capped(name: &str, value: usize, limit: usize, transport: &str) -> usize {
    if value > limit {
        log::info!(
            target: "tcpxr::init",
            "{name}={value} is more than the {transport} transport takes; using {limit}"
        );
    }
    value.min(limit)
}

pub fn get() -> Result<Arc<Plugin>> {
    PLUGIN
        .lock()
        .unwrap()
        .clone()
        .ok_or_else(|| Error::internal("tcpxr used before init"))
}

/// v11+ init: one context per communicator, counted so finalize knows when the last one goes.
pub fn context_opened() -> usize {
    CONTEXTS.fetch_add(1, Ordering::AcqRel) + 1
}

pub fn context_closed() -> usize {
    CONTEXTS.fetch_sub(1, Ordering::AcqRel).saturating_sub(1)
}

pub fn device_count() -> Result<usize> {
    Ok(get()?.devices.len())
}

fn tuning(p: &Plugin, max_requests: usize) -> Tuning {
    let config = p.config;
    Tuning {
        send_window: p.send_window,
        recv_window: p.recv_window,
        inline_bytes: config.inline_bytes,
        inline_idle_bytes: config.inline_idle_bytes,
        // Inline payloads bound for GPU memory land in pinned slots of this size, one per request:
        // a receiver that offers GPU buffers keeps them at the always-inline size.
        inline_accept: if GPU_BUFFERS.load(Ordering::Acquire) {
            config.inline_bytes
        } else {
            config.inline_bytes.max(config.inline_idle_bytes)
        },
        max_requests,
        handshake_timeout: Duration::from_millis(config.handshake_timeout_ms),
        peer_timeout_ms: config.peer_timeout_ms,
        stats: config.stats,
    }
}

/// # Safety
/// `handle` must point to NCCL_NET_HANDLE_MAXSIZE writable bytes.
pub unsafe fn listen(dev: c_int, handle: *mut c_void) -> Result<*mut c_void> {
    let p = get()?;
    let dev = check_dev(&p, dev)?;
    let out = &mut *(handle as *mut [u8; HANDLE_BYTES]);
    let t = tuning(&p, 0);
    let comm = ListenComm::listen(p.transport.clone(), dev, p.config.stripes, p.chunk_bytes, &t, out)?;
    Ok(Box::into_raw(comm) as *mut c_void)
}

/// In-progress connects, keyed by a ticket kept inside NCCL's handle buffer (NCCL calls connect
/// again with the same buffer until a comm comes back).
static CONNECTING: Mutex<Option<HashMap<u64, Connecting>>> = Mutex::new(None);
static NEXT_TICKET: AtomicU64 = AtomicU64::new(1);

/// Returns NULL while the connection is still being made.
///
/// # Safety
/// `handle` must point to NCCL_NET_HANDLE_MAXSIZE writable bytes holding the peer's handle.
pub unsafe fn connect(dev: c_int, handle: *mut c_void, max_requests: usize) -> Result<*mut c_void> {
    let p = get()?;
    let dev = check_dev(&p, dev)?;
    let bytes = &mut *(handle as *mut [u8; HANDLE_BYTES]);
    let t = tuning(&p, max_requests);
    let ticket_bytes = &mut bytes[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8];
    let ticket = u64::from_le_bytes(ticket_bytes.try_into().unwrap());
    let mut table = CONNECTING.lock().unwrap();
    let table = table.get_or_insert_with(HashMap::new);
    let (ticket, mut state) = match table.remove(&ticket) {
        Some(s) => (ticket, s),
        None => {
            // The handle travelled from the peer with a zero ticket; a ticket we do not know is
            // stale or foreign, and starting afresh is right in both cases.
            let mut fresh = *bytes;
            fresh[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8].fill(0);
            (
                NEXT_TICKET.fetch_add(1, Ordering::Relaxed),
                Connecting::start(p.transport.clone(), dev, &fresh, &t)?,
            )
        }
    };
    match state.poll(&t)? {
        Some(comm) => {
            bytes[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8].fill(0);
            Ok(Box::into_raw(comm) as *mut c_void)
        }
        None => {
            table.insert(ticket, state);
            bytes[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8].copy_from_slice(&ticket.to_le_bytes());
            Ok(std::ptr::null_mut())
        }
    }
}

/// Returns NULL while the peer has not connected yet.
///
/// # Safety
/// `listen` must be a pointer returned by `listen` and not yet closed.
pub unsafe fn accept(listen: *mut c_void, max_requests: usize) -> Result<*mut c_void> {
    let p = get()?;
    let l: &ListenComm = comm_ref(listen, CommTag::Listen, "listen comm")?;
    Ok(match l.accept(&tuning(&p, max_requests))? {
        Some(comm) => Box::into_raw(comm) as *mut c_void,
        None => std::ptr::null_mut(),
    })
}

/// What a memory handle records: the memory's kind; for GPU memory, its GPU (which decides
/// whether payloads go through staging and the unpack kernel); and its registration with every
/// stripe of the comm (the socket transport needs none; TCPX registers it with each of its comms).
#[repr(C)]
pub struct MemHandle {
    magic: u32,
    pub kind: c_int,
    pub ptr: usize,
    pub size: usize,
    pub gpu: Option<Arc<Gpu>>,
    registration: Arc<Registration>,
}
const MR_MAGIC: u32 = 0x4d52_5854; // "TXRM"

/// # Safety
/// `comm` must be a send or receive comm from tcpxr.
pub unsafe fn reg_mr(comm: *mut c_void, data: *mut c_void, size: usize, kind: c_int) -> Result<*mut c_void> {
    any_comm(comm)?;
    let gpu = match kind {
        NCCL_PTR_HOST => None,
        NCCL_PTR_CUDA => {
            if !GPU_BUFFERS.load(Ordering::Acquire) {
                return Err(Error::invalid_argument(
                    "regMr of CUDA memory: tcpxr did not offer GPU buffers (NCCL_TCPXR_GPU_BUFFERS=1, or auto over tcpx, with a CUDA driver)",
                ));
            }
            match Gpu::of_pointer(data)? {
                Some(g) => Some(g),
                None => {
                    return Err(Error::invalid_argument(format!(
                        "regMr(NCCL_PTR_CUDA) of {data:p}, which is not device memory"
                    )))
                }
            }
        }
        other => {
            return Err(Error::invalid_argument(format!(
                "regMr with memory type {other}: accepted NCCL_PTR_HOST ({NCCL_PTR_HOST}) and NCCL_PTR_CUDA ({NCCL_PTR_CUDA})"
            )))
        }
    };
    let mem = if gpu.is_some() { MemKind::Cuda } else { MemKind::Host };
    let registration = if tag_of(comm) == Some(CommTag::Send as u32) {
        (*(comm as *const SendComm)).reg_mr(data as usize, size, mem)?
    } else {
        (*(comm as *const RecvComm)).reg_mr(data as usize, size, mem)?
    };
    let mh = Box::new(MemHandle {
        magic: MR_MAGIC,
        kind,
        ptr: data as usize,
        size,
        gpu,
        registration,
    });
    Ok(Box::into_raw(mh) as *mut c_void)
}

/// # Safety
/// `mhandle` must come from `reg_mr` on `comm` and not have been deregistered.
pub unsafe fn dereg_mr(comm: *mut c_void, mhandle: *mut c_void) -> Result<()> {
    any_comm(comm)?;
    let mh =
        mem_handle(mhandle).ok_or_else(|| Error::invalid_argument("deregMr of a handle tcpxr did not register"))?;
    if tag_of(comm) == Some(CommTag::Send as u32) {
        (*(comm as *const SendComm)).dereg_mr(&mh.registration)?;
    } else {
        (*(comm as *const RecvComm)).dereg_mr(&mh.registration)?;
    }
    (*(mhandle as *mut MemHandle)).magic = 0;
    drop(Box::from_raw(mhandle as *mut MemHandle));
    Ok(())
}

unsafe fn mem_handle<'a>(mhandle: *mut c_void) -> Option<&'a MemHandle> {
    if mhandle.is_null() || (mhandle as usize) % std::mem::align_of::<MemHandle>() != 0 {
        return None;
    }
    let mh = &*(mhandle as *const MemHandle);
    (mh.magic == MR_MAGIC).then_some(mh)
}

/// The GPU that holds `data`, from its memory handle (NCCL always passes one); without a handle the
/// pointer itself is asked.
unsafe fn gpu_of(data: *mut c_void, mhandle: *mut c_void) -> Result<Option<Arc<Gpu>>> {
    match mem_handle(mhandle) {
        Some(mh) => Ok(mh.gpu.clone()),
        // Without GPU buffers offered, NCCL hands host memory only: no driver query per message.
        None if mhandle.is_null() && !GPU_BUFFERS.load(Ordering::Acquire) => Ok(None),
        None if mhandle.is_null() => Gpu::of_pointer(data),
        None => Err(Error::invalid_argument(format!(
            "{mhandle:p} is not a memory handle tcpxr registered"
        ))),
    }
}

/// The registration NCCL's memory handle carries, if it passed one.
unsafe fn registration_of(mhandle: *mut c_void) -> Option<Arc<Registration>> {
    mem_handle(mhandle).map(|mh| mh.registration.clone())
}

/// Returns NULL when all requests of the comm are in use.
///
/// # Safety
/// `comm` must be a send comm from tcpxr; `data..data+size` must stay valid until test says done.
pub unsafe fn isend(comm: *mut c_void, data: *mut c_void, size: usize, mhandle: *mut c_void) -> Result<*mut c_void> {
    let s: &SendComm = comm_ref(comm, CommTag::Send, "send comm")?;
    let gpu = if size > 0 { gpu_of(data, mhandle)? } else { None };
    Ok(s.isend(data as *const u8, size, gpu, registration_of(mhandle))?
        .unwrap_or(std::ptr::null_mut()))
}

/// Returns NULL when all requests of the comm are in use.
///
/// # Safety
/// `comm` must be a receive comm from tcpxr; each buffer must stay valid until test says done.
pub unsafe fn irecv(
    comm: *mut c_void,
    data: &[*mut c_void],
    sizes: &[usize],
    mhandles: &[*mut c_void],
) -> Result<*mut c_void> {
    let r: &RecvComm = comm_ref(comm, CommTag::Recv, "receive comm")?;
    if data.len() != 1 {
        return Err(Error::internal(format!(
            "irecv with n={}: tcpxr reports maxRecvs=1 and takes one buffer per receive",
            data.len()
        )));
    }
    let mhandle = mhandles.first().copied().unwrap_or(std::ptr::null_mut());
    let gpu = if sizes[0] > 0 { gpu_of(data[0], mhandle)? } else { None };
    Ok(r.irecv(data[0] as *mut u8, sizes[0], gpu, registration_of(mhandle))?
        .unwrap_or(std::ptr::null_mut()))
}

/// Tests a request; on completion writes the size and frees the request.
///
/// # Safety
/// `request` must be a live request from isend/irecv; `sizes` NULL or writable.
pub unsafe fn test(request: *mut c_void, done: &mut c_int, sizes: *mut c_int) -> Result<()> {
    *done = 0;
    let Some(req) = Request::from_ptr(request) else {
        return Err(Error::internal(format!(
            "test on {request:p}, which is not a request tcpxr returned"
        )));
    };
    let result = match req.kind {
        Kind::Send => (*(req.owner as *const SendComm)).test(req.slot)?,
        Kind::Recv => (*(req.owner as *const RecvComm)).test(req.slot)?,
    };
    if let Some(size) = result {
        *done = 1;
        if !sizes.is_null() {
            *sizes = size as c_int;
        }
    }
    Ok(())
}

/// # Safety
/// `comm` must be a send comm from tcpxr; it is freed.
pub unsafe fn close_send(comm: *mut c_void) -> Result<()> {
    comm_ref::<SendComm>(comm, CommTag::Send, "send comm")?;
    drop(Box::from_raw(comm as *mut SendComm));
    Ok(())
}

/// # Safety
/// `comm` must be a receive comm from tcpxr; it is freed.
pub unsafe fn close_recv(comm: *mut c_void) -> Result<()> {
    comm_ref::<RecvComm>(comm, CommTag::Recv, "receive comm")?;
    drop(Box::from_raw(comm as *mut RecvComm));
    Ok(())
}

/// # Safety
/// `comm` must be a listen comm from tcpxr; it is freed.
pub unsafe fn close_listen(comm: *mut c_void) -> Result<()> {
    comm_ref::<ListenComm>(comm, CommTag::Listen, "listen comm")?;
    drop(Box::from_raw(comm as *mut ListenComm));
    Ok(())
}

fn check_dev(p: &Plugin, dev: c_int) -> Result<usize> {
    if dev < 0 || dev as usize >= p.devices.len() {
        return Err(Error::invalid_argument(format!(
            "device {dev} does not exist: accepted 0-{}",
            p.devices.len() - 1
        )));
    }
    Ok(dev as usize)
}

unsafe fn tag_of(ptr: *mut c_void) -> Option<u32> {
    if ptr.is_null() || (ptr as usize) % std::mem::align_of::<u32>() != 0 {
        return None;
    }
    Some(*(ptr as *const u32))
}

/// Checks that `ptr` is a live comm of the expected kind before treating it as one.
unsafe fn comm_ref<'a, T>(ptr: *mut c_void, tag: CommTag, what: &str) -> Result<&'a T> {
    if tag_of(ptr) != Some(tag as u32) {
        return Err(Error::internal(format!("{ptr:p} is not a tcpxr {what}")));
    }
    Ok(&*(ptr as *const T))
}

unsafe fn any_comm(ptr: *mut c_void) -> Result<()> {
    match tag_of(ptr) {
        Some(t) if t == CommTag::Send as u32 || t == CommTag::Recv as u32 => Ok(()),
        _ => Err(Error::internal(format!("{ptr:p} is not a tcpxr send or receive comm"))),
    }
}
