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
mod ffi;
mod sigpipe;
pub mod unpack;

use crate::abi::NCCL_PTR_CUDA;
use crate::abi::{ncclDebugLogger_t, NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH, NET_UNPACK_MAX_SLICE_SIZE};
use crate::error::{Error, Result};
use crate::net::ifaces;
use crate::transport::{
    DeviceInfo, DeviceJob, InnerConnector, InnerHandle, InnerListener, InnerMr, InnerRecv, InnerSend, InnerStripe,
    Limits, MemKind, Transport, INNER_HANDLE_BYTES,
};
use ffi::{Comm, DevHandleStorage, Lib, Mr, Posted, Request, Skip, UnpackQueue};
use std::collections::VecDeque;
use std::ffi::c_int;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use unpack::{CpuScatter, Job, Unavailable, Unpack};

/// Request slots of one TCPX comm (`MAX_REQUESTS`).
pub const TCPX_REQUESTS: usize = 16;
/// Sends a stripe keeps outstanding: 12 of the 16 slots, the headroom UCCL found necessary.
pub const MAX_SENDS: usize = 12;
/// Receives a stripe holds (posted, in flight, or done and not yet consumed): all 16 slots.
pub const MAX_RECVS: usize = 16;
/// Largest receive: NCCL's unpack slice (`NET_UNPACK_MAX_SLICE_SIZE`), 2048 records of 4 KiB pages
/// with 2x slack; beyond it TCPX fail-stops the process.
pub const MAX_RECV_BYTES: usize = NET_UNPACK_MAX_SLICE_SIZE;
/// TCPX registers CUDA memory only from a 4 KiB boundary (it exports whole pages as a dmabuf).
const CUDA_PAGE: usize = 4096;

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

/// How long an abandoned TCPX connect is called again before tcpxr gives up on it. TCPX's own
/// connect fails by itself against a host that answers nothing: each of its sockets is connected
/// with a refused connection retried for 20 s and a timed-out one 3 times (misc/socket_utils.cc),
/// each try up to the kernel's SYN timeout (about 2 minutes at Linux's default 6 SYN retries), so
/// about 6.5 minutes at most. What is still under way well past that never ends: a peer that took
/// the connection and then went silent leaves TCPX's connect thread in a receive without timeout
/// or keepalive. Ten minutes is past the first with room to spare.
const GIVE_UP_AFTER: Duration = Duration::from_secs(600);

/// How long the last finalize calls abandoned connects again before it gives up on the rest
/// ([`Transport::drain`]): nothing sweeps after it, and a finalize must not hang. A connect whose
/// peer is tearing down too ends at once (its listener is closed, or its accept answered).
const FINAL_SWEEP: Duration = Duration::from_secs(2);

/// Set in a test's environment (milliseconds), replaces [`GIVE_UP_AFTER`], so a test can see an
/// abandoned connect given up. Never set in production.
pub const TEST_GIVE_UP_MS: &str = "TCPXR_TEST_TCPX_GIVE_UP_MS";

/// TCPX connects tcpxr dropped while TCPX's connect was under way (its device, and the handle
/// buffer TCPX keeps its state in). TCPX's connect cannot be cancelled: its thread goes on, and the
/// comm it makes (its sockets, and TCPX's memory) is freed only by closeSend once a connect call
/// has returned it. So each is called again at every sweep until TCPX returns the comm, which is
/// closed then, or fails (TCPX frees a failed connect's state itself), or until it has been under
/// way past the deadline ([`GIVE_UP_AFTER`]), or the last finalize ([`FINAL_SWEEP`]): then tcpxr
/// gives up on it with one WARN.
struct Abandoned {
    list: std::sync::Mutex<Vec<AbandonedConnect>>,
    give_up_after: Duration,
    /// Numbers the abandoned connects, to name them in the log.
    count: std::sync::atomic::AtomicU64,
}

struct AbandonedConnect {
    number: u64,
    dev: usize,
    handle: Box<InnerHandle>,
    since: Instant,
}

