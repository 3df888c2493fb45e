//! The inner transport: what tcpxr stripes one NCCL connection over.
//!
//! The contract mirrors what TCPX offers (docs/TCPX.md), so the engine drives every transport
//! the same way: requests complete in FIFO order per connection, only the oldest is tested, sizes are
//! tracked by the engine (never reported by the transport), and a transport may refuse a post when
//! its request slots are full (`Ok(false)`: retry later). Receives may hold their slot after
//! completion until `consumed` (TCPX's bounce pages); the socket transport releases at once.
//!
//! Memory a comm registers is registered on every stripe ([`InnerStripe::register`]); each post
//! carries the stripe's handle for it, or [`InnerMr::NONE`] for memory NCCL never registered (the
//! transport then registers it for that post alone if it needs to). A transport states its limits
//! ([`Limits`]) and the plugin caps chunk size and windows to them.
//!
//! * `socket`: tcpxr's own TCP, one connection per stripe, driven by NCCL's proxy thread and, for
//!   a backlog, by a small process-wide pool of I/O threads.
//! * `tcpx`: Google's GPUDirect-TCPX plugin (or anything with its ABI), loaded at run time.
use crate::error::Result;
use std::fmt;
use std::net::IpAddr;

pub mod socket;
pub mod tcpx;

/// Which inner transport runs: what plugin, nccl_settings, the tuner and config's `auto` settings
/// decide by. Displayed as its name in logs and settings ("socket", "tcpx").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    Socket,
    Tcpx,
}

impl TransportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Socket => "socket",
            TransportKind::Tcpx => "tcpx",
        }
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Size of an inner connection handle carried over tcpxr's control connection (TCPX uses 128).
pub const INNER_HANDLE_BYTES: usize = 128;
pub type InnerHandle = [u8; INNER_HANDLE_BYTES];

/// One device as the transport sees it; the plugin turns it into NCCL properties.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub name: String,
    /// Address tcpxr's own control listener binds to for this device.
    pub ctrl_addr: IpAddr,
    pub pci_path: Option<String>,
    pub speed_mbps: i32,
    /// `speed_mbps` is tcpxr's figure for an interface that reports no link speed (lo, veth), not
    /// a link's nor the user's (NCCL_TCPXR_SPEED_MBPS): the plugin may tell NCCL another
    /// (`nccl_settings::assumed_speed`).
    pub speed_assumed: bool,
    pub guid: u64,
}

/// What kind of memory a buffer is (NCCL's `NCCL_PTR_HOST` / `NCCL_PTR_CUDA`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemKind {
    Host,
    Cuda,
}

/// A stripe's handle for a registered memory range; opaque to everyone but its transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InnerMr(pub usize);

impl InnerMr {
    /// "Not registered with this stripe".
    pub const NONE: InnerMr = InnerMr(0);
}

/// A landed receive's fragments as the GPU sees them: `count` records (NCCL's `loadMeta`) at
/// device address `records`, their `src_off` relative to `bounce`, their `dst_off` to the
/// receive's destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceJob {
    pub records: u64,
    pub count: u32,
    pub bounce: u64,
}

/// The fragments of a landed receive as the CPU sees them, for NCCL's device unpack: records in the
/// inner transport's ring, their `src_off` relative to `bounce` (a device address), `dst_off`
/// relative to the receive's destination. Valid until the receive is consumed.
#[derive(Clone, Copy, Debug)]
pub struct Landed<'a> {
    pub records: &'a [crate::abi::loadMeta],
    pub bounce: u64,
}

/// What an inner transport can take; the plugin caps its settings to these.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest chunk one receive may carry.
    pub max_chunk_bytes: usize,
    /// Send requests one inner connection holds at most (posted and not yet tested done).
    pub send_slots: usize,
    /// Receive requests one inner connection holds at most (posted, done, not yet consumed).
    pub recv_slots: usize,
}

impl Limits {
    pub const NONE: Limits = Limits {
        max_chunk_bytes: usize::MAX,
        send_slots: usize::MAX,
        recv_slots: usize::MAX,
    };
}

/// How far one stripe has got, for a report on a comm that makes no progress.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StripeProgress {
    /// Bytes of the chunks posted to the stripe so far.
    pub posted_bytes: u64,
    /// Bytes of those that have completed (sent, or landed) so far.
    pub done_bytes: u64,
    /// Whether one of the transport's own threads is moving the stripe's bytes right now (rather
    /// than the thread that posts and tests).
    pub with_worker: bool,
}

