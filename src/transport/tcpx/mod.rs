//! The tcpx transport: every stripe is one connection of Google's GPUDirect-TCPX plugin (or of any
//! library with its ABI, such as tcpxr's emulator in `tests/tcpx-emu`), loaded at run time.
//!
//! TCPX's rules, as read from its plugin's source, and where they are kept (docs/TCPX.md maps each
//! to its test):
//! * only `ncclNetPlugin_v7` exists; it is loaded with libloading and never unloaded ([`ffi::Lib`]);
//!   the default search never takes tcpxr itself nor a net not named GPUDirectTCPX;
//! * 16 request slots per TCPX comm, a receive holding its slot until `irecvConsumed`: each stripe
//!   holds at most [`MAX_SENDS`] sends and [`MAX_RECVS`] receives (the plugin caps the engine's
//!   windows to these through [`Transport::limits`], and the stripes refuse a post beyond them);
//!   "unable to allocate requests" (result 3) is treated as busy and retried;
//! * `test` only on the oldest request, sizes kept by tcpxr (TCPX never reports them), tags unused
//!   for matching (FIFO per comm);
//! * a receive never above 4 MiB ([`MAX_RECV_BYTES`]: NCCL's unpack slice, 2048 records);
//! * connect and accept are called until they return a comm; connect with the same handle buffer
//!   every time (TCPX keeps its state in it); accept with preallocated, aligned device-handle
//!   storage;
//! * memory is registered on every stripe; CUDA ranges 4 KiB aligned; a registration a request
//!   in flight uses is deregistered only once that request is done or the comm is closed, and a
//!   closing stripe closes its TCPX comm before it deregisters: TCPX's deregMr of CUDA memory
//!   closes the dmabuf fd its helper threads send from, and its close joins those threads
//!   (deregMr never reads the comm, so it may follow the close);
//! * a TCPX connect cannot be cancelled: one tcpxr abandons while TCPX's connect is under way is
//!   called again at later sweeps ([`Transport::sweep`]) until TCPX returns its comm, which is
//!   then closed, or its failure; one still under way after 10 minutes, or at the end of the
//!   last finalize's bounded final sweep ([`Transport::drain`]), is given up with a WARN;
//! * TCPX sends without MSG_NOSIGNAL, so SIGPIPE is blocked in the threads that call it and
//!   inherited by the threads it starts ([`sigpipe`]), never ignored process-wide;
//! * TCPX's test does not report a failure of its helper threads' connections
//!   ([`InnerStripe::reports_peer_loss`]), so the engine watches its control connection;
//! * the device handle is read once per stripe after accept; a completed receive's records are
//!   slot `n % 16` of its stripe's ring, unpacked ([`unpack`]) before `irecvConsumed`, which is
//!   called strictly in FIFO order.
//!
//! [`InnerStripe::reports_peer_loss`]: crate::transport::InnerStripe::reports_peer_loss
mod abandoned;
mod ffi;
mod memory;
mod sigpipe;
mod stripes;
pub mod unpack;

use crate::abi::NCCL_PTR_CUDA;
use crate::abi::{ncclDebugLogger_t, NET_UNPACK_MAX_SLICE_SIZE};
use crate::error::{Error, Result};
use crate::net::ifaces;
use crate::transport::{
    DeviceInfo, InnerConnector, InnerHandle, InnerListener, InnerRecv, InnerSend, Limits, Transport, INNER_HANDLE_BYTES,
};
use abandoned::{Abandoned, FINAL_SWEEP};
use ffi::{Comm, DevHandleStorage, Lib, Skip, UnpackQueue};
use std::net::IpAddr;
use std::sync::Arc;
pub use stripes::{TcpxRecv, TcpxSend};

/// Request slots of one TCPX comm (`MAX_REQUESTS`).
pub const TCPX_REQUESTS: usize = 16;
/// Sends a stripe keeps outstanding: 12 of the 16 slots, the headroom UCCL found necessary.
pub const MAX_SENDS: usize = 12;
/// Receives a stripe holds (posted, in flight, or done and not yet consumed): all 16 slots.
pub const MAX_RECVS: usize = 16;
/// Largest receive: NCCL's unpack slice (`NET_UNPACK_MAX_SLICE_SIZE`), 2048 records of 4 KiB pages
/// with 2x slack; beyond it TCPX fail-stops the process.
pub const MAX_RECV_BYTES: usize = NET_UNPACK_MAX_SLICE_SIZE;

/// Where the TCPX library is looked for when NCCL_TCPXR_TCPX_LIB is unset: the install locations
/// of Google's images (GCE VMs, GKE), then the library path. Only a net named GPUDirectTCPX is
/// taken from these, and never tcpxr itself.
pub const DEFAULT_LIBRARIES: &[&str] = &[
    "/var/lib/tcpx/lib64/libnccl-net.so",
    "/usr/local/tcpx/lib64/libnccl-net.so",
    "/usr/local/nvidia/lib64/libnccl-net.so",
    "libnccl-net-tcpx.so",
    "libnccl-net.so",
];

