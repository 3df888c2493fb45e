//! tcpxr's native TCP transport: every stripe is one non-blocking TCP connection, driven by NCCL's
//! proxy thread and, while it has a backlog, by a thread of a small process-wide pool (stripe.rs).
//!
//! An inner listener is a listening socket; its handle carries the address and a random token that
//! the connecting side must present as its hello, so only the intended peer becomes a stripe.
//! Both byte formats arrive from the peer (the handle inside its welcome, the hello on a stripe
//! listener) and are decoded by [`decode_stripe_handle`] and [`check_stripe_hello`], which take
//! any bytes without panicking and allocate nothing sized by them.
mod demote;
pub use demote::supported as cpu_demotes;
mod epoll;
mod frame;
mod grant;
pub use grant::WindowBounds;
mod host;
mod mover;
mod pool_stats;
mod stripe;
mod workers;
pub use workers::PoolShape;

use crate::error::{Error, Result};
use crate::net::acceptor::{Acceptor, Verdict};
use crate::net::conn::{self, Direction};
use crate::net::{addr, ifaces, sys};
use crate::settings::{self, Line, Movers, Source};
use crate::transport::{
    DeviceInfo, InnerConnector, InnerHandle, InnerListener, InnerRecv, InnerSend, Transport, TransportKind,
    INNER_HANDLE_BYTES,
};
use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use stripe::Stripe;

/// Locks a mutex of the stripes or the I/O pool. A panic while one is held leaves whole data
/// (counters, queues, registry slots updated whole), and close must still work after one.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

const STRIPE_MAGIC: u32 = 0x4452_5854; // "TXRD" little-endian
/// A stripe's hello: magic u32, version u32, token u64.
pub const HELLO_BYTES: usize = 16;
/// 2: the receiver's grants (grant.rs).
const VERSION: u32 = 2;
/// Speed reported for loopback, which has no link speed in sysfs.
pub const LOOPBACK_MBPS: i32 = 400_000;

/// Settings the socket transport takes from the plugin's configuration.
#[derive(Clone, Debug)]
pub struct SocketOptions {
    pub sndbuf: usize,
    pub rcvbuf: usize,
    /// NCCL_TCPXR_UNREAD_BYTES and NCCL_TCPXR_UNREAD_MAX_BYTES: a receiving stripe's window
    /// (grant.rs); 0 (the default): no limit but TCP's.
    pub window: WindowBounds,
    pub handshake_timeout: Duration,
    pub peer_timeout_ms: u64,
    /// NCCL_TCPXR_IO_THREADS as init resolved it (already capped at the cores; 0: none, NCCL's
    /// proxy thread moves every byte; None: auto, sized at the first connection).
    pub io_threads: Option<usize>,
    /// How many idle I/O threads may spin at once; None: auto, decided with the pool.
    pub spinners: Option<usize>,
    /// The user's NCCL_TCPXR_IO_SPIN_US and NCCL_TCPXR_HANDOFF_BYTES; None: the pool rules decide
    /// them at the first connection ([`Plan`]).
    pub io_spin_us: Option<u64>,
    pub handoff_bytes: Option<usize>,
    /// NCCL_TCPXR_STATS: the pool logs its counters when it stops.
    pub stats: bool,
    /// NCCL_TCPXR_BOUNCE_DEMOTE: receives into the engine's bounce memory leave the reading
    /// core's caches as they land (demote.rs).
    pub bounce_demote: bool,
}

/// The I/O pool and the hand-off as the first listen or connect fixes them: by then every rank on
/// the host has announced itself (at its init), so the pool's auto size and crate::settings's pool
/// rules see them all. One per transport, so every stripe of the process agrees.
#[derive(Clone, Debug)]
struct Plan {
    movers: Movers,
    shape: PoolShape,
    /// Backlog from which a stripe is handed to the pool (crate::settings::HANDOFF).
    handoff_bytes: usize,
    /// The values above as plugin logs them with the other settings the first connection fixes.
    lines: Vec<Line>,
}

