//! tcpxr's native TCP transport: every stripe is one non-blocking TCP connection, driven by NCCL's
//! proxy thread and, while it has a backlog, by a thread of a small process-wide pool (stripe.rs).
//!
//! An inner listener is a listening socket; its handle carries the address and a random token that
//! the connecting side must present as its hello, so only the intended peer becomes a stripe.
//! Both byte formats arrive from the peer (the handle inside its welcome, the hello on a stripe
//! listener) and are decoded by [`decode_stripe_handle`] and [`check_stripe_hello`], which take
//! any bytes without panicking and allocate nothing sized by them.
pub mod acceptor;
pub mod addr;
mod epoll;
mod frame;
mod host;
pub mod ifaces;
mod mover;
pub mod stripe;
pub mod sys;
mod workers;
pub use workers::PoolShape;

use crate::error::{Error, Result};
use crate::transport::{
    DeviceInfo, InnerConnector, InnerHandle, InnerListener, InnerRecv, InnerSend, Transport, INNER_HANDLE_BYTES,
};
use acceptor::{Acceptor, Verdict};
use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};
use stripe::{Direction, Stripe};

const STRIPE_MAGIC: u32 = 0x4452_5854; // "TXRD" little-endian
/// A stripe's hello: magic u32, version u32, token u64.
pub const HELLO_BYTES: usize = 16;
const VERSION: u32 = 1;
/// Speed reported for loopback, which has no link speed in sysfs.
pub const LOOPBACK_MBPS: i32 = 400_000;

/// Settings the socket transport takes from the plugin's configuration.
#[derive(Clone, Debug)]
pub struct SocketOptions {
    pub sndbuf: usize,
    pub rcvbuf: usize,
    pub handshake_timeout: Duration,
    pub peer_timeout_ms: u64,
    /// The process-wide I/O pool: its threads (already capped at the cores; 0: none, NCCL's proxy
    /// thread moves every byte) and how long an idle one spins.
    pub pool: PoolShape,
    /// Backlog from which a stripe is handed to the pool.
    pub handoff_bytes: usize,
}

/// The I/O threads an `NCCL_TCPXR_IO_THREADS` setting asks for: a count, capped at the cores (said
/// at INFO), or None for auto, which the pool sizes when it starts ([`host::auto_io_threads`]).
pub fn io_threads(setting: Option<usize>) -> Option<usize> {
    let wanted = setting?;
    let threads = wanted.min(host::usable_cores());
    if threads < wanted {
        log::info!(
            target: "tcpxr::init",
            "NCCL_TCPXR_IO_THREADS={wanted} capped at the {threads} cores this process may use"
        );
    }
    Some(threads)
}

/// Whether the I/O pool copies stripes in parallel: the process may use at least 8 cores. Both
/// auto settings below follow it.
fn parallel_pool() -> bool {
    host::usable_cores() >= 8
}

/// NCCL_TCPXR_HANDOFF_BYTES in effect: the setting, or for auto 0 (every stripe backlog to the
/// pool) with a parallel pool and 512 KiB below. Measured, tcpxr-bench nccl at 4 connections
/// (docs/BENCHMARKS.md section 12): on 32 cores 0 moved 512 KiB messages at 24.8 GB/s against
/// 5.1 with 512 KiB (NCCL's thread copying alone); on 2 cores 0 gave 2.0 against 3.5.
pub fn handoff_bytes(setting: Option<usize>) -> usize {
    setting.unwrap_or(if parallel_pool() { 0 } else { 512 << 10 })
}

/// NCCL_TCPXR_INLINE_IDLE_BYTES in effect: the setting, or for auto 32 KiB with a parallel pool
/// and 512 KiB below. A message sent inline is copied by NCCL's proxy thread alone on one socket;
/// on 32 cores NCCL all_reduce of 2-8 MiB (512 KiB messages, one or two in flight) ran at
/// 2.5-3.0 GB/s with 512 KiB and 4.0-11.7 with 64 KiB (docs/BENCHMARKS.md section 15), and an
/// all_reduce of 512 KiB on 2 channels (64 KiB messages) waited on the proxy thread's inline copy
/// of one channel's message while the pool moved the other's (section 31).
pub fn inline_idle_bytes(setting: Option<usize>) -> usize {
    setting.unwrap_or(if parallel_pool() { 32 << 10 } else { 512 << 10 })
}

/// NCCL_TCPXR_INLINE_IDLE_P2P_BYTES in effect: the setting, or for auto the larger of 128 KiB and
/// `inline_idle` (NCCL_TCPXR_INLINE_IDLE_BYTES in effect). NCCL sendrecv of 128 KiB (one message
/// each way, nothing else in flight) took 76-83 us inline against 98-103 striped, while the
/// all_reduce that made 64 KiB the limit for every connection (section 15) does not run on these
/// connections (docs/BENCHMARKS.md section 25).
pub fn inline_idle_p2p_bytes(setting: Option<usize>, inline_idle: usize) -> usize {
    setting.unwrap_or(inline_idle.max(128 << 10))
}

