//! The core API every exported NCCL table adapts to, in Rust types: init, devices, properties,
//! listen, connect, accept, memory registration, isend, irecv, iflush, test, close.
//!
//! It owns the configuration and the devices, chooses the inner transport, and checks every
//! pointer NCCL hands back before using it: comms carry a tag, requests a magic, and every comm
//! handed to NCCL is in a registry of live objects until it is closed, so a close, regMr, deregMr
//! or accept of a closed comm is refused without reading its freed memory (the per-message calls
//! take no lock: `test` and `irecvConsumed` check the request, whose table is never freed).
use crate::abi::{
    ncclDebugLogger_t, ncclNetDeviceHandle_v7_t, unpackNetDeviceHandle, NCCL_NET_DEVICE_UNPACK,
    NCCL_NET_DEVICE_UNPACK_VERSION, NCCL_PTR_CUDA, NCCL_PTR_HOST,
};
use crate::config::{self, Config};
use crate::devices::{Device, Devices};
use crate::engine::memory::Registration;
use crate::engine::profile;
use crate::engine::requests::{Kind, Lookup, Request};
use crate::engine::wire::{HANDLE_BYTES, HANDLE_TICKET_OFFSET};
use crate::engine::{CommTag, Connecting, ListenComm, RecvComm, SendComm, Tuning};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::nccl_settings;
use crate::transport::socket::{SocketOptions, SocketTransport};
use crate::transport::tcpx::{TcpxOptions, TcpxTransport};
use crate::transport::{MemKind, Transport, TransportKind};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub struct Plugin {
    pub config: &'static Config,
    pub transport: Arc<dyn Transport>,
    pub devices: Devices,
    /// The configured chunk size and windows, capped to what the transport can take
    /// ([`Transport::limits`]: TCPX receives at most 4 MiB, holds 12 sends and 16 receives).
    pub chunk_bytes: usize,
    pub send_window: usize,
    pub recv_window: usize,
    /// NCCL_TCPXR_INLINE_IDLE_BYTES in effect (auto resolved).
    pub inline_idle_bytes: usize,
    /// NCCL_TCPXR_INLINE_IDLE_P2P_BYTES in effect: for connections NCCL's hints say are
    /// point-to-point.
    pub inline_idle_p2p_bytes: usize,
    /// GPU buffers are offered and NCCL places received GPU pages itself (`NCCL_NET_DEVICE_UNPACK`,
    /// v7+ tables): receive comms give NCCL a device handle at accept.
    pub device_unpack: bool,
    /// The NCCL settings tcpxr gave a value at init because the user left them unset.
    pub nccl_set: Vec<&'static str>,
}