/// Settings TCPX reads that tcpxr gives a value when the user has not: with the dynamic chunk
/// size at its effective default of 0, TCPX's sender never advances (as its plugin's source reads;
/// every known deployment sets 512 KiB).
pub const TCPX_ENV_DEFAULTS: &[(&str, &str)] = &[("NCCL_DYNAMIC_CHUNK_SIZE", "524288")];

/// Unsets the TCPX settings `open` gave (see crate::env), saying why.
fn take_back(given: &[&'static str], why: &str) {
    for name in given {
        crate::env::unset(name);
        log::info!(target: "tcpxr::init", "{name} unset again: {why}");
    }
}

/// How to open the transport.
pub struct TcpxOptions<'a> {
    /// NCCL_TCPXR_TCPX_LIB: a path or library name; None searches [`DEFAULT_LIBRARIES`].
    pub lib: Option<&'a str>,
    /// NCCL's logger, handed to TCPX's init (None: TCPX logs through tcpxr's log).
    pub logger: ncclDebugLogger_t,
    /// NCCL_TCPXR_IFNAME / NCCL_SOCKET_IFNAME: where tcpxr's own control connections listen. Unset:
    /// on the interface TCPX names as the device, else the first interface NCCL's rules pick.
    /// As (the variable that set it, its value).
    pub ifname: Option<(&'a str, &'a str)>,
}

pub struct TcpxTransport {
    lib: Arc<Lib>,
    devices: Vec<DeviceInfo>,
    /// Per device: whether TCPX takes GPU memory (NCCL_PTR_CUDA) and a CUDA driver is here, so
    /// stripes send from and receive into GPU memory directly.
    gpu_direct: Vec<bool>,
    /// The [`TCPX_ENV_DEFAULTS`] `open` set because they were unset, taken back by
    /// [`TcpxTransport::not_used`].
    env_given: Vec<&'static str>,
    /// Connects abandoned while TCPX's connect was under way, finished by [`Transport::sweep`].
    abandoned: Arc<Abandoned>,
}

impl TcpxTransport {
    /// Loads the library, initialises it and lists its devices one to one. TCPX reads its
    /// settings in its init, so [`TCPX_ENV_DEFAULTS`] that are unset are set just before it (from
    /// plugin's first init, see crate::env), and unset again when `open` fails.
    pub fn open(o: &TcpxOptions) -> Result<TcpxTransport> {
        let lib = Arc::new(load(o.lib)?);
        let mut given = Vec::new();
        for &(name, value) in TCPX_ENV_DEFAULTS {
            if std::env::var_os(name).is_none() {
                crate::env::set(name, value);
                log::info!(target: "tcpxr::init", "{name} unset: set to {value} for TCPX");
                given.push(name);
            }
        }
        match Self::start(lib, o) {
            Ok(t) => Ok(TcpxTransport { env_given: given, ..t }),
            Err(e) => {
                take_back(&given, "TCPX failed to start");
                Err(e)
            }
        }
    }

    /// tcpxr will not use this TCPX after all (NCCL_TCPXR_TRANSPORT=auto falls back to the socket
    /// transport, or it reports no device): the settings `open` gave it are unset again, so the
    /// process's environment is as the user left it.
    pub fn not_used(self) {
        take_back(&self.env_given, "TCPX is not used");
    }

    fn start(lib: Arc<Lib>, o: &TcpxOptions) -> Result<TcpxTransport> {
        lib.init(o.logger)?;
        let n = lib.devices()?;
        let all = ifaces::list().map_err(|e| Error::os("getifaddrs", e))?;
        let mut devices = Vec::with_capacity(n);
        let mut gpu_direct = Vec::with_capacity(n);
        for dev in 0..n {
            let p = lib.properties(dev)?;
            gpu_direct.push(p.ptr_support & NCCL_PTR_CUDA != 0 && crate::gpu::available());
            log::debug!(
                "TCPX device {dev}: {} pci {:?} guid {:#x} speed {} Mb/s ptrSupport {:#x} netDeviceType {} version {:#x}",
                p.name,
                p.pci_path,
                p.guid,
                p.speed_mbps,
                p.ptr_support,
                p.net_device_type,
                p.net_device_version
            );
            devices.push(DeviceInfo {
                ctrl_addr: ctrl_addr(&p.name, &all, o.ifname)?,
                name: p.name,
                pci_path: p.pci_path,
                speed_mbps: p.speed_mbps,
                speed_assumed: false,
                guid: p.guid,
            });
        }
        log::info!(
            target: "tcpxr::init",
            "TCPX plugin {:?} from {}: {n} devices ({})",
            lib.name,
            lib.path,
            devices
                .iter()
                .map(|d| format!("{} control on {}", d.name, d.ctrl_addr))
                .collect::<Vec<_>>()
                .join(", ")
        );
        Ok(TcpxTransport {
            lib,
            devices,
            gpu_direct,
            env_given: Vec::new(),
            abandoned: Arc::new(Abandoned::new()),
        })
    }

