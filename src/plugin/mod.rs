//! The core API every exported NCCL table adapts to, in Rust types: init, devices, properties,
//! listen, connect, accept, memory registration, isend, irecv, iflush, test, close.
//!
//! It owns the configuration and the devices, chooses the inner transport, and checks every
//! pointer NCCL hands back before using it: comms carry a tag, requests a magic, and every comm
//! handed to NCCL is in a registry of live objects until it is closed, so a close, regMr, deregMr
//! or accept of a closed comm is refused without reading its freed memory (the per-message calls
//! take no lock: `test` and `irecvConsumed` check the request, whose table is never freed).
//!
//! One file per job:
//! * this one: the plugin's state ([`Plugin`]) and the message rules fixed at the first
//!   connection, [`get`], the device calls and the communicator count;
//! * init.rs: init (configuration, the inner transport's choice, chunk size and windows, the
//!   GPU-buffer decision and the NCCL settings tcpxr gives, devices, the init log);
//! * live.rs: the registry of live objects handed to NCCL, and the pointer and tag checks every
//!   call makes before it reads what NCCL handed back (`comm_ref`, `live_data_comm`);
//! * connect.rs: listen, connect (and the table of connects under way), accept;
//! * memory.rs: regMr / deregMr / getDeviceMr and the memory handle NCCL passes back with each message;
//! * data.rs: isend, irecv, iflush, test, irecvConsumed and close.
mod connect;
mod data;
mod init;
mod live;
mod memory;

pub use connect::{accept, connect, listen};
pub use data::{close_listen, close_recv, close_send, iflush, irecv, irecv_consumed, isend, test};
pub(crate) use init::ifname_setting;
pub use init::init;
pub use live::{hand_out, is_live, take_back, Handed};
pub use memory::{dereg_mr, get_device_mr, reg_mr, MemHandle};

use crate::config::Config;
use crate::devices::{Device, Devices};
use crate::engine::company::Rule;
use crate::engine::cut::{self, Spread};
use crate::engine::Tuning;
use crate::error::{Error, Result};
use crate::settings;
use crate::transport::{Transport, TransportKind};
use connect::{drain_connects, sweep_connects};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

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
    /// The settings the first connection fixes ([`Plugin::message_rules`]).
    message_rules: OnceLock<MessageRules>,
    /// GPU buffers are offered (NCCL_PTR_CUDA).
    pub gpu_offered: bool,
    /// GPU buffers are offered and NCCL places received GPU pages itself (`NCCL_NET_DEVICE_UNPACK`,
    /// v7+ tables): receive comms give NCCL a device handle at accept.
    pub device_unpack: bool,
    /// The NCCL settings tcpxr gave a value at init because the user left them unset.
    pub nccl_set: Vec<&'static str>,
}

/// How messages travel (inline limits, the idle chunk size), decided from who moves the stripes
/// ([`Transport::movers`]) at the first listen or connect, when every rank on the host has
/// announced itself.
#[derive(Clone, Copy, Debug)]
pub struct MessageRules {
    /// NCCL_TCPXR_INLINE_IDLE_BYTES in effect.
    pub idle: usize,
    /// NCCL_TCPXR_INLINE_IDLE_P2P_BYTES in effect: for connections NCCL's hints say are
    /// point-to-point.
    pub idle_p2p: usize,
    /// The largest inline payload a receive comm accepts ([`settings::inline_accept`]).
    pub accept: usize,
    /// NCCL_TCPXR_IDLE_CHUNK_BYTES in effect ([`settings::idle_chunk`]), and on connections NCCL's
    /// hints name point-to-point.
    pub idle_chunk: usize,
    pub idle_chunk_p2p: usize,
    /// How messages below the comm's chunk are spread while few connections move
    /// (NCCL_TCPXR_SPREAD_PIECE_BYTES in effect, [`settings::spread_piece`], over the pool's threads).
    pub spread: Spread,
    /// NCCL_TCPXR_GPU_COPY_BYTES in effect ([`settings::gpu_copy`]), and on connections NCCL's
    /// hints name point-to-point.
    pub gpu_copy: usize,
    pub gpu_copy_p2p: usize,
}