static PLUGIN: Mutex<Option<Arc<Plugin>>> = Mutex::new(None);
/// Communicators (v11+ contexts) currently initialised.
static CONTEXTS: AtomicUsize = AtomicUsize::new(0);
/// NCCL has asked for a device's properties. It does so only for the net it assigned to a
/// communicator (after matching NCCL_NET), to build its topology, and before it initialises the
/// tuner; connections come later (NCCL connects at the first collective). The tuner acts only
/// in a process where this is set.
static ASSIGNED: AtomicBool = AtomicBool::new(false);
/// Whether this process offered NCCL GPU buffers (decided once at init), so isend/irecv need not
/// ask the CUDA driver about pointers when it did not.
static GPU_BUFFERS: AtomicBool = AtomicBool::new(false);

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
fn check_live(ptr: *mut c_void, kind: Handed, call: &str) -> Result<()> {
    match live().get(&(ptr as usize)) {
        Some(&k) if k == kind => Ok(()),
        found => Err(not_live(ptr, kind, call, found.copied())),
    }
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

/// Loads configuration and devices the first time; later calls only refresh the logger. `table`
/// is the version of the table NCCL called through (5-12), which decides whether GPU buffers can
/// be offered without tcpxr GPU work on NCCL's critical path.
pub fn init(logger: ncclDebugLogger_t, table: u32) -> Result<()> {
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
        pool: crate::transport::socket::PoolShape {
            threads: crate::transport::socket::io_threads(config.io_threads),
            spin: crate::transport::socket::io_spin(config.io_spin_us),
            spinners: config.io_spin_threads,
        },
        handoff_bytes: crate::transport::socket::handoff_bytes(config.handoff_bytes),
    };
    let inline_idle_bytes = crate::transport::socket::inline_idle_bytes(config.inline_idle_bytes);
    let inline_idle_p2p_bytes =
        crate::transport::socket::inline_idle_p2p_bytes(config.inline_idle_p2p_bytes, inline_idle_bytes);
    log::info!(
        target: "tcpxr::init",
        "inline when idle up to {inline_idle_bytes} bytes ({inline_idle_p2p_bytes} on connections NCCL's hints say are \
         point-to-point)"
    );
    let ifname = ifname_setting(config);
    let transport = open_transport(
        config,
        logger,
        ifname.as_ref().map(|(var, spec)| (*var, spec.as_str())),
        opts,
    )?;
    let limits = transport.limits();
    let chunk_bytes = capped(
        "NCCL_TCPXR_CHUNK_BYTES",
        config.chunk_bytes,
        limits.max_chunk_bytes,
        transport.kind(),
    );
    let send_window = capped(
        "NCCL_TCPXR_SEND_WINDOW",
        config.send_window,
        limits.send_slots,
        transport.kind(),
    );
    let recv_window = capped(
        "NCCL_TCPXR_RECV_WINDOW",
        config.recv_window,
        limits.recv_slots,
        transport.kind(),
    );
    let env = &mut |k: &str| std::env::var(k).ok();
    let gpu = nccl_settings::gpu_buffers(config, transport.kind(), table, crate::gpu::available(), env)?;
    let tuner_acts = config.tuner.on_for(transport.kind(), TransportKind::Socket);
    let mut settings = nccl_settings::defaults(tuner_acts, env);
    settings.extend(gpu.set_env.iter().copied());
    let nccl_set = nccl_settings::apply(&settings);
    if let Some(w) = &gpu.warning {
        log::warn!("{w}");
    }
    GPU_BUFFERS.store(gpu.offered, Ordering::Release);
    let ptr_support = if gpu.offered {
        NCCL_PTR_HOST | NCCL_PTR_CUDA
    } else {
        NCCL_PTR_HOST
    };
    let devices = Devices::new(transport.devices(), ptr_support, &config.rails)?;
    let list: Vec<String> = transport
        .devices()
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let rail = config.rails.get(i).map(|r| format!(" rail {r}")).unwrap_or_default();
            format!("[{i}]{}:{}{rail}", d.name, d.ctrl_addr)
        })
        .collect();
    log::info!(
        target: "tcpxr::init",
        "tcpxr {VERSION}: transport {}, {} stripes x {} B chunks, windows {} sends / {} receives per stripe, GPU buffers {}, devices {}",
        transport.kind(),
        config.stripes,
        chunk_bytes,
        send_window,
        recv_window,
        gpu.summary,
        list.join(" ")
    );
    *slot = Some(Arc::new(Plugin {
        config,
        transport,
        devices,
        chunk_bytes,
        send_window,
        recv_window,
        inline_idle_bytes,
        inline_idle_p2p_bytes,
        device_unpack: gpu.device_unpack,
        nccl_set,
    }));
    Ok(())
}

/// The interfaces tcpxr may use and the variable that said so: NCCL_TCPXR_IFNAME, else NCCL's own
/// NCCL_SOCKET_IFNAME, else None (NCCL's default choice).
fn ifname_setting(config: &Config) -> Option<(&'static str, String)> {
    match &config.ifname {
        Some(spec) => Some(("NCCL_TCPXR_IFNAME", spec.clone())),
        None => std::env::var("NCCL_SOCKET_IFNAME")
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .map(|s| ("NCCL_SOCKET_IFNAME", s)),
    }
}