    /// The library's path and its net's name.
    pub fn library(&self) -> (&str, &str) {
        (&self.lib.path, &self.lib.name)
    }
}

/// Loads the TCPX library: the one NCCL_TCPXR_TCPX_LIB names (`explicit`), which must load and be
/// a TCPX-ABI plugin, or else the first of [`DEFAULT_LIBRARIES`] that is a GPUDirectTCPX net. The
/// error says what was tried and why each failed (dlerror's reason for a library that does not
/// load).
fn load(explicit: Option<&str>) -> Result<Lib> {
    if let Some(path) = explicit {
        return Lib::load(path, false).map_err(|skip| {
            let (Skip::NotFound(why) | Skip::Refused(why)) = skip;
            Error::system(format!(
                "no TCPX library could be loaded from NCCL_TCPXR_TCPX_LIB={path}: {why}"
            ))
        });
    }
    let mut tried = Vec::new();
    for c in DEFAULT_LIBRARIES {
        match Lib::load(c, true) {
            Ok(lib) => return Ok(lib),
            Err(Skip::NotFound(why)) => tried.push(format!("{c}: {why}")),
            Err(Skip::Refused(why)) => {
                log::info!(target: "tcpxr::init", "not using {c} as TCPX: {why}");
                tried.push(format!("{c}: {why}"));
            }
        }
    }
    Err(Error::system(format!(
        "no TCPX library could be loaded from the default places (NCCL_TCPXR_TCPX_LIB is unset): {}",
        tried.join("; ")
    )))
}

/// The address tcpxr's control listener binds for TCPX device `name`.
fn ctrl_addr(name: &str, all: &[ifaces::Interface], setting: Option<(&str, &str)>) -> Result<IpAddr> {
    let chosen = match setting.map(|(_, spec)| spec) {
        Some(spec) => ifaces::select(all, Some(spec)).into_iter().next(),
        None => all
            .iter()
            .find(|i| i.name == name)
            .cloned()
            .or_else(|| ifaces::select(all, None).into_iter().next()),
    };
    chosen.map(|i| i.addr).ok_or_else(|| {
        Error::invalid_argument(format!(
            "no interface that is up for tcpxr's control connection of TCPX device {name}{}",
            setting
                .map(|(var, spec)| format!(" matches {var}={spec}"))
                .unwrap_or_default()
        ))
    })
}

impl Transport for TcpxTransport {
    fn kind(&self) -> crate::transport::TransportKind {
        crate::transport::TransportKind::Tcpx
    }

    fn devices(&self) -> &[DeviceInfo] {
        &self.devices
    }

    fn movers(&self) -> crate::settings::Movers {
        crate::settings::tcpx_movers(crate::settings::host())
    }

    fn limits(&self) -> Limits {
        Limits {
            max_chunk_bytes: MAX_RECV_BYTES,
            send_slots: MAX_SENDS,
            recv_slots: MAX_RECVS,
        }
    }

    fn listen(&self, dev: usize) -> Result<(InnerHandle, Box<dyn InnerListener>)> {
        let (handle, comm) = self.lib.listen(dev)?;
        Ok((
            handle,
            Box::new(TcpxListener {
                accepting: false,
                lib: self.lib.clone(),
                comm,
                storage: DevHandleStorage::new(),
                gpu_direct: self.gpu_direct[dev],
            }),
        ))
    }

    /// TCPX's v7 connect takes no traffic class (its sockets are its own), so none is applied.
    fn connect(&self, dev: usize, handle: &InnerHandle, _traffic_class: Option<u8>) -> Result<Box<dyn InnerConnector>> {
        Ok(Box::new(TcpxConnector {
            lib: self.lib.clone(),
            dev,
            handle: Box::new(*handle),
            gpu_direct: self.gpu_direct[dev],
            under_way: false,
            abandoned: self.abandoned.clone(),
        }))
    }

    fn sweep(&self) {
        self.abandoned.sweep(&self.lib, false);
    }

    fn drain(&self) {
        self.abandoned.drain(&self.lib, FINAL_SWEEP);
    }
}

struct TcpxListener {
    lib: Arc<Lib>,
    comm: Comm,
    /// Where accept writes the device handle; allocated before the first accept call.
    storage: Box<DevHandleStorage>,
    gpu_direct: bool,
    /// TCPX's accept has been called and has not produced its comm: TCPX's accept thread may be
    /// running, using the listen comm and `storage`.
    accepting: bool,
}