pub struct SocketTransport {
    devices: Vec<DeviceInfo>,
    opts: SocketOptions,
    plan: OnceLock<Plan>,
}

impl SocketTransport {
    /// Devices are the interfaces selected by `ifname`: (the variable that set it, its value in
    /// NCCL_SOCKET_IFNAME syntax); None takes NCCL's default choice. The IPv4 loopback stands for
    /// `loopback_devices` devices ([`ifaces::split_loopback`]).
    pub fn new(
        ifname: Option<(&str, &str)>,
        speed_override: u32,
        loopback_devices: usize,
        opts: SocketOptions,
    ) -> Result<Self> {
        let all = ifaces::list().map_err(|e| Error::os("getifaddrs", e))?;
        let chosen = ifaces::select(&all, ifname.map(|(_, spec)| spec));
        if chosen.is_empty() {
            let up: Vec<String> = all.iter().map(|i| format!("{} ({})", i.name, i.addr)).collect();
            let up = if up.is_empty() {
                "none".to_string()
            } else {
                up.join(", ")
            };
            return Err(Error::invalid_argument(match ifname {
                Some((var, spec)) => format!("{var}={spec} matches no network interface that is up; up: {up}"),
                None => format!("no network interface is up with an address tcpxr can use; up: {up}"),
            }));
        }
        let devices = ifaces::split_loopback(chosen, loopback_devices)
            .iter()
            .map(|i| {
                // lo reports no speed. NCCL sizes its channel count from this figure, and
                // loopback TCP carries about 400 Gb/s on a modern host (measured: 53 GB/s with 16
                // streams): reporting that gives NCCL 4 channels instead of 2 and doubles
                // all_reduce where tcpxr does not set NCCL's channels (docs/BENCHMARKS.md#defaults).
                // Other interfaces without a speed get NCCL's own default.
                let link = ifaces::speed_mbps(&i.name);
                let assumed = if i.loopback { LOOPBACK_MBPS } else { 10_000 };
                DeviceInfo {
                    name: i.name.clone(),
                    ctrl_addr: i.addr,
                    pci_path: ifaces::pci_path(&i.name),
                    speed_mbps: match (speed_override, link) {
                        (0, Some(mbps)) => mbps,
                        (0, None) => assumed,
                        (user, _) => user as i32,
                    },
                    speed_assumed: speed_override == 0 && link.is_none(),
                    guid: ifaces::guid(i),
                }
            })
            .collect();
        host::announce();
        Ok(SocketTransport {
            devices,
            opts,
            plan: OnceLock::new(),
        })
    }

    /// The pool and hand-off, fixed at the first call (the first listen or connect).
    fn plan(&self) -> &Plan {
        self.plan.get_or_init(|| {
            let o = &self.opts;
            let movers = settings::pool_movers(o.io_threads, settings::host(), host::processes);
            let handoff = settings::HANDOFF.resolve_bytes(o.handoff_bytes, &movers);
            let spin = settings::IO_SPIN.resolve(o.io_spin_us, &movers);
            let spinners = settings::io_spinners(o.spinners, &movers);
            let lines = vec![
                Line::new(
                    "NCCL_TCPXR_IO_THREADS",
                    movers.threads,
                    match o.io_threads {
                        Some(_) => settings::env_or_default("NCCL_TCPXR_IO_THREADS"),
                        None => Source::Auto(format!("{}: the process's share, {} cores", movers.why, movers.cores)),
                    },
                ),
                Line::new("NCCL_TCPXR_IO_SPIN_US", spin.value, spin.source),
                Line::new("NCCL_TCPXR_IO_SPIN_THREADS", spinners.value, spinners.source),
                Line::new("NCCL_TCPXR_HANDOFF_BYTES", handoff.value, handoff.source),
            ];
            Plan {
                shape: PoolShape {
                    threads: movers.threads,
                    spin: Duration::from_micros(spin.value),
                    spinners: spinners.value,
                    stats: o.stats,
                },
                handoff_bytes: handoff.value,
                movers,
                lines,
            }
        })
    }