impl Plugin {
    /// How messages travel, resolved at the first call (the first listen or connect), which also
    /// fixes the transport's pool; every value the pool rules decided is logged there, in one block.
    pub fn message_rules(&self) -> MessageRules {
        *self.message_rules.get_or_init(|| {
            let movers = self.transport.movers();
            let idle = settings::inline_idle(self.config, &movers);
            let accept = settings::inline_accept(
                self.config,
                self.gpu_offered,
                self.device_unpack && self.transport.kind() == TransportKind::Tcpx,
                idle.general.value,
                idle.p2p.value,
            );
            let idle_chunk = settings::idle_chunk(self.config, &movers, self.transport.kind() == TransportKind::Tcpx);
            let spread_piece =
                settings::spread_piece(self.config, &movers, self.transport.kind() == TransportKind::Tcpx);
            let spread = Spread {
                piece: spread_piece.value,
                threads: std::env::var(cut::TEST_THREADS)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(movers.threads),
            };
            let gpu_copy = settings::gpu_copy(self.config);
            let mut lines = self.transport.pool_settings();
            lines.extend([
                settings::Line::new("NCCL_TCPXR_INLINE_IDLE_BYTES", idle.general.value, idle.general.source),
                settings::Line::new("NCCL_TCPXR_INLINE_IDLE_P2P_BYTES", idle.p2p.value, idle.p2p.source),
                settings::Line::new("inline accepted by receive comms", accept.value, accept.source),
                settings::Line::new(
                    "NCCL_TCPXR_IDLE_CHUNK_BYTES (point-to-point)",
                    idle_chunk.p2p.value,
                    idle_chunk.p2p.source,
                ),
                settings::Line::new(
                    "NCCL_TCPXR_IDLE_CHUNK_BYTES (other connections)",
                    idle_chunk.general.value,
                    idle_chunk.general.source,
                ),
                settings::Line::new("NCCL_TCPXR_SPREAD_PIECE_BYTES", spread_piece.value, spread_piece.source),
            ]);
            // Only where receives land in the socket's bounce memory for NCCL's unpack.
            if self.device_unpack && self.transport.kind() == TransportKind::Socket {
                lines.extend([
                    settings::Line::new(
                        "NCCL_TCPXR_GPU_COPY_BYTES (point-to-point)",
                        gpu_copy.p2p.value,
                        gpu_copy.p2p.source.clone(),
                    ),
                    settings::Line::new(
                        "NCCL_TCPXR_GPU_COPY_BYTES (other connections)",
                        gpu_copy.general.value,
                        gpu_copy.general.source.clone(),
                    ),
                ]);
            }
            log::info!(
                target: "tcpxr::init",
                "{}",
                settings::block("fixed at the first connection, from who moves the stripes", &lines)
            );
            MessageRules {
                idle: idle.general.value,
                idle_p2p: idle.p2p.value,
                accept: accept.value,
                idle_chunk: idle_chunk.general.value,
                idle_chunk_p2p: idle_chunk.p2p.value,
                spread,
                gpu_copy: gpu_copy.general.value,
                gpu_copy_p2p: gpu_copy.p2p.value,
            }
        })
    }
}

/// The plugin's state, set by the first init that succeeds and never replaced, so that every call
/// reads it without a lock. A failed init leaves it unset and a later one tries again; `INIT`
/// keeps two inits from building it at once.
static PLUGIN: OnceLock<Arc<Plugin>> = OnceLock::new();
static INIT: Mutex<()> = Mutex::new(());

/// Communicators (v11+ contexts) currently initialised.
static CONTEXTS: AtomicUsize = AtomicUsize::new(0);

/// NCCL has asked for a device's properties. It does so only for the net it assigned to a
/// communicator (after matching NCCL_NET), to build its topology, and before it initialises the
/// tuner; connections come later (NCCL connects at the first collective). The tuner acts only
/// in a process where this is set.
static ASSIGNED: AtomicBool = AtomicBool::new(false);

pub fn get() -> Result<Arc<Plugin>> {
    PLUGIN
        .get()
        .cloned()
        .ok_or_else(|| Error::internal("tcpxr used before init"))
}