impl Abandoned {
    fn new() -> Abandoned {
        let test_ms = std::env::var(TEST_GIVE_UP_MS).ok().and_then(|v| v.trim().parse().ok());
        Abandoned {
            list: std::sync::Mutex::new(Vec::new()),
            give_up_after: test_ms.map_or(GIVE_UP_AFTER, Duration::from_millis),
            count: Default::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<AbandonedConnect>> {
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, dev: usize, handle: Box<InnerHandle>) {
        let number = self.count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        log::info!("abandoned TCPX connect #{number} (device {dev}) left under way: called again at later sweeps");
        self.lock().push(AbandonedConnect {
            number,
            dev,
            handle,
            since: Instant::now(),
        });
    }

    /// Calls each abandoned connect once; those under way past the deadline, or all when
    /// `give_up_all`, are given up.
    fn sweep(&self, lib: &Lib, give_up_all: bool) {
        self.lock().retain_mut(|c| match lib.connect(c.dev, &mut c.handle) {
            Ok(None) if give_up_all || c.since.elapsed() > self.give_up_after => {
                let when = if give_up_all {
                    "at the last finalize"
                } else {
                    "past its deadline"
                };
                c.give_up(when);
                false
            }
            Ok(None) => true,
            Ok(Some(comm)) => {
                match lib.close_send(comm) {
                    Ok(()) => log::info!(
                        "closed the TCPX comm of abandoned connect #{}, once TCPX returned it",
                        c.number
                    ),
                    Err(e) => log::warn!("closing the TCPX comm of abandoned connect #{}: {}", c.number, e.msg),
                }
                false
            }
            Err(e) => {
                log::info!("abandoned TCPX connect #{} ended: {}", c.number, e.msg);
                false
            }
        });
    }

    /// The last finalize: sweeps until the list is empty or [`FINAL_SWEEP`] has passed, then gives
    /// up on what is left. Nothing sweeps after it (NCCL unloads the plugin), so a comm TCPX
    /// returns later would never be closed.
    fn drain(&self, lib: &Lib, within: Duration) {
        let start = Instant::now();
        loop {
            let last = start.elapsed() >= within;
            self.sweep(lib, last);
            if last || self.lock().is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl AbandonedConnect {
    /// Stops calling this connect. Its TCPX comm, if TCPX ever makes it, is leaked, with the
    /// thread and sockets TCPX keeps for it: TCPX hands a connect's comm out only through a
    /// connect call that returns it, and closeSend is the only way to free it, so nothing of it
    /// can be closed from here. The handle buffer is leaked too: TCPX keeps its connect state's
    /// address in it (connect_args), and though its 3.1.9 source gives its thread a copy of the
    /// handle, Google's binary builds are unverified; 128 bytes per give-up is the safe side.
    fn give_up(&mut self, when: &str) {
        log::warn!(
            "gave up on abandoned TCPX connect #{} (device {}) {when}, still under way after {:.1} s: \
             TCPX never returned its comm, which it may still make, with its thread and sockets: leaked",
            self.number,
            self.dev,
            self.since.elapsed().as_secs_f64()
        );
        std::mem::forget(std::mem::replace(&mut self.handle, Box::new([0; INNER_HANDLE_BYTES])));
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

/// Registers a range on one TCPX comm: CUDA ranges widened to whole 4 KiB pages.
fn register(lib: &Lib, comm: Comm, ptr: *mut u8, len: usize, kind: MemKind) -> Result<Mr> {
    match kind {
        MemKind::Host => lib.reg_mr(comm, ptr, len, kind),
        MemKind::Cuda => {
            let (start, len) = page_range(ptr as usize, len);
            lib.reg_mr(comm, start as *mut u8, len, kind)
        }
    }
}

/// The whole 4 KiB pages holding `ptr .. ptr + len`: TCPX refuses CUDA memory that does not start
/// on a page (it exports the range as a dmabuf).
fn page_range(ptr: usize, len: usize) -> (usize, usize) {
    let start = ptr & !(CUDA_PAGE - 1);
    let end = (ptr + len).div_ceil(CUDA_PAGE) * CUDA_PAGE;
    (start, end - start)
}

fn kind_of(ptr: *const u8) -> MemKind {
    if crate::gpu::is_device_memory(ptr) {
        MemKind::Cuda
    } else {
        MemKind::Host
    }
}

/// How a stripe treats a post TCPX refused.
#[derive(Default)]
struct Busy {
    refusals: u64,
}

impl Busy {
    /// Result 3 is what TCPX says when its 16 slots are taken ("unable to allocate requests"): busy,
    /// retry later, never an error for NCCL. It is also what most other TCPX failures return, so
    /// with nothing of ours held (no slot can be taken) it is an error.
    fn judge(&mut self, op: &str, rc: c_int, held: usize) -> Result<bool> {
        if rc != ffi::RC_INTERNAL {
            return Err(ffi::error(op, rc));
        }
        if held == 0 {
            return Err(ffi::error(
                &format!("{op} with no request of this stripe outstanding (so not slot exhaustion)"),
                rc,
            ));
        }
        self.refusals += 1;
        if self.refusals == 1 {
            log::warn!(
                "TCPX refused {op} with result 3 while this stripe held {held} requests; treating it as \
                 'unable to allocate requests' and retrying"
            );
        }
        Ok(false)
    }
}

/// The handle a post uses: the stripe's registration of the message's memory, or one made for
/// this post alone (returned as the second value, to deregister when the request is done).
fn handle_for(lib: &Lib, comm: Comm, ptr: *mut u8, len: usize, mr: InnerMr) -> Result<(Mr, Option<Mr>)> {
    if mr != InnerMr::NONE {
        return Ok((Mr::from_usize(mr.0), None));
    }
    let m = register(lib, comm, ptr, len.max(1), kind_of(ptr))?;
    Ok((m, Some(m)))
}

fn drop_adhoc(lib: &Lib, comm: Comm, adhoc: Option<Mr>) -> Result<()> {
    match adhoc {
        Some(m) => lib.dereg_mr(comm, m),
        None => Ok(()),
    }
}

/// Registrations a stripe was asked to drop while a request of its used them, and deregisters
/// once none does: TCPX's deregMr of CUDA memory closes the dmabuf fd its helper threads send a
/// request in flight from (net_tcpx.cc, tcpxDeregMr and the helper's gpudirectTCPXPostSend).
#[derive(Default)]
struct Deferred(Vec<Mr>);

impl Deferred {
    /// Deregisters `mr` now, or once no request in `in_use` uses it.
    fn deregister(&mut self, lib: &Lib, comm: Comm, mr: Mr, mut in_use: impl Iterator<Item = Mr>) -> Result<()> {
        if in_use.any(|m| m == mr) {
            self.0.push(mr);
            return Ok(());
        }
        lib.dereg_mr(comm, mr)
    }

    /// Deregisters those no request in `in_use` uses any more (all of them after the close).
    fn settle(&mut self, lib: &Lib, comm: Comm, in_use: &[Mr]) -> Result<()> {
        let mut first = Ok(());
        self.0.retain(|m| {
            if in_use.contains(m) {
                return true;
            }
            if let Err(e) = lib.dereg_mr(comm, *m) {
                if first.is_ok() {
                    first = Err(e);
                }
            }
            false
        });
        first
    }

    /// [`settle`](Self::settle) on the data path, once a request has completed: a failed
    /// deregistration of other memory is NCCL's to hear of at its own deregMr, not a reason to
    /// lose the completion just reported (it is logged, and the registration is dropped).
    fn settle_after_completion(&mut self, lib: &Lib, comm: Comm, in_use: &[Mr]) {
        if let Err(e) = self.settle(lib, comm, in_use) {
            log::warn!(
                "a deferred TCPX deregistration failed after a request completed: {}",
                e.msg
            );
        }
    }
}

/// The tag a post carries: the stripe's post count. TCPX ignores tags and matches FIFO; tcpxr
/// relies on nothing but that order. The count only makes TCPX's logs easier to follow.
fn tag(n: u64) -> c_int {
    (n % (c_int::MAX as u64)) as c_int
}

struct SendHeld {
    req: Request,
    /// The memory handle it was posted with (its stripe's registration, or `adhoc`).
    mr: Mr,
    adhoc: Option<Mr>,
}

/// The sending end of a stripe: one TCPX send comm.
pub struct TcpxSend {
    lib: Arc<Lib>,
    comm: Comm,
    held: VecDeque<SendHeld>,
    posted: u64,
    busy: Busy,
    gpu_direct: bool,
    deferred: Deferred,
}

impl TcpxSend {
    fn new(lib: Arc<Lib>, comm: Comm, gpu_direct: bool) -> TcpxSend {
        TcpxSend {
            lib,
            comm,
            held: VecDeque::with_capacity(TCPX_REQUESTS),
            posted: 0,
            busy: Busy::default(),
            gpu_direct,
            deferred: Deferred::default(),
        }
    }

    fn in_use(&self) -> Vec<Mr> {
        self.held.iter().map(|h| h.mr).collect()
    }
}

impl InnerStripe for TcpxSend {
    fn gpu_direct(&self) -> bool {
        self.gpu_direct
    }

    /// TCPX's test reports nothing of a peer its helper threads lost.
    fn reports_peer_loss(&self) -> bool {
        false
    }

    fn register(&mut self, ptr: *mut u8, len: usize, kind: MemKind) -> Result<InnerMr> {
        Ok(InnerMr(register(&self.lib, self.comm, ptr, len, kind)?.as_usize()))
    }

    fn deregister(&mut self, mr: InnerMr) -> Result<()> {
        if mr == InnerMr::NONE {
            return Ok(());
        }
        let in_use = self.held.iter().map(|h| h.mr);
        self.deferred
            .deregister(&self.lib, self.comm, Mr::from_usize(mr.0), in_use)
    }
}

impl InnerSend for TcpxSend {
    fn post(&mut self, ptr: *const u8, len: usize, mr: InnerMr) -> Result<bool> {
        if self.held.len() >= MAX_SENDS {
            return Ok(false);
        }
        let (mh, adhoc) = handle_for(&self.lib, self.comm, ptr as *mut u8, len, mr)?;
        match self.lib.isend(self.comm, ptr, len, tag(self.posted), mh) {
            Posted::Yes(req) => {
                self.held.push_back(SendHeld { req, mr: mh, adhoc });
                self.posted += 1;
                Ok(true)
            }
            Posted::NoRequest => {
                drop_adhoc(&self.lib, self.comm, adhoc)?;
                Ok(false)
            }
            Posted::Refused(rc) => {
                drop_adhoc(&self.lib, self.comm, adhoc)?;
                self.busy.judge("isend", rc, self.held.len())
            }
        }
    }

    /// A send request frees its TCPX slot when test reports it done.
    fn test_oldest(&mut self) -> Result<bool> {
        let Some(oldest) = self.held.front() else {
            return Err(Error::internal("test on a TCPX stripe with no send outstanding"));
        };
        match self.lib.test(oldest.req) {
            Ok(false) => Ok(false),
            Ok(true) => {
                let done = self.held.pop_front().unwrap();
                drop_adhoc(&self.lib, self.comm, done.adhoc)?;
                if !self.deferred.0.is_empty() {
                    let in_use = self.in_use();
                    self.deferred.settle_after_completion(&self.lib, self.comm, &in_use);
                }
                Ok(true)
            }
            Err(rc) => Err(ffi::error("test of a send", rc)),
        }
    }
}

impl Drop for TcpxSend {
    /// Closes, then deregisters what requests still in flight used: TCPX's close joins the
    /// helper threads that send from those registrations, and its deregMr never reads the comm.
    fn drop(&mut self) {
        if let Err(e) = self.lib.close_send(self.comm) {
            log::warn!("{}", e.msg);
        }
        for h in std::mem::take(&mut self.held) {
            let _ = drop_adhoc(&self.lib, self.comm, h.adhoc);
        }
        let _ = self.deferred.settle(&self.lib, self.comm, &[]);
    }
}

struct RecvHeld {
    req: Request,
    /// The memory handle it was posted with (its stripe's registration, or `adhoc`).
    mr: Mr,
    dst: usize,
    len: usize,
    kind: MemKind,
    /// Queue slot of its records: the stripe's receive count modulo 16.
    slot: usize,
    adhoc: Option<Mr>,
    /// Tested done and unpacked; waiting for irecvConsumed.
    landed: bool,
}

/// The receiving end of a stripe: one TCPX receive comm, its unpack queue and its unpacker.
pub struct TcpxRecv {
    lib: Arc<Lib>,
    comm: Comm,
    queue: Option<UnpackQueue>,
    unpacker: Box<dyn Unpack>,
    held: VecDeque<RecvHeld>,
    /// Kind of each registration of this stripe, to know where a receive's destination is.
    kinds: Vec<(InnerMr, MemKind)>,
    posted: u64,
    busy: Busy,
    /// GPU receives are posted at their destination and placed by the engine's unpack kernel.
    gpu_direct: bool,
    /// The records of the GPU receive `test_oldest` reported landed last, for `device_job`.
    landed_job: Option<DeviceJob>,
    /// NCCL's device unpack: landed bytes stay in TCPX's pool for NCCL's kernel; nothing is placed
    /// here, and [`InnerRecv::landed`] gives the records of ring slot `landed_slot`.
    keep_records: bool,
    landed_slot: Option<usize>,
    deferred: Deferred,
}

impl TcpxRecv {
    fn new(lib: Arc<Lib>, comm: Comm, queue: Option<UnpackQueue>, gpu_direct: bool) -> TcpxRecv {
        let unpacker: Box<dyn Unpack> = match &queue {
            Some(q) if !q.bounce_on_host => Box::new(Unavailable(
                "TCPX's bounce pool is in GPU memory and the tcpx transport does not hand TCPX's records \
                 to the GPU unpack kernel yet; only receives TCPX lands in place (host memory) can complete"
                    .into(),
            )),
            _ => Box::new(CpuScatter),
        };
        TcpxRecv {
            lib,
            comm,
            queue,
            unpacker,
            held: VecDeque::with_capacity(TCPX_REQUESTS),
            kinds: Vec::new(),
            posted: 0,
            busy: Busy::default(),
            gpu_direct,
            landed_job: None,
            keep_records: false,
            landed_slot: None,
            deferred: Deferred::default(),
        }
    }

    fn in_use(&self) -> Vec<Mr> {
        self.held.iter().map(|h| h.mr).collect()
    }

    /// Places a completed receive's bytes from the bounce pool into its destination.
    fn unpack(&mut self, i: usize) -> Result<()> {
        let Some(queue) = &self.queue else {
            return Ok(()); // no unpack device: TCPX received in place
        };
        let r = &self.held[i];
        let records = queue.records(r.slot)?;
        if records.is_empty() {
            // TCPX lands receives into host memory in place and publishes no records.
            if r.kind == MemKind::Host {
                return Ok(());
            }
            return Err(Error::internal(format!(
                "TCPX published no unpack records for a {}-byte receive into GPU memory",
                r.len
            )));
        }
        if r.kind != MemKind::Host {
            // Receives into GPU memory are placed by the engine's unpack kernel (gpu_direct), or
            // the engine lands them in host memory of its own first; the CPU never places them.
            if !self.gpu_direct {
                return Err(Error::internal(
                    "a TCPX receive straight into GPU memory on a stripe whose unpack ring the GPU cannot read",
                ));
            }
            self.landed_job = queue.device_job(r.slot, r.len)?;
            return Ok(());
        }
        let job = Job {
            records,
            bounce: queue.bounce,
            dst: r.dst as *mut u8,
            len: r.len,
        };
        self.unpacker.unpack(&job)
    }
}

impl InnerStripe for TcpxRecv {
    fn gpu_direct(&self) -> bool {
        self.gpu_direct
    }

    /// TCPX's test reports nothing of a peer its helper threads lost.
    fn reports_peer_loss(&self) -> bool {
        false
    }

    fn register(&mut self, ptr: *mut u8, len: usize, kind: MemKind) -> Result<InnerMr> {
        let mr = InnerMr(register(&self.lib, self.comm, ptr, len, kind)?.as_usize());
        self.kinds.push((mr, kind));
        Ok(mr)
    }

    fn deregister(&mut self, mr: InnerMr) -> Result<()> {
        if mr == InnerMr::NONE {
            return Ok(());
        }
        self.kinds.retain(|(m, _)| *m != mr);
        let in_use = self.held.iter().map(|h| h.mr);
        self.deferred
            .deregister(&self.lib, self.comm, Mr::from_usize(mr.0), in_use)
    }
}

impl InnerRecv for TcpxRecv {
    fn device_job(&mut self) -> Result<Option<DeviceJob>> {
        Ok(self.landed_job.take())
    }

    fn keep_records(&mut self) {
        self.keep_records = true;
    }

    fn bounce_base(&self) -> Option<u64> {
        self.queue.as_ref().map(|q| q.bounce as u64)
    }

    fn landed(&self) -> Option<crate::transport::Landed<'_>> {
        let (queue, slot) = (self.queue.as_ref()?, self.landed_slot?);
        let records = queue.records(slot).ok()?;
        (!records.is_empty()).then_some(crate::transport::Landed {
            records,
            bounce: queue.bounce as u64,
        })
    }

    fn post(&mut self, ptr: *mut u8, len: usize, mr: InnerMr) -> Result<bool> {
        if len > MAX_RECV_BYTES {
            return Err(Error::internal(format!(
                "a {len}-byte TCPX receive: tcpxr keeps every receive at or below {MAX_RECV_BYTES} bytes"
            )));
        }
        if self.held.len() >= MAX_RECVS {
            return Ok(false);
        }
        let kind = match self.kinds.iter().find(|(m, _)| *m == mr) {
            Some((_, k)) => *k,
            None => kind_of(ptr),
        };
        let (mh, adhoc) = handle_for(&self.lib, self.comm, ptr, len, mr)?;
        match self.lib.irecv(self.comm, ptr, len, tag(self.posted), mh) {
            Posted::Yes(req) => {
                self.held.push_back(RecvHeld {
                    req,
                    mr: mh,
                    dst: ptr as usize,
                    len,
                    kind,
                    slot: (self.posted % NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH as u64) as usize,
                    adhoc,
                    landed: false,
                });
                self.posted += 1;
                Ok(true)
            }
            Posted::NoRequest => {
                drop_adhoc(&self.lib, self.comm, adhoc)?;
                Ok(false)
            }
            Posted::Refused(rc) => {
                drop_adhoc(&self.lib, self.comm, adhoc)?;
                self.busy.judge("irecv", rc, self.held.len())
            }
        }
    }

    /// Tests the oldest receive that has not landed; once TCPX says done, its fragments are
    /// unpacked before this returns true.
    fn test_oldest(&mut self) -> Result<bool> {
        let Some(i) = self.held.iter().position(|r| !r.landed) else {
            return Err(Error::internal("test on a TCPX stripe with no receive outstanding"));
        };
        match self.lib.test(self.held[i].req) {
            Ok(false) => Ok(false),
            Ok(true) => {
                if self.keep_records {
                    // NCCL's kernel places the bytes; the records are checked when the engine
                    // copies them into NCCL's ring, and the pages stay until NCCL consumes.
                    self.queue.as_ref().map(|q| q.records(self.held[i].slot)).transpose()?;
                    self.landed_slot = Some(self.held[i].slot);
                } else {
                    self.unpack(i)?;
                }
                self.held[i].landed = true;
                Ok(true)
            }
            Err(rc) => Err(ffi::error("test of a receive", rc)),
        }
    }

    /// irecvConsumed on the oldest landed receive: FIFO, and only after its unpack finished.
    fn consumed(&mut self) -> Result<()> {
        match self.held.front() {
            Some(r) if r.landed => {}
            _ => {
                return Err(Error::internal(
                    "consumed on a TCPX stripe whose oldest receive has not landed",
                ))
            }
        }
        let r = self.held.front().unwrap();
        self.lib.irecv_consumed(self.comm, r.req)?;
        let r = self.held.pop_front().unwrap();
        drop_adhoc(&self.lib, self.comm, r.adhoc)?;
        if !self.deferred.0.is_empty() {
            let in_use = self.in_use();
            self.deferred.settle_after_completion(&self.lib, self.comm, &in_use);
        }
        Ok(())
    }
}

impl Drop for TcpxRecv {
    /// Closes, then deregisters, as [`TcpxSend`]'s drop.
    fn drop(&mut self) {
        if let Err(e) = self.lib.close_recv(self.comm) {
            log::warn!("{}", e.msg);
        }
        for h in std::mem::take(&mut self.held) {
            let _ = drop_adhoc(&self.lib, self.comm, h.adhoc);
        }
        let _ = self.deferred.settle(&self.lib, self.comm, &[]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_3_is_busy_while_requests_are_held_and_an_error_otherwise() {
        crate::log::install_fallback();
        let mut b = Busy::default();
        assert_eq!(b.judge("isend", 3, 5), Ok(false));
        assert_eq!(b.judge("isend", 3, 16), Ok(false));
        assert_eq!(b.refusals, 2);
        // The first refusal is logged, the second only counted.
        crate::testlog::expect("TCPX refused isend with result 3 while this stripe held 5 requests");
        assert!(crate::testlog::claim_all("TCPX refused isend").is_empty());
        assert!(b.judge("isend", 3, 0).is_err());
        assert_eq!(
            b.judge("irecv", 6, 4).unwrap_err().code,
            crate::abi::ncclResult_t::ncclRemoteError
        );
    }

    #[test]
    fn limits_keep_receives_within_one_unpack_slice_and_the_16_slots() {
        assert_eq!(MAX_RECV_BYTES, 4 << 20);
        const { assert!(MAX_SENDS <= TCPX_REQUESTS && MAX_RECVS <= TCPX_REQUESTS) };
        assert_eq!(TCPX_REQUESTS, NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH);
    }

    #[test]
    fn cuda_ranges_are_widened_to_whole_4k_pages() {
        assert_eq!(page_range(0x10000, 4096), (0x10000, 4096));
        assert_eq!(page_range(0x10001, 10), (0x10000, 4096));
        assert_eq!(page_range(0x10ff0, 0x20), (0x10000, 0x2000));
        assert_eq!(page_range(0x20000, 1 << 20), (0x20000, 1 << 20));
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