    fn device(&self, dev: usize) -> Result<&DeviceInfo> {
        self.devices.get(dev).ok_or_else(|| {
            Error::invalid_argument(format!("device {dev} does not exist; there are {}", self.devices.len()))
        })
    }
}

/// A stripe listener's inner handle: magic u32, version u32, token u64, then its address
/// ([`addr`], 20 bytes); the rest is zero.
pub fn encode_stripe_handle(token: u64, at: &SocketAddr) -> InnerHandle {
    let mut handle = [0u8; INNER_HANDLE_BYTES];
    handle[0..4].copy_from_slice(&STRIPE_MAGIC.to_le_bytes());
    handle[4..8].copy_from_slice(&VERSION.to_le_bytes());
    handle[8..16].copy_from_slice(&token.to_le_bytes());
    addr::encode(at, &mut handle[16..16 + addr::ADDR_BYTES]);
    handle
}

/// The token and address of a stripe listener's inner handle, as the peer sent it in its welcome.
pub fn decode_stripe_handle(handle: &InnerHandle) -> Result<(u64, SocketAddr)> {
    let magic = u32::from_le_bytes(handle[0..4].try_into().unwrap());
    let version = u32::from_le_bytes(handle[4..8].try_into().unwrap());
    if magic != STRIPE_MAGIC || version != VERSION {
        return Err(Error::remote(format!(
            "peer sent a stripe handle tcpxr's socket transport does not understand (magic {magic:#x}, version {version})"
        )));
    }
    let token = u64::from_le_bytes(handle[8..16].try_into().unwrap());
    let peer = addr::decode(&handle[16..16 + addr::ADDR_BYTES])
        .ok_or_else(|| Error::remote("peer sent a stripe handle without a valid address"))?;
    Ok((token, peer))
}

/// The hello a stripe sends first, presenting its listener's token.
pub fn stripe_hello(token: u64) -> [u8; HELLO_BYTES] {
    let mut hello = [0u8; HELLO_BYTES];
    hello[0..4].copy_from_slice(&STRIPE_MAGIC.to_le_bytes());
    hello[4..8].copy_from_slice(&VERSION.to_le_bytes());
    hello[8..16].copy_from_slice(&token.to_le_bytes());
    hello
}

/// A stripe listener's verdict on a hello (any bytes): accepted only if it is exactly
/// [`stripe_hello`]`(token)`.
pub fn check_stripe_hello(hello: &[u8], token: u64) -> Verdict {
    let Ok(hello) = <&[u8; HELLO_BYTES]>::try_from(hello) else {
        return Verdict::Reject(format!(
            "a stripe hello of {} bytes, expected {HELLO_BYTES}",
            hello.len()
        ));
    };
    let magic = u32::from_le_bytes(hello[0..4].try_into().unwrap());
    let version = u32::from_le_bytes(hello[4..8].try_into().unwrap());
    let t = u64::from_le_bytes(hello[8..16].try_into().unwrap());
    if magic != STRIPE_MAGIC {
        Verdict::Reject(format!("bad magic {magic:#x} (not a tcpxr stripe)"))
    } else if version != VERSION {
        Verdict::Reject(format!(
            "stripe protocol version {version}, this tcpxr speaks {VERSION}"
        ))
    } else if t != token {
        Verdict::Reject("wrong stripe token".into())
    } else {
        Verdict::Accept
    }
}

fn configure(stream: &TcpStream, opts: &SocketOptions, rcvbuf: usize) -> Result<()> {
    stream.set_nodelay(true).map_err(|e| Error::os("TCP_NODELAY", e))?;
    sys::set_buffers(stream, opts.sndbuf, rcvbuf).map_err(|e| Error::os("socket buffer sizes", e))?;
    sys::set_peer_timeout(stream, opts.peer_timeout_ms).map_err(|e| Error::os("peer timeout options", e))
}