pub trait Transport: Send + Sync {
    fn kind(&self) -> TransportKind;
    fn devices(&self) -> &[DeviceInfo];
    /// Who moves the stripes (crate::settings's pool rules decide from it). The socket transport
    /// fixes its pool at the first call, which is made at the first listen or connect.
    fn movers(&self) -> crate::settings::Movers;
    /// The I/O pool's threads once [`Transport::movers`] has fixed them; None before, and for a
    /// transport without a pool of its own (TCPX).
    fn pool_threads(&self) -> Option<usize> {
        None
    }
    /// The settings the transport resolved with the pool rules, for plugin's log (none: TCPX).
    fn pool_settings(&self) -> Vec<crate::settings::Line> {
        Vec::new()
    }
    /// Limits the engine must stay inside (chunk size, requests per stripe).
    fn limits(&self) -> Limits {
        Limits::NONE
    }
    /// Opens one inner listener on `dev`; its handle goes to the peer over the control connection.
    fn listen(&self, dev: usize) -> Result<(InnerHandle, Box<dyn InnerListener>)>;
    /// Starts connecting to a peer's inner listener; never blocks. `traffic_class`: NCCL's traffic
    /// class for the communicator (the IP TOS byte), where the transport can apply it.
    fn connect(&self, dev: usize, handle: &InnerHandle, traffic_class: Option<u8>) -> Result<Box<dyn InnerConnector>>;
    /// Called at NCCL's connects, closes and finalize (plugin's sweep of abandoned connects): a
    /// transport finishes here what connectors dropped mid-way left behind (TCPX's connects,
    /// which cannot be cancelled).
    fn sweep(&self) {}
    /// Called at the last communicator's finalize, after which nothing sweeps (NCCL unloads the
    /// plugin): what [`Transport::sweep`] would finish later is finished now, within a bound,
    /// and the rest given up, never a hang.
    fn drain(&self) {}
}

pub trait InnerListener: Send {
    /// Ok(None) until the peer's connection is established.
    fn accept(&mut self) -> Result<Option<Box<dyn InnerRecv>>>;
}

pub trait InnerConnector: Send {
    /// Ok(None) until the connection is established.
    fn poll(&mut self) -> Result<Option<Box<dyn InnerSend>>>;
}

/// Where a stripe's chunks spent their time, summed over the chunks timed so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkTimes {
    pub chunks: u64,
    /// From the post until the last byte had moved (hand-off, the wait for the socket or the
    /// data, the copies).
    pub post_to_done_nanos: u64,
    /// From then until NCCL's thread, testing, saw it done.
    pub done_to_seen_nanos: u64,
}

/// What either end of one stripe offers besides moving bytes; each has a default for a
/// transport that has nothing to say.
pub trait InnerStripe: Send {
    /// Nanoseconds this stripe's I/O has spent moving bytes so far, when the transport knows
    /// (for NCCL_TCPXR_STATS).
    fn io_nanos(&self) -> Option<u64> {
        None
    }
    /// Bytes posted and done on this stripe so far, when the transport counts them (for the stall
    /// report).
    fn progress(&self) -> Option<StripeProgress> {
        None
    }
    /// The stripe's socket, for profiler events; -1 when the transport's sockets are not tcpxr's.
    fn fd(&self) -> std::ffi::c_int {
        -1
    }
    /// Hand-offs to a helper thread so far and the nanoseconds they waited for it to start, when
    /// the transport has them (for NCCL_TCPXR_STATS).
    fn handoffs(&self) -> Option<(u64, u64)> {
        None
    }
    /// A sending stripe's waits for its receiver's grant so far (a window in the transport's own
    /// protocol) and their nanoseconds, when the transport counts them (for NCCL_TCPXR_STATS).
    fn grant_waits(&self) -> Option<(u64, u64)> {
        None
    }
    /// A receiving stripe's window: the times it grew and the largest it reached in bytes, when
    /// the transport's window grows (for NCCL_TCPXR_STATS).
    fn window_growth(&self) -> Option<(u64, u64)> {
        None
    }
    /// How long its chunks took, when the transport times them (for NCCL_TCPXR_STATS).
    fn chunk_times(&self) -> Option<ChunkTimes> {
        None
    }
    /// Bytes of receives posted into bounce memory that this stripe demotes from its reading
    /// core's caches as they land, when the transport does (for NCCL_TCPXR_STATS: shows that
    /// NCCL_TCPXR_BOUNCE_DEMOTE acts).
    fn demoted_bytes(&self) -> Option<u64> {
        None
    }
    /// Registers `len` bytes at `ptr` with this stripe. The default needs no registration.
    fn register(&mut self, _ptr: *mut u8, _len: usize, _kind: MemKind) -> Result<InnerMr> {
        Ok(InnerMr::NONE)
    }
    /// Undoes `register`. Posts using `mr` may still be outstanding when the comm closes (NCCL's
    /// deregMr before its close at an abort, or the comm's own at its close): a transport whose
    /// threads still read the memory then keeps the registration until they are done with it.
    fn deregister(&mut self, _mr: InnerMr) -> Result<()> {
        Ok(())
    }
    /// Whether this stripe takes GPU memory as it is: TCPX sends straight from it (through the
    /// NIC) and lands receives in bounce memory of its own, handing their fragment records to the
    /// engine's unpack kernel ([`InnerRecv::device_job`]). Otherwise the engine copies GPU chunks
    /// through pinned staging (send) or receives them into pinned bounce memory of its own.
    fn gpu_direct(&self) -> bool {
        false
    }
    /// Whether testing fails once the peer is gone (its connection closed or reset). TCPX's test
    /// does not: its helper threads end without a word, and their requests never complete; the
    /// engine then watches its control connection instead (engine/liveness.rs).
    fn reports_peer_loss(&self) -> bool {
        true
    }
}