impl InnerListener for TcpxListener {
    fn accept(&mut self) -> Result<Option<Box<dyn InnerRecv>>> {
        let Some(comm) = self.lib.accept(self.comm, &mut self.storage)? else {
            self.accepting = true;
            return Ok(None);
        };
        self.accepting = false;
        // Read once per stripe, here: the ring and pool never move for the comm's life.
        let queue = match UnpackQueue::from_accept(&self.storage) {
            Ok(q) => q,
            Err(e) => {
                let _ = self.lib.close_recv(comm);
                return Err(e);
            }
        };
        // GPU receives go straight to TCPX when the GPU can read its unpack ring.
        let gpu_direct = self.gpu_direct && queue.as_ref().is_some_and(|q| q.on_device());
        Ok(Some(Box::new(TcpxRecv::new(self.lib.clone(), comm, queue, gpu_direct))))
    }
}

impl Drop for TcpxListener {
    /// A listen comm whose accept is under way is left open, with the storage TCPX writes the
    /// device handle into: TCPX's closeListen frees the comm while its accept thread, blocked on
    /// a peer that died or gave up (tcpxr's accept then fails, and NCCL closes), still uses it.
    fn drop(&mut self) {
        if self.accepting {
            log::warn!(
                "closing a tcpx listen comm whose TCPX accept is still under way (its peer gone or \
                 never connected): left open, with its accept thread, rather than freed under it"
            );
            std::mem::forget(std::mem::replace(&mut self.storage, DevHandleStorage::new()));
            return;
        }
        if let Err(e) = self.lib.close_listen(self.comm) {
            log::warn!("{}", e.msg);
        }
    }
}

struct TcpxConnector {
    lib: Arc<Lib>,
    dev: usize,
    /// The peer's handle, boxed so every connect call passes the same buffer: TCPX keeps its
    /// in-progress state inside it.
    handle: Box<InnerHandle>,
    gpu_direct: bool,
    /// TCPX's connect was called and has returned neither a comm nor a failure.
    under_way: bool,
    abandoned: Arc<Abandoned>,
}

impl InnerConnector for TcpxConnector {
    fn poll(&mut self) -> Result<Option<Box<dyn InnerSend>>> {
        self.under_way = false;
        let comm = self.lib.connect(self.dev, &mut self.handle)?;
        self.under_way = comm.is_none();
        Ok(comm.map(|comm| Box::new(TcpxSend::new(self.lib.clone(), comm, self.gpu_direct)) as Box<dyn InnerSend>))
    }
}

impl Drop for TcpxConnector {
    /// A connect dropped while TCPX's is under way (NCCL abandoned it, or the peer is gone) is
    /// left to [`Abandoned`], which closes the comm TCPX makes.
    fn drop(&mut self) {
        if self.under_way {
            let handle = std::mem::replace(&mut self.handle, Box::new([0; INNER_HANDLE_BYTES]));
            self.abandoned.push(self.dev, handle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_keep_receives_within_one_unpack_slice_and_the_16_slots() {
        assert_eq!(MAX_RECV_BYTES, 4 << 20);
        const { assert!(MAX_SENDS <= TCPX_REQUESTS && MAX_RECVS <= TCPX_REQUESTS) };
        assert_eq!(TCPX_REQUESTS, crate::abi::NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH);
    }

    #[test]
    fn a_missing_library_is_a_clear_error() {
        let e = match load(Some("/nonexistent/libnccl-net-tcpx.so")) {
            Err(e) => e,
            Ok(_) => panic!("loaded a library that does not exist"),
        };
        assert!(e.msg.contains("/nonexistent/libnccl-net-tcpx.so"), "{}", e.msg);
    }

    #[test]
    fn control_address_follows_the_device_name_then_nccl_rules() {
        let lo = ifaces::Interface {
            name: "lo".into(),
            addr: "127.0.0.1".parse().unwrap(),
            loopback: true,
        };
        let eth = ifaces::Interface {
            name: "eth1".into(),
            addr: "10.0.0.5".parse().unwrap(),
            loopback: false,
        };
        let all = [lo, eth];
        assert_eq!(ctrl_addr("eth1", &all, None).unwrap().to_string(), "10.0.0.5");
        assert_eq!(ctrl_addr("lo", &all, None).unwrap().to_string(), "127.0.0.1");
        assert_eq!(
            ctrl_addr("eth1", &all, Some(("NCCL_TCPXR_IFNAME", "lo")))
                .unwrap()
                .to_string(),
            "127.0.0.1"
        );
        let e = ctrl_addr("eth1", &all, Some(("NCCL_SOCKET_IFNAME", "ib"))).unwrap_err();
        assert!(e.msg.contains("NCCL_SOCKET_IFNAME=ib"), "{}", e.msg);
    }
}