impl Transport for SocketTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Socket
    }

    fn devices(&self) -> &[DeviceInfo] {
        &self.devices
    }

    fn movers(&self) -> Movers {
        self.plan().movers.clone()
    }

    fn pool_threads(&self) -> Option<usize> {
        self.plan.get().map(|p| p.movers.threads)
    }

    fn pool_settings(&self) -> Vec<Line> {
        self.plan().lines.clone()
    }

    fn listen(&self, dev: usize) -> Result<(InnerHandle, Box<dyn InnerListener>)> {
        let ip = self.device(dev)?.ctrl_addr;
        let plan = self.plan();
        let acceptor = Acceptor::bind(ip, HELLO_BYTES, self.opts.handshake_timeout, "tcpxr stripe listener")?;
        let token = crate::net::nonce();
        let handle = encode_stripe_handle(token, &acceptor.local_addr()?);
        Ok((
            handle,
            Box::new(SocketListener {
                acceptor,
                token,
                opts: self.opts.clone(),
                pool: plan.shape,
                handoff_bytes: plan.handoff_bytes,
            }),
        ))
    }

    fn connect(&self, _dev: usize, handle: &InnerHandle, traffic_class: Option<u8>) -> Result<Box<dyn InnerConnector>> {
        let (token, peer) = decode_stripe_handle(handle)?;
        let plan = self.plan();
        // The address came from the peer's welcome: one that cannot even be connected to (a
        // broadcast address, say) is the peer's fault.
        // The traffic class is set before connect(2): the SYN carries it too.
        let stream = sys::connect_start(&peer, traffic_class).map_err(|e| {
            Error::remote(format!(
                "peer's stripe handle names {peer}, which cannot be connected to: {e}"
            ))
        })?;
        Ok(Box::new(SocketConnector {
            stream: Some(stream),
            peer,
            hello: stripe_hello(token),
            sent: 0,
            connected: false,
            started: Instant::now(),
            opts: self.opts.clone(),
            pool: plan.shape,
            handoff_bytes: plan.handoff_bytes,
        }))
    }
}

struct SocketListener {
    acceptor: Acceptor,
    token: u64,
    opts: SocketOptions,
    pool: PoolShape,
    handoff_bytes: usize,
}

impl InnerListener for SocketListener {
    fn accept(&mut self) -> Result<Option<Box<dyn InnerRecv>>> {
        let token = self.token;
        let got = self.acceptor.poll(|hello| check_stripe_hello(hello, token))?;
        let Some((stream, _)) = got else {
            return Ok(None);
        };
        configure(&stream, &self.opts, self.opts.window.receive_buffer(self.opts.rcvbuf))?;
        Ok(Some(Box::new(
            Stripe::receiving(stream, self.pool, self.handoff_bytes, self.opts.window)?
                .demoting_bounce(self.opts.bounce_demote),
        )))
    }
}

struct SocketConnector {
    stream: Option<TcpStream>,
    peer: SocketAddr,
    hello: [u8; HELLO_BYTES],
    sent: usize,
    connected: bool,
    started: Instant,
    opts: SocketOptions,
    pool: PoolShape,
    handoff_bytes: usize,
}

impl InnerConnector for SocketConnector {
    fn poll(&mut self) -> Result<Option<Box<dyn InnerSend>>> {
        let stream = self
            .stream
            .as_ref()
            .ok_or_else(|| Error::internal("stripe connector polled after completion"))?;
        if !self.connected {
            match sys::connect_finished(stream) {
                Ok(true) => self.connected = true,
                Ok(false) => {
                    if self.started.elapsed() > self.opts.handshake_timeout {
                        return Err(Error::remote(format!("stripe connect to {} timed out", self.peer)));
                    }
                    return Ok(None);
                }
                Err(e) => return Err(Error::remote(format!("stripe connect to {} failed: {e}", self.peer))),
            }
        }
        while self.sent < HELLO_BYTES {
            match (&*stream).write(&self.hello[self.sent..]) {
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(conn::error("stripe", Direction::Send, e)),
            }
        }
        let stream = self.stream.take().unwrap();
        configure(&stream, &self.opts, self.opts.rcvbuf)?;
        Ok(Some(Box::new(Stripe::sending(stream, self.pool, self.handoff_bytes)?)))
    }
}
