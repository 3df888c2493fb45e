//! tcpxr's native TCP transport: every stripe is one non-blocking TCP connection, driven by NCCL's
//! proxy thread and, while it has a backlog, by a thread of a small process-wide pool (stripe.rs).
//!
//! An inner listener is a listening socket; its handle carries the address and a random token that
//! the connecting side must present as its hello, so only the intended peer becomes a stripe.
pub mod acceptor;
pub mod addr;
mod epoll;
mod frame;
pub mod ifaces;
mod mover;
pub mod stripe;
pub mod sys;
mod workers;

use crate::error::{Error, Result};
use crate::transport::{DeviceInfo, InnerConnector, InnerHandle, InnerListener, InnerRecv, InnerSend, Transport};
use acceptor::{Acceptor, Verdict};
use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};
use stripe::{Direction, Stripe};

const STRIPE_MAGIC: u32 = 0x4452_5854; // "TXRD" little-endian
const HELLO_BYTES: usize = 16; // magic u32, version u32, token u64
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
    /// I/O threads of the process-wide pool (already capped at the cores; 0: none, NCCL's proxy
    /// thread moves every byte).
    pub io_threads: usize,
    /// Backlog from which a stripe is handed to the pool.
    pub handoff_bytes: usize,
}

/// I/O threads when `NCCL_TCPXR_IO_THREADS` is auto, on a machine with at least this many cores.
const AUTO_IO_THREADS: usize = 8;

/// The I/O threads an `NCCL_TCPXR_IO_THREADS` setting (None: auto) gives on this machine: auto is
/// the cores, at most 8; an explicit count is capped at the cores (said at INFO).
pub fn io_threads(setting: Option<usize>) -> usize {
    let wanted = setting.unwrap_or(AUTO_IO_THREADS);
    let threads = workers::cap_to_cores(wanted);
    if setting.is_some() && threads < wanted {
        log::info!(
            target: "tcpxr::init",
            "NCCL_TCPXR_IO_THREADS={wanted} capped at the {threads} cores this process may use"
        );
    }
    threads
}

pub struct SocketTransport {
    devices: Vec<DeviceInfo>,
    opts: SocketOptions,
}

impl SocketTransport {
    /// Devices are the interfaces selected by `ifname` (NCCL_SOCKET_IFNAME syntax).
    pub fn new(ifname: Option<&str>, speed_override: u32, opts: SocketOptions) -> Result<Self> {
        let all = ifaces::list().map_err(|e| Error::os("getifaddrs", e))?;
        let chosen = ifaces::select(&all, ifname);
        if chosen.is_empty() {
            let have: Vec<&str> = all.iter().map(|i| i.name.as_str()).collect();
            return Err(Error::invalid_argument(format!(
                "no network interface matches {:?}; interfaces that are up: {}",
                ifname.unwrap_or(""),
                have.join(", ")
            )));
        }
        let devices = chosen
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
        log::info!(
            target: "tcpxr::init",
            "socket transport: {} I/O threads shared by all connections, stripes with a backlog of {} bytes or more go to them",
            opts.io_threads,
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
        let mut handle = [0u8; 128];
        handle[0..4].copy_from_slice(&STRIPE_MAGIC.to_le_bytes());
        handle[4..8].copy_from_slice(&VERSION.to_le_bytes());
        handle[8..16].copy_from_slice(&token.to_le_bytes());
        addr::encode(&acceptor.local_addr()?, &mut handle[16..16 + addr::ADDR_BYTES]);
        Ok((
            handle,
            Box::new(SocketListener {
                acceptor,
                token,
                opts: self.opts.clone(),
            }),
        ))
    }

    fn connect(&self, _dev: usize, handle: &InnerHandle) -> Result<Box<dyn InnerConnector>> {
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
        let stream = sys::connect_start(&peer).map_err(|e| Error::os(&format!("connect to {peer}"), e))?;
        let mut hello = [0u8; HELLO_BYTES];
        hello[0..4].copy_from_slice(&STRIPE_MAGIC.to_le_bytes());
        hello[4..8].copy_from_slice(&VERSION.to_le_bytes());
        hello[8..16].copy_from_slice(&token.to_le_bytes());
        Ok(Box::new(SocketConnector {
            stream: Some(stream),
            peer,
            hello,
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
        let got = self.acceptor.poll(|hello| {
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
        })?;
        let Some((stream, _)) = got else {
            return Ok(None);
        };
        configure(&stream, &self.opts)?;
        Ok(Some(Box::new(Stripe::start(
            stream,
            Direction::Recv,
            self.opts.io_threads,
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
            self.opts.io_threads,
            self.opts.handoff_bytes,
        )?)))
    }
}