/// The inner transport NCCL_TCPXR_TRANSPORT asks for: `socket`; `tcpx` (an error when the TCPX
/// library does not load or has no device); `auto`: tcpx when it loads and reports a device, else
/// socket, except that a library named by NCCL_TCPXR_TCPX_LIB that cannot be used fails init.
/// The choice and its reason are logged.
fn open_transport(
    config: &Config,
    logger: ncclDebugLogger_t,
    ifname: Option<(&str, &str)>,
    opts: SocketOptions,
) -> Result<Arc<dyn Transport>> {
    let socket = |why: &str| -> Result<Arc<dyn Transport>> {
        log::info!(target: "tcpxr::init", "inner transport: socket ({why})");
        Ok(Arc::new(SocketTransport::new(
            ifname,
            config.speed_mbps,
            config.loopback_devices,
            opts.clone(),
        )?))
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
                let path = t.library().0.to_string();
                t.not_used();
                return Err(Error::system(format!(
                    "NCCL_TCPXR_TRANSPORT=tcpx: the TCPX library {path} reports no devices"
                )));
            }
            Ok(chosen(t, "NCCL_TCPXR_TRANSPORT=tcpx"))
        }
        config::Transport::Auto => match (tcpx(), config.tcpx_lib.as_deref()) {
            (Ok(t), _) if !t.devices().is_empty() => Ok(chosen(t, "auto, TCPX loaded with devices")),
            // No device: TCPX is not used, and takes back the settings it was given.
            (Ok(t), Some(lib)) => {
                let path = t.library().0.to_string();
                t.not_used();
                log::warn!(
                    target: "tcpxr::init",
                    "NCCL_TCPXR_TCPX_LIB={lib}: the TCPX library {path} loads but reports no devices; NCCL_TCPXR_TRANSPORT=auto uses the socket transport"
                );
                socket(&format!("auto: TCPX {path} reports no devices"))
            }
            (Ok(t), None) => {
                let path = t.library().0.to_string();
                t.not_used();
                socket(&format!("auto: TCPX {path} reports no devices"))
            }
            // A library the user named is never silently replaced by the socket transport (a typo
            // would quietly lose GPUDirect): init fails, and the guard's WARN says why.
            (Err(e), Some(lib)) => {
                let e = if e.msg.contains("NCCL_TCPXR_TCPX_LIB=") {
                    e
                } else {
                    e.context(&format!("NCCL_TCPXR_TCPX_LIB={lib}"))
                };
                Err(e.context(
                    "NCCL_TCPXR_TRANSPORT=auto (no fallback to the socket transport for a library NCCL_TCPXR_TCPX_LIB names)",
                ))
            }
            (Err(e), None) => socket(&format!("auto: {}", e.msg)),
        },
    }
}

