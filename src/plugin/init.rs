//! Plugin init: the configuration, the inner transport (socket or TCPX, open_transport), the
//! chunk size and windows the transport allows, the GPU-buffer decision and the NCCL settings
//! tcpxr gives, the devices, and the init log (a summary line, then every effective setting).
//! Runs once per process; later calls only refresh the logger.
use super::{Plugin, INIT, PLUGIN, VERSION};
use crate::abi::{ncclDebugLogger_t, NCCL_PTR_CUDA, NCCL_PTR_HOST};
use crate::config::{self, Config};
use crate::devices::Devices;
use crate::engine::ring::MAX_RECEIVE_BYTES;
use crate::error::{Error, Result};
use crate::nccl_settings::{self, GpuBuffersChoice, Setting};
use crate::settings::{self, Line, Source, Value};
use crate::transport::socket::{SocketOptions, SocketTransport, WindowBounds};
use crate::transport::tcpx::{TcpxOptions, TcpxTransport};
use crate::transport::{Transport, TransportKind};
use std::sync::{Arc, OnceLock, PoisonError};
use std::time::Duration;

/// Loads configuration and devices the first time; later calls only refresh the logger. `table`
/// is the version of the table NCCL called through (5-12), which decides whether GPU buffers can
/// be offered without tcpxr GPU work on NCCL's critical path.
pub fn init(logger: ncclDebugLogger_t, table: u32) -> Result<()> {
    crate::log::install(logger);
    // INIT guards no data: a panic in an earlier init (the guard turned it into an error) leaves
    // nothing half-written behind it, so a poisoned lock is taken as it is.
    let _one_at_a_time = INIT.lock().unwrap_or_else(PoisonError::into_inner);
    if PLUGIN.get().is_some() {
        return Ok(());
    }
    let config = config::global()?;
    let io_threads = settings::io_threads(config.io_threads, settings::host());
    let ifname = ifname_setting(config);
    let (transport, transport_why) = open_transport(
        config,
        logger,
        ifname.as_ref().map(|(var, spec)| (*var, spec.as_str())),
        socket_options(config, io_threads.value),
    )?;
    let kind = transport.kind();
    let shape = Shape::capped(config, transport.as_ref());
    let env = &mut |k: &str| std::env::var(k).ok();
    let gpu = nccl_settings::gpu_buffers(config, kind, table, crate::gpu::available(), env)?;
    // The tuner and NCCL_MIN_NCHANNELS make one choice of channels: without the tuner, 8 channels
    // would slow every collective below bulk.
    let tuner = nccl_settings::tuner_reached(table, env).map(|()| config.tuner.on_for(kind, TransportKind::Socket));
    // Point-to-point LL for host buffers over the socket: measured there, and NCCL's device unpack
    // cannot take LL receives (nccl_settings::DEVICE_UNPACK_NEEDS).
    let p2p_ll = kind == TransportKind::Socket && !gpu.offered;
    let mut nccl_given = nccl_settings::defaults(tuner == Ok(true), p2p_ll, env);
    nccl_given.extend(gpu.set_env.iter().copied());
    let nccl_set = nccl_settings::apply(&nccl_given);
    if let Some(a) = &gpu.advice {
        log::info!(target: "tcpxr::init", "{a}");
    }
    if let Some(w) = &gpu.warning {
        log::warn!("{w}");
    }
    let ptr_support = if gpu.offered {
        NCCL_PTR_HOST | NCCL_PTR_CUDA
    } else {
        NCCL_PTR_HOST
    };
    let assumed_speed = nccl_settings::assumed_speed(gpu.offered, &nccl_set);
    let devices = Devices::new(
        transport.devices(),
        ptr_support,
        &config.rails,
        assumed_speed.map(|(mbps, _)| mbps),
    )?;
    log_summary(table, config, transport.as_ref(), &shape, &gpu.summary);
    let mut lines = effective_lines(
        config,
        (kind, &transport_why),
        &shape,
        io_threads,
        &gpu,
        tuner,
        &nccl_given,
    );
    lines.extend(assumed_speed.map(assumed_speed_line));
    log::info!(target: "tcpxr::init", "{}", settings::block("resolved at init", &lines));
    let built = PLUGIN.set(Arc::new(Plugin {
        config,
        transport,
        devices,
        chunk_bytes: shape.chunk.value,
        send_window: shape.send.value,
        recv_window: shape.recv.value,
        message_rules: OnceLock::new(),
        gpu_offered: gpu.offered,
        device_unpack: gpu.device_unpack,
        nccl_set,
    }));
    // INIT is held and PLUGIN was unset above, so nothing can have set it since.
    debug_assert!(built.is_ok());
    Ok(())
}