/// NCCL_TCPXR_IO_SPIN_US in effect: the setting, or for auto 200 us with a parallel pool and 0
/// below, where a spinning thread would take one of few cores from NCCL's.
pub fn io_spin(setting: Option<u64>) -> Duration {
    Duration::from_micros(setting.unwrap_or(if parallel_pool() { 200 } else { 0 }))
}

pub struct SocketTransport {
    devices: Vec<DeviceInfo>,
    opts: SocketOptions,
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
            .map(|i| DeviceInfo {
                name: i.name.clone(),
                ctrl_addr: i.addr,
                pci_path: ifaces::pci_path(&i.name),
                speed_mbps: if speed_override > 0 {
                    speed_override as i32
                } else {
                    // lo reports no speed. NCCL sizes its channel count from this figure, and
                    // loopback TCP carries about 400 Gb/s on a modern host (53 GB/s with 16
                    // streams, reference/baseline.md): reporting that gives NCCL 4 channels
                    // instead of 2 and doubles all_reduce (docs/BENCHMARKS.md). Other interfaces
                    // without a speed get NCCL's own default.
                    ifaces::speed_mbps(&i.name).unwrap_or(if i.loopback { LOOPBACK_MBPS } else { 10_000 })
                },
                guid: ifaces::guid(i),
            })
            .collect();
        host::announce();
        let threads = opts.pool.threads.map_or_else(
            || {
                format!(
                    "auto (up to {}: this process's share of the host's cores)",
                    host::MAX_AUTO_IO_THREADS
                )
            },
            |n| n.to_string(),
        );
        log::info!(
            target: "tcpxr::init",
            "socket transport: {} I/O threads shared by all connections ({} of them, when idle, look for work for {} us \
             before they sleep), stripes with a backlog of {} bytes or more go to them",
            threads,
            opts.pool.spinners,
            opts.pool.spin.as_micros(),
            opts.handoff_bytes
        );
        Ok(SocketTransport { devices, opts })
    }

    fn device(&self, dev: usize) -> Result<&DeviceInfo> {
        self.devices.get(dev).ok_or_else(|| {
            Error::invalid_argument(format!("device {dev} does not exist; there are {}", self.devices.len()))
        })
    }
}

fn random_u64() -> u64 {
    let mut v = [0u8; 8];
    // SAFETY: getrandom writes at most v.len() bytes into v.
    let n = unsafe { libc::getrandom(v.as_mut_ptr() as *mut libc::c_void, v.len(), 0) };
    if n != 8 {
        // getrandom cannot fail for 8 bytes on Linux >= 3.17; still never hand out a fixed value.
        let t = Instant::now().elapsed().as_nanos() as u64 ^ std::process::id() as u64;
        return t.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (&v as *const _ as u64);
    }
    u64::from_ne_bytes(v)
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

/// A fresh random 64-bit value, for nonces and tokens.
pub fn nonce() -> u64 {
    random_u64()
}

fn configure(stream: &TcpStream, opts: &SocketOptions) -> Result<()> {
    stream.set_nodelay(true).map_err(|e| Error::os("TCP_NODELAY", e))?;
    sys::set_buffers(stream, opts.sndbuf, opts.rcvbuf).map_err(|e| Error::os("socket buffer sizes", e))?;
    sys::set_peer_timeout(stream, opts.peer_timeout_ms).map_err(|e| Error::os("peer timeout options", e))
}

impl Transport for SocketTransport {
    fn name(&self) -> &'static str {
        "socket"
    }

    fn devices(&self) -> &[DeviceInfo] {
        &self.devices
    }

    fn listen(&self, dev: usize) -> Result<(InnerHandle, Box<dyn InnerListener>)> {
        let ip = self.device(dev)?.ctrl_addr;
        let acceptor = Acceptor::bind(ip, HELLO_BYTES, self.opts.handshake_timeout, "tcpxr stripe listener")?;
        let token = random_u64();
        let handle = encode_stripe_handle(token, &acceptor.local_addr()?);
        Ok((
            handle,
            Box::new(SocketListener {
                acceptor,
                token,
                opts: self.opts.clone(),
            }),
        ))
    }

    fn connect(&self, _dev: usize, handle: &InnerHandle, traffic_class: Option<u8>) -> Result<Box<dyn InnerConnector>> {
        let (token, peer) = decode_stripe_handle(handle)?;
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
        }))
    }
}

struct SocketListener {
    acceptor: Acceptor,
    token: u64,
    opts: SocketOptions,
}

impl InnerListener for SocketListener {
    fn accept(&mut self) -> Result<Option<Box<dyn InnerRecv>>> {
        let token = self.token;
        let got = self.acceptor.poll(|hello| check_stripe_hello(hello, token))?;
        let Some((stream, _)) = got else {
            return Ok(None);
        };
        configure(&stream, &self.opts)?;
        Ok(Some(Box::new(Stripe::start(
            stream,
            Direction::Recv,
            self.opts.pool,
            self.opts.handoff_bytes,
        )?)))
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
                Err(e) => return Err(stripe::stripe_error(Direction::Send, e)),
            }
        }
        let stream = self.stream.take().unwrap();
        configure(&stream, &self.opts)?;
        Ok(Some(Box::new(Stripe::start(
            stream,
            Direction::Send,
            self.opts.pool,
            self.opts.handoff_bytes,
        )?)))
    }
}