/// Whether this process offered NCCL GPU buffers (decided once at init): without them NCCL hands
/// host memory only, so isend, irecv and regMr need not ask the CUDA driver about a pointer.
pub(super) fn gpu_buffers_offered() -> bool {
    PLUGIN.get().is_some_and(|p| p.gpu_offered)
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

/// A communicator's finalize: also drops connects NCCL abandoned (`CONNECTING` in connect.rs),
/// and with the last communicator every connect still under way, within a bound
/// ([`drain_connects`]), and the fused devices ([`Devices::forget_fused`]): NCCL unloads the
/// plugin then, and the next load starts from the physical devices, as a new process would.
pub fn context_closed() -> usize {
    sweep_connects();
    let open = CONTEXTS.fetch_sub(1, Ordering::AcqRel).saturating_sub(1);
    if open == 0 {
        drain_connects();
        if let Some(p) = PLUGIN.get() {
            let forgotten = p.devices.forget_fused();
            if forgotten > 0 {
                log::info!(
                    target: "tcpxr::init",
                    "last communicator finalized: its {forgotten} fused device(s) forgotten; NCCL fuses again for the next"
                );
            }
        }
    }
    open
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

/// A receive comm of this process runs NCCL's device unpack over the socket transport with no
/// copies (`NCCL_TCPXR_GPU_COPY_BYTES` 0 there: a collective's connection at auto): NCCL's kernel
/// reads every received page from host memory, about 2.5 GB/s a channel. The tuner gives such a
/// process more channels (tuner::When); set at accept, never cleared (a process's GPU buffers
/// stay its GPU buffers).
static KERNEL_UNPACKS_HOST_PAGES: AtomicBool = AtomicBool::new(false);

pub fn kernel_unpacks_host_pages() -> bool {
    KERNEL_UNPACKS_HOST_PAGES.load(Ordering::Acquire)
}

/// Notes a receive comm's device unpack (see [`KERNEL_UNPACKS_HOST_PAGES`]); the first such comm
/// of the process says so at INFO, since the tuner's choices change from then on.
fn device_unpack_enabled(p: &Plugin, copy_bytes: usize) {
    if p.transport.kind() == TransportKind::Socket
        && copy_bytes == 0
        && !KERNEL_UNPACKS_HOST_PAGES.swap(true, Ordering::AcqRel)
    {
        log::info!(
            target: "tcpxr::tuner",
            "tuner: NCCL's kernel places this process's collective receives from host memory (GPU buffers \
             over the socket, no copies): its rows for that apply from the next collective"
        );
    }
}

/// What the tuner's channel cap (tuner::rules::pool_channels) is decided from: Some(Some(threads)) for
/// host buffers over the socket transport once its I/O pool is fixed (at the first listen or
/// connect); Some(None) where the cap does not apply (TCPX, or GPU buffers offered: their
/// receives are placed per channel, by NCCL's unpack or tcpxr's, and were not measured capped);
/// None while it is not known yet.
pub fn pool_threads_for_tuner() -> Option<Option<usize>> {
    let p = get().ok()?;
    if p.transport.kind() != TransportKind::Socket || p.gpu_offered {
        return Some(None);
    }
    p.transport.pool_threads().map(Some)
}

pub fn device_count() -> Result<usize> {
    Ok(get()?.devices.count())
}

/// A comm's settings. `p2p`: NCCL's hints say the connection carries point-to-point operations
/// (a send comm's inline limit and chunk size while idle; see [`connect()`]).
pub(super) fn tuning(p: &Plugin, max_requests: usize, p2p: bool) -> Tuning {
    let config = p.config;
    let rules = p.message_rules();
    Tuning {
        send_window: p.send_window,
        recv_window: p.recv_window,
        inline_bytes: config.inline_bytes,
        inline_idle_bytes: if p2p { rules.idle_p2p } else { rules.idle },
        idle_chunk_bytes: if p2p { rules.idle_chunk_p2p } else { rules.idle_chunk },
        mid_rule: if p2p { Rule::Alone } else { Rule::OneInline },
        spread: rules.spread,
        inline_accept: rules.accept,
        max_requests,
        handshake_timeout: Duration::from_millis(config.handshake_timeout_ms),
        peer_timeout_ms: config.peer_timeout_ms,
        stats: config.stats,
        stall_seconds: config.stall_seconds,
        traffic_class: None,
    }
}