/// The socket transport's options, from the configuration (`io_threads`: the pool's size where
/// set or decided at init; None = sized at the first connection).
fn socket_options(config: &Config, io_threads: Option<usize>) -> SocketOptions {
    SocketOptions {
        sndbuf: config.sndbuf,
        rcvbuf: config.rcvbuf,
        window: WindowBounds {
            least: config.unread_bytes,
            most: config.unread_max_bytes.max(config.unread_bytes),
        },
        handshake_timeout: Duration::from_millis(config.handshake_timeout_ms),
        peer_timeout_ms: config.peer_timeout_ms,
        io_threads,
        spinners: config.io_spin_threads,
        io_spin_us: config.io_spin_us,
        handoff_bytes: config.handoff_bytes,
        stats: config.stats,
        bounce_demote: config.bounce_demote,
    }
}

/// The chunk size and windows in effect: the configured ones, capped to what the transport can
/// take ([`Transport::limits`]), the chunk raised where receives are held
/// ([`settings::chunk_for_held_receives`]), each with its source.
struct Shape {
    chunk: Value<usize>,
    send: Value<usize>,
    recv: Value<usize>,
}

impl Shape {
    fn capped(config: &Config, transport: &dyn Transport) -> Shape {
        let limits = transport.limits();
        let kind = transport.kind();
        let chunk = settings::capped(
            "NCCL_TCPXR_CHUNK_BYTES",
            config.chunk_bytes,
            limits.max_chunk_bytes,
            &kind,
        );
        let recv = settings::capped("NCCL_TCPXR_RECV_WINDOW", config.recv_window, limits.recv_slots, &kind);
        // Over tcpx a receive comm NCCL asks for device unpack holds its chunks until NCCL
        // consumes each receive. NCCL asks where GPU buffers are on for tcpx (auto or 1; the
        // tests' stand-in for NCCL asks without a GPU too); NCCL_TCPXR_GPU_BUFFERS=0 keeps the
        // configured chunk.
        let held = kind == TransportKind::Tcpx && config.gpu_buffers.on_for(kind, TransportKind::Tcpx);
        let chunk = match held {
            true => settings::chunk_for_held_receives(chunk, config.stripes, recv.value, MAX_RECEIVE_BYTES),
            false => chunk,
        };
        Shape {
            chunk,
            send: settings::capped("NCCL_TCPXR_SEND_WINDOW", config.send_window, limits.send_slots, &kind),
            recv,
        }
    }
}

/// The init log's one-line summary: version and table, transport, chunking, windows, GPU
/// buffers, devices.
fn log_summary(table: u32, config: &Config, transport: &dyn Transport, shape: &Shape, gpu_summary: &str) {
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
        "tcpxr {VERSION} (NCCL called ncclNetPlugin_v{table}): transport {}, {} stripes x {} B chunks, windows {} sends / {} receives per stripe, GPU buffers {}, devices {}",
        transport.kind(),
        config.stripes,
        shape.chunk.value,
        shape.send.value,
        shape.recv.value,
        gpu_summary,
        list.join(" ")
    );
}