/// The sending end of one stripe.
pub trait InnerSend: InnerStripe {
    /// Posts `len` bytes at `ptr`, inside the range `mr` registered (or [`InnerMr::NONE`]); the
    /// memory stays valid until the send completes. Ok(false): no request slot free now, try
    /// again later.
    fn post(&mut self, ptr: *const u8, len: usize, mr: InnerMr) -> Result<bool>;
    /// Tests the oldest posted send; Ok(true) retires it.
    fn test_oldest(&mut self) -> Result<bool>;
}

/// The receiving end of one stripe.
pub trait InnerRecv: InnerStripe {
    /// Posts a receive of exactly `len` bytes into `ptr` (inside `mr`'s range, or
    /// [`InnerMr::NONE`]). Ok(false): no slot free now.
    fn post(&mut self, ptr: *mut u8, len: usize, mr: InnerMr) -> Result<bool>;
    /// As `post`, into the engine's own pinned bounce memory, which the copy engine reads into
    /// the GPU as soon as the receive has landed: the transport may leave the bytes where that
    /// read is cheapest (the socket transport demotes them from its core's caches, with
    /// NCCL_TCPXR_BOUNCE_DEMOTE). Bounce memory a kernel reads is posted with `post`.
    fn post_bounce(&mut self, ptr: *mut u8, len: usize) -> Result<bool> {
        self.post(ptr, len, InnerMr::NONE)
    }
    /// Tests the oldest posted receive; Ok(true) when it has landed: for host memory, its bytes
    /// are in place (a transport with a bounce pool has unpacked them by then); for GPU memory
    /// posted under [`InnerStripe::gpu_direct`], [`InnerRecv::device_job`] says what is left to
    /// place. The slot stays held until `consumed`.
    fn test_oldest(&mut self) -> Result<bool>;
    /// For the GPU-memory receive `test_oldest` just reported landed: the fragment records the
    /// unpack kernel must place, or None when the bytes landed in place.
    fn device_job(&mut self) -> Result<Option<DeviceJob>> {
        Ok(None)
    }
    /// NCCL's device unpack: from now on a landed receive's bytes stay in the bounce pool, for
    /// NCCL's kernel to place from the records [`InnerRecv::landed`] gives, until `consumed`;
    /// the transport places nothing itself. A transport that lands every receive in place
    /// ignores this.
    fn keep_records(&mut self) {}
    /// The device address the records of this stripe count from (its bounce pool), when its
    /// receives land in one.
    fn bounce_base(&self) -> Option<u64> {
        None
    }
    /// Under [`InnerRecv::keep_records`]: the records of the receive `test_oldest` just reported
    /// landed, or None when it landed in place.
    fn landed(&self) -> Option<Landed<'_>> {
        None
    }
    /// Releases the oldest completed receive's slot (and, for TCPX, its bounce pages).
    fn consumed(&mut self) -> Result<()>;
}