/// `value` capped to the transport's `limit`, saying so when it was.
fn capped(name: &str, value: usize, limit: usize, transport: TransportKind) -> usize {
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

/// NCCL's `trafficClass` (ncclNetCommConfig_t, v10+): `NCCL_NET_TRAFFIC_CLASS_UNDEF` (-1) for
/// none, else the IP TOS byte tcpxr's sockets send with.
pub fn traffic_class(value: c_int) -> Result<Option<u8>> {
    match value {
        -1 => Ok(None),
        v => u8::try_from(v).map(Some).map_err(|_| {
            Error::invalid_argument(format!(
                "trafficClass {v}: accepted -1 (unset) or 0-255 (the IP TOS byte, DSCP << 2 | ECN)"
            ))
        }),
    }
}

/// v11+ init: one context per communicator, counted so finalize knows when the last one goes.
pub fn context_opened() -> usize {
    CONTEXTS.fetch_add(1, Ordering::AcqRel) + 1
}

/// A communicator's finalize: also drops connects NCCL abandoned (see [`CONNECTING`]).
pub fn context_closed() -> usize {
    sweep_connects();
    CONTEXTS.fetch_sub(1, Ordering::AcqRel).saturating_sub(1)
}

/// Device `dev` as NCCL asks for its properties (see [`ASSIGNED`]).
pub fn device_properties(dev: c_int) -> Result<(Arc<Plugin>, Arc<Device>)> {
    let p = get()?;
    let d = p.devices.get(dev, "getProperties")?;
    ASSIGNED.store(true, Ordering::Release);
    Ok((p, d))
}

/// NCCL's makeVDevice: a device fusing the physical devices `members` (at most `max`, the
/// table's limit); returns its number.
pub fn make_vdevice(members: &[c_int], max: usize) -> Result<c_int> {
    let placed_by_user = std::env::var_os("NCCL_TOPO_FILE").is_some_and(|f| !f.is_empty());
    let d = get()?.devices.fuse(members, max, placed_by_user)?;
    // Devices number far below c_int::MAX (the transport's, and at most 64 fused).
    Ok(d as c_int)
}

pub fn assigned() -> bool {
    ASSIGNED.load(Ordering::Acquire)
}

pub fn device_count() -> Result<usize> {
    Ok(get()?.devices.count())
}

/// A comm's settings. `p2p`: NCCL's hints say the connection carries point-to-point operations
/// (a send comm's inline limit while idle; see [`connect`]).
fn tuning(p: &Plugin, max_requests: usize, p2p: bool) -> Tuning {
    let config = p.config;
    Tuning {
        send_window: p.send_window,
        recv_window: p.recv_window,
        inline_bytes: config.inline_bytes,
        inline_idle_bytes: if p2p {
            p.inline_idle_p2p_bytes
        } else {
            p.inline_idle_bytes
        },
        // Inline payloads bound for GPU memory land in pinned slots of this size, one per request:
        // a receiver that offers GPU buffers keeps them at the always-inline size. With NCCL's
        // device unpack over tcpx every payload goes through TCPX's pool, the one base NCCL's
        // kernel reads from, so nothing travels inline.
        inline_accept: match (GPU_BUFFERS.load(Ordering::Acquire), p.device_unpack, p.transport.kind()) {
            (_, true, TransportKind::Tcpx) => 0,
            (true, _, _) => config.inline_bytes,
            // Either kind of sender may connect to this listen: take the larger idle limit.
            (false, _, _) => config
                .inline_bytes
                .max(p.inline_idle_bytes)
                .max(p.inline_idle_p2p_bytes),
        },
        max_requests,
        handshake_timeout: Duration::from_millis(config.handshake_timeout_ms),
        peer_timeout_ms: config.peer_timeout_ms,
        stats: config.stats,
        stall_seconds: config.stall_seconds,
        traffic_class: None,
    }
}

/// Opens a listen comm on device `dev` and writes the handle the peer connects with into `handle`
/// (NCCL's NCCL_NET_HANDLE_MAXSIZE-byte buffer).
pub fn listen(dev: c_int, handle: &mut [u8; HANDLE_BYTES]) -> Result<*mut c_void> {
    let p = get()?;
    let nics = p.devices.nics(&*p.devices.get(dev, "listen")?);
    let t = tuning(&p, 0, false);
    // A fused device puts at least one stripe on each of its members.
    let stripes = p.config.stripes.max(nics.members().count());
    let comm = ListenComm::listen(p.transport.clone(), &nics, stripes, p.chunk_bytes, &t, handle)?;
    Ok(hand_out(Box::into_raw(comm) as *mut c_void, Handed::Listen))
}

/// In-progress connects, keyed by a random ticket kept inside NCCL's handle buffer (NCCL calls
/// connect again with the same buffer until a comm comes back), each with the handle it started
/// from: a handle that carries another connect's ticket (the bytes came from the peer) does not
/// take that connect over.
///
/// The lock is held only to take an entry out, put it back or drop expired ones, never across a
/// connect's own steps (`Connecting::start`, `poll`), so connects of different communicators do
/// not wait for each other. An entry NCCL has not polled for longer than the handshake timeout
/// (a connect abandoned mid-way, as NCCL's abort leaves it) is dropped with its sockets by the
/// next connect or close of any comm.
static CONNECTING: Mutex<BTreeMap<u64, InProgress>> = Mutex::new(BTreeMap::new());

struct InProgress {
    /// The handle the connect started from (ticket zeroed).
    started_from: [u8; HANDLE_BYTES],
    state: Connecting,
    /// When NCCL last called connect for it.
    polled: Instant,
}

fn connecting() -> std::sync::MutexGuard<'static, BTreeMap<u64, InProgress>> {
    CONNECTING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Takes out of `table` the connects not polled for longer than `timeout`; the caller drops them
/// (closing their sockets) after letting go of the lock.
fn expired(table: &mut BTreeMap<u64, InProgress>, timeout: Duration, now: Instant) -> Vec<InProgress> {
    let old: Vec<u64> = table
        .iter()
        .filter(|(_, c)| now.saturating_duration_since(c.polled) > timeout)
        .map(|(&t, _)| t)
        .collect();
    old.iter().filter_map(|t| table.remove(t)).collect()
}

/// Drops the abandoned connects (see [`CONNECTING`]); called at every connect and close.
fn sweep_connects() {
    let Ok(p) = get() else { return };
    let timeout = Duration::from_millis(p.config.handshake_timeout_ms);
    let gone = expired(&mut connecting(), timeout, Instant::now());
    if !gone.is_empty() {
        log::info!(
            "dropped {} connect(s) NCCL abandoned more than {} ms ago",
            gone.len(),
            timeout.as_millis()
        );
    }
}

/// Connects to the peer whose handle NCCL passes in `bytes` (NCCL's NCCL_NET_HANDLE_MAXSIZE-byte
/// buffer, the same on every call of one connect). Returns NULL while the connection is still
/// being made. `traffic_class`: NCCL's for the communicator (v10+), see [`traffic_class`].
/// `p2p`: NCCL's hints, set just before it connects (v11+), say the connection is for
/// point-to-point operations; its messages then travel inline while idle up to
/// NCCL_TCPXR_INLINE_IDLE_P2P_BYTES. Read when the connect starts.
pub fn connect(
    dev: c_int,
    bytes: &mut [u8; HANDLE_BYTES],
    max_requests: usize,
    traffic_class: Option<u8>,
    p2p: bool,
) -> Result<*mut c_void> {
    let p = get()?;
    let nics = p.devices.nics(&*p.devices.get(dev, "connect")?);
    let t = Tuning {
        traffic_class,
        ..tuning(&p, max_requests, p2p)
    };
    let ticket = u64::from_le_bytes(
        bytes[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8]
            .try_into()
            .unwrap(),
    );
    let mut fresh = *bytes;
    fresh[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8].fill(0);
    // Under the lock: drop abandoned connects, and take this one out if it is under way.
    let (ticket, resumed, gone) = {
        let mut table = connecting();
        let gone = expired(&mut table, t.handshake_timeout, Instant::now());
        match table.remove(&ticket) {
            Some(c) if c.started_from == fresh => (ticket, Some(c.state), gone),
            other => {
                // The handle travelled from the peer with a zero ticket; a ticket we do not know,
                // or one of a connect that started from another handle, is stale or foreign, and
                // starting afresh is right in every case (the other connect keeps its state). A
                // new ticket is one of 2^64 - 1 random values; it is checked against the connects
                // in the table, not against those being polled right now (out of it).
                if let Some(theirs) = other {
                    table.insert(ticket, theirs);
                }
                let ticket = loop {
                    let t = crate::net::nonce();
                    if t != 0 && !table.contains_key(&t) {
                        break t;
                    }
                };
                (ticket, None, gone)
            }
        }
    };
    drop(gone);
    // The connect's own steps, with no lock held.
    let mut state = match resumed {
        Some(s) => s,
        None => Connecting::start(p.transport.clone(), nics, &fresh, &t)?,
    };
    match state.poll(&t)? {
        Some(comm) => {
            bytes[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8].fill(0);
            Ok(hand_out(Box::into_raw(comm) as *mut c_void, Handed::Send))
        }
        None => {
            connecting().insert(
                ticket,
                InProgress {
                    started_from: fresh,
                    state,
                    polled: Instant::now(),
                },
            );
            bytes[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8].copy_from_slice(&ticket.to_le_bytes());
            Ok(std::ptr::null_mut())
        }
    }
}

/// Returns NULL while the peer has not connected yet. `dev_handle`: NCCL's request for the
/// receive comm's device handle (v7+), filled in once the comm is made.
///
/// # Safety
/// `listen` may be any pointer (it is looked up in the registry before it is read); a live
/// listen comm must not be closed during the call.
pub unsafe fn accept(
    listen: *mut c_void,
    max_requests: usize,
    dev_handle: Option<&mut ncclNetDeviceHandle_v7_t>,
) -> Result<*mut c_void> {
    let p = get()?;
    check_live(listen, Handed::Listen, "accept")?;
    // SAFETY: a live listen comm (the registry says so), not closed during the call (the
    // caller's promise).
    let l: &ListenComm = unsafe { comm_ref(listen, CommTag::Listen, "listen comm") }?;
    if let Some(h) = &dev_handle {
        if h.netDeviceType != NCCL_NET_DEVICE_UNPACK || h.netDeviceVersion != NCCL_NET_DEVICE_UNPACK_VERSION {
            return Err(Error::internal(format!(
                "accept asked for a device handle of type {} version {:#x}; tcpxr offers NCCL_NET_DEVICE_UNPACK ({}) version {:#x}",
                h.netDeviceType, h.netDeviceVersion, NCCL_NET_DEVICE_UNPACK, NCCL_NET_DEVICE_UNPACK_VERSION
            )));
        }
    }
    // The receive side's idle limit is unused (the sender decides what goes inline).
    let Some(comm) = l.accept(&tuning(&p, max_requests, false))? else {
        return Ok(std::ptr::null_mut());
    };
    if let Some(h) = dev_handle {
        // NCCL's service thread has the receiving GPU's context current.
        let gpu = crate::gpu::current()?;
        h.handle = comm.enable_device_unpack(gpu.as_ref())?;
        h.size = std::mem::size_of::<unpackNetDeviceHandle>();
        h.needsProxyProgress = 1;
        log::debug!(
            "receive comm with NCCL's device unpack, GPU {:?}",
            gpu.map(|g| g.ordinal)
        );
    }
    Ok(hand_out(Box::into_raw(comm) as *mut c_void, Handed::Recv))
}

/// What a memory handle records: the memory's kind; for GPU memory, its GPU (which decides
/// whether payloads go through staging and the unpack kernel); and its registration with every
/// stripe of the comm (the socket transport needs none; TCPX registers it with each of its comms).
///
/// `magic` comes first (`repr(C)`), so a pointer is checked by reading one u32 before it is
/// treated as a MemHandle.
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

/// Registers `size` bytes at `data` (of NCCL's memory type `kind`) with every stripe of `comm`.
///
/// # Safety
/// `comm` may be any pointer (it is looked up in the registry before it is read); a live comm
/// must not be closed during the call.
pub unsafe fn reg_mr(comm: *mut c_void, data: *mut c_void, size: usize, kind: c_int) -> Result<*mut c_void> {
    // SAFETY: the caller's promise on `comm`; live_data_comm asks the registry before reading it.
    let comm = unsafe { live_data_comm(comm, "regMr") }?;
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
    let registration = match comm {
        DataComm::Send(s) => s.reg_mr(data as usize, size, mem, gpu.as_ref())?,
        DataComm::Recv(r) => r.reg_mr(data as usize, size, mem, gpu.as_ref())?,
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
/// `comm` as for [`reg_mr`]; `mhandle` must be NULL, a memory handle `reg_mr` returned that is
/// not yet deregistered, or a pointer to at least 4 readable bytes that do not hold MR_MAGIC.
/// The handle is freed: NCCL must not use it again.
pub unsafe fn dereg_mr(comm: *mut c_void, mhandle: *mut c_void) -> Result<()> {
    // SAFETY: the caller's promise on `comm`; live_data_comm asks the registry before reading it.
    let comm = unsafe { live_data_comm(comm, "deregMr") }?;
    // SAFETY: the caller's promise on `mhandle`.
    let MemArg::Ours(mh) = (unsafe { mem_arg(mhandle) }) else {
        return Err(Error::invalid_argument("deregMr of a handle tcpxr did not register"));
    };
    match comm {
        DataComm::Send(s) => s.dereg_mr(&mh.registration)?,
        DataComm::Recv(r) => r.dereg_mr(&mh.registration)?,
    }
    // SAFETY: mem_arg found MR_MAGIC, so `mhandle` is a live Box<MemHandle> from reg_mr, which
    // NCCL deregisters once; `mh` is not used after this. Clearing the magic first makes a stale
    // second deregMr of the same address fail the check while the allocator keeps the bytes.
    unsafe {
        (*(mhandle as *mut MemHandle)).magic = 0;
        drop(Box::from_raw(mhandle as *mut MemHandle));
    }
    Ok(())
}

/// NCCL's getDeviceMr: tcpxr makes no device-side handle (NCCL's unpack kernel reads none), but
/// the comm and the memory handle must be ones tcpxr made.
///
/// # Safety
/// `comm` as for [`reg_mr`]; `mhandle` as for [`dereg_mr`] (it is not freed).
pub unsafe fn get_device_mr(comm: *mut c_void, mhandle: *mut c_void) -> Result<()> {
    // SAFETY: the caller's promise on `comm`; live_data_comm asks the registry before reading it.
    unsafe { live_data_comm(comm, "getDeviceMr") }?;
    // SAFETY: the caller's promise on `mhandle`.
    match unsafe { mem_arg(mhandle) } {
        MemArg::Ours(_) => Ok(()),
        MemArg::Absent => Err(Error::invalid_argument("getDeviceMr: mhandle is NULL")),
        MemArg::Foreign(p) => Err(Error::invalid_argument(format!(
            "getDeviceMr of {p:p}, which is not a memory handle tcpxr registered"
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

/// A memory handle as NCCL passed it with isend or irecv.
enum MemArg<'a> {
    /// NULL: NCCL registered nothing for this buffer.
    Absent,
    Ours(&'a MemHandle),
    /// Not NULL, but not a handle tcpxr made.
    Foreign(*mut c_void),
}

/// # Safety
/// `mhandle` must be NULL, a memory handle from `reg_mr` not deregistered during `'a`, or a
/// pointer to at least 4 readable bytes that do not hold MR_MAGIC.
unsafe fn mem_arg<'a>(mhandle: *mut c_void) -> MemArg<'a> {
    if mhandle.is_null() {
        return MemArg::Absent;
    }
    if (mhandle as usize) % std::mem::align_of::<MemHandle>() != 0 {
        return MemArg::Foreign(mhandle);
    }
    // SAFETY: non-NULL and aligned, so (the caller's promise) 4 readable bytes; `magic` is the
    // first field of the repr(C) MemHandle.
    if unsafe { std::ptr::read(mhandle as *const u32) } != MR_MAGIC {
        return MemArg::Foreign(mhandle);
    }
    // SAFETY: MR_MAGIC, so (the caller's promise) a live MemHandle from reg_mr for 'a.
    MemArg::Ours(unsafe { &*(mhandle as *const MemHandle) })
}

/// The GPU that holds `data`, from its memory handle (NCCL always passes one); without a handle the
/// pointer itself is asked.
fn gpu_of(data: *mut c_void, mh: &MemArg) -> Result<Option<Arc<Gpu>>> {
    match mh {
        MemArg::Ours(mh) => Ok(mh.gpu.clone()),
        // Without GPU buffers offered, NCCL hands host memory only: no driver query per message.
        MemArg::Absent if !GPU_BUFFERS.load(Ordering::Acquire) => Ok(None),
        MemArg::Absent => Gpu::of_pointer(data),
        MemArg::Foreign(p) => Err(Error::invalid_argument(format!(
            "{p:p} is not a memory handle tcpxr registered"
        ))),
    }
}

/// The registration NCCL's memory handle carries, if it passed one.
fn registration_of(mh: &MemArg) -> Option<Arc<Registration>> {
    match mh {
        MemArg::Ours(mh) => Some(mh.registration.clone()),
        _ => None,
    }
}

/// Returns NULL when all requests of the comm are in use.
///
/// # Safety
/// `comm` must be NULL or a pointer NCCL passes back as a comm (see [`comm_ref`]), not closed
/// during the call; `mhandle` as for [`dereg_mr`]; `data..data+size` must stay readable and
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
/// during the call; each of `mhandles` as for [`dereg_mr`]; each buffer `data[i]..+sizes[i]` must
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
        *done = 1;
        if let Some(s) = sizes {
            *s = size as c_int;
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
/// for [`test`].
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
unsafe fn comm_ref<'a, T>(ptr: *mut c_void, tag: CommTag, what: &str) -> Result<&'a T> {
    // SAFETY: the caller's promise.
    if unsafe { tag_of(ptr) } != Some(tag as u32) {
        return Err(Error::internal(format!("{ptr:p} is not a tcpxr {what}")));
    }
    // SAFETY: the tag matches, so (the caller's promise) a live T for 'a; comms are Sync (their
    // state sits behind a mutex), so a shared reference may be used from any of NCCL's threads.
    Ok(unsafe { &*(ptr as *const T) })
}

/// A send or receive comm, as regMr and deregMr take either.
enum DataComm<'a> {
    Send(&'a SendComm),
    Recv(&'a RecvComm),
}

/// A live send or receive comm, for `call`: the registry is asked before `ptr` is read.
///
/// # Safety
/// A live comm must not be closed during `'a`.
unsafe fn live_data_comm<'a>(ptr: *mut c_void, call: &str) -> Result<DataComm<'a>> {
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