/// The init log's "effective settings" block: every setting init resolves, with its source, and
/// the NCCL settings tcpxr gave. `transport`: the inner transport and why it was chosen; `tuner`:
/// Ok(whether it acts) where NCCL will load it, else why not.
fn effective_lines(
    config: &Config,
    (kind, transport_why): (TransportKind, &str),
    shape: &Shape,
    io_threads: Value<Option<usize>>,
    gpu: &GpuBuffersChoice,
    tuner: std::result::Result<bool, &str>,
    nccl_given: &[Setting],
) -> Vec<Line> {
    let switch = |var: &str, setting: config::Switch, acts: bool, auto: &str| {
        let source = match setting {
            config::Switch::Auto => Source::Auto(auto.into()),
            _ => Source::Env,
        };
        Line::new(var, if acts { "on" } else { "off" }, source)
    };
    let transport_source = match config.transport {
        config::Transport::Auto => {
            let why = transport_why.strip_prefix("auto").unwrap_or(transport_why);
            Source::Auto(why.trim_start_matches([':', ',', ' ']).to_string())
        }
        _ => Source::Env,
    };
    let nccl_lines = nccl_given
        .iter()
        .map(|&(k, v, why)| Line::new(k, v, Source::Auto(format!("unset, tcpxr's value: {why}"))));
    [
        Line::new("NCCL_TCPXR_TRANSPORT", kind, transport_source),
        Line::new("NCCL_TCPXR_CHUNK_BYTES", shape.chunk.value, shape.chunk.source.clone()),
        Line::new("NCCL_TCPXR_SEND_WINDOW", shape.send.value, shape.send.source.clone()),
        Line::new("NCCL_TCPXR_RECV_WINDOW", shape.recv.value, shape.recv.source.clone()),
        Line::new(
            "NCCL_TCPXR_IO_THREADS",
            io_threads.value.map_or_else(|| "auto".to_string(), |n| n.to_string()),
            io_threads.source,
        ),
        settings::deferred("NCCL_TCPXR_IO_SPIN_US", config.io_spin_us),
        settings::deferred("NCCL_TCPXR_HANDOFF_BYTES", config.handoff_bytes.map(|v| v as u64)),
        settings::deferred(
            "NCCL_TCPXR_INLINE_IDLE_BYTES",
            config.inline_idle_bytes.map(|v| v as u64),
        ),
        settings::deferred(
            "NCCL_TCPXR_INLINE_IDLE_P2P_BYTES",
            config.inline_idle_p2p_bytes.map(|v| v as u64),
        ),
        switch(
            "NCCL_TCPXR_GPU_BUFFERS",
            config.gpu_buffers,
            gpu.offered,
            &format!("{}; on over tcpx", gpu.summary),
        ),
        settings::bounce_demote(config.bounce_demote, crate::transport::socket::cpu_demotes()),
        match tuner {
            Ok(acts) => switch("NCCL_TCPXR_TUNER", config.tuner, acts, "on over socket"),
            Err(why) => Line::new("NCCL_TCPXR_TUNER", "off", Source::Auto(format!("not loaded: {why}"))),
        },
    ]
    .into_iter()
    .chain(nccl_lines)
    .collect()
}

/// The speed NCCL is told for interfaces without one, where tcpxr chose it
/// (`nccl_settings::assumed_speed`).
fn assumed_speed_line((mbps, why): (i32, &str)) -> Line {
    Line::new(
        "NCCL_TCPXR_SPEED_MBPS",
        format!("{mbps} for interfaces without a link speed (lo)"),
        Source::Auto(format!("unset: {why}")),
    )
}

/// The interfaces tcpxr may use and the variable that said so: NCCL_TCPXR_IFNAME, else NCCL's own
/// NCCL_SOCKET_IFNAME, else None (NCCL's default choice).
pub(crate) fn ifname_setting(config: &Config) -> Option<(&'static str, String)> {
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
) -> Result<(Arc<dyn Transport>, String)> {
    let socket = |why: &str| -> Result<(Arc<dyn Transport>, String)> {
        log::info!(target: "tcpxr::init", "inner transport: socket ({why})");
        let t = SocketTransport::new(ifname, config.speed_mbps, config.loopback_devices, opts.clone())?;
        Ok((Arc::new(t), why.to_string()))
    };
    let tcpx = || {
        TcpxTransport::open(&TcpxOptions {
            lib: config.tcpx_lib.as_deref(),
            logger,
            ifname,
        })
    };
    let chosen = |t: TcpxTransport, why: &str| -> (Arc<dyn Transport>, String) {
        let (path, name) = t.library();
        log::info!(target: "tcpxr::init", "inner transport: tcpx ({why}: {name} from {path})");
        (Arc::new(t), why.to_string())
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
