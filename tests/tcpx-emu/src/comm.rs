//! Comms, requests and memory handles of the emulator, and the I/O threads that move the bytes.
//!
//! One TCP connection per comm, one thread per comm (TCPX has helper threads too: bytes move
//! without test being called). A message on the wire is an 8-byte size and the payload; the
//! receiving thread cuts the payload into fragments in the bounce pool and writes their records
//! into the comm's `netUnpackMeta` ring.
//!
//! What a failed connection looks like, as in TCPX (net_tcpx.cc). TCPX carries a request's
//! control message (its size and socket) on a control socket that `test` itself drives
//! (tcpxCommProgress), and the payload on data sockets that its helper threads serve
//! (persistentSocketThread). A failure the control socket meets is `test`'s result:
//! tcpxSystemError (2), never tcpxRemoteError. A failure a helper thread meets (a send that the
//! peer reset, a receive that finds the connection closed) only ends that thread, with a WARN:
//! its requests never complete and `test` reports nothing of it, until the control socket fails
//! for a later request (the sender sends the control message of a request posted after the
//! failure; the receiver reads the one of any later receive). The emulator's 8-byte size stands
//! for the control message and its payload for the data sockets: a failure at the size is
//! reported by `test` (2); one in the payload ends the thread with a WARN, and `test` reports it
//! (2) only once such a later request exists ([`Shared::lost`]).
use crate::abi::*;
use crate::gpu::{Gpu, HostMem, Reader};
use crate::pool::{Frag, LandFail, Lander, Mode, Pool, BATCH};
use crate::{emu, fail, warn, Fail, R, RC_BUSY, RC_SYSTEM, RC_USAGE};
use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::{c_int, c_void};
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const HANDLE_MAGIC: [u8; 4] = *b"TXEM";
const STATE_MAGIC: [u8; 4] = *b"TXCS";
const HELLO_BYTES: usize = 16;
const COMM_MAGIC: u32 = 0x4d4d_4f43;
const LISTEN_MAGIC: u32 = 0x4e54_534c;
const REQ_MAGIC: u32 = 0x5145_5251;
const MR_MAGIC: u32 = 0x524d_454d;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A failed socket operation, as TCPX reports it: tcpxSystemError (2), the peer's close included.
fn remote(e: impl std::fmt::Display) -> Fail {
    Fail {
        rc: RC_SYSTEM,
        msg: format!("connection closed by remote peer: {e}"),
    }
}

/// TCPX's connect retries a refused connection this long before it fails: RETRY_REFUSED_TIMES
/// (2e4) tries SLEEP_INT (1 ms) apart (misc/socket_utils.cc, connectAddressInternal).
const REFUSED_RETRY: Duration = Duration::from_secs(20);

/// What a listener's accept answers each connect with once it has taken it (TCPX's accept
/// thread sends its connection state, CONN_OK, before the connector's connect can complete).
const ACCEPTED: u8 = 1;

/// The comms connect and accept handed out and close has not taken back (their address and id),
/// so deregMr can tell an open comm from a closed one without reading a freed one.
fn open_comms() -> &'static Mutex<HashMap<usize, u64>> {
    static OPEN: OnceLock<Mutex<HashMap<usize, u64>>> = OnceLock::new();
    OPEN.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Hands a new comm to the caller, recording it as open.
pub fn hand_out(c: Arc<Comm>) -> *mut c_void {
    let id = c.id;
    let p = Arc::into_raw(c) as *mut c_void;
    open_comms().lock().unwrap().insert(p as usize, id);
    p
}

/// The comm at `p` is being closed.
pub fn closing(p: *mut c_void) {
    open_comms().lock().unwrap().remove(&(p as usize));
}

/// The id of the open comm at `p`, if `p` is one.
pub fn open_id(p: *mut c_void) -> Option<u64> {
    open_comms().lock().unwrap().get(&(p as usize)).copied()
}

/// Whether the comm with id `id` is open.
pub fn is_open_id(id: u64) -> bool {
    open_comms().lock().unwrap().values().any(|&v| v == id)
}

// --- listen / accept / connect ----------------------------------------------------------------

#[repr(C)]
pub struct Listen {
    magic: u32,
    listener: TcpListener,
    nonce: u64,
    calls: u64,
    pending: Vec<(TcpStream, Vec<u8>)>,
}

impl Listen {
    /// A listening socket on loopback; its address and a nonce go into the handle.
    pub fn bind(h: &mut [u8; HANDLE_BYTES]) -> R<Box<Listen>> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| Fail {
            rc: 2,
            msg: format!("listen: {e}"),
        })?;
        listener.set_nonblocking(true).map_err(remote)?;
        let port = listener.local_addr().map_err(remote)?.port();
        let nonce = NEXT_ID.fetch_add(1, Ordering::Relaxed) ^ (std::process::id() as u64) << 32 ^ 0x5eed;
        h.fill(0);
        h[0..4].copy_from_slice(&HANDLE_MAGIC);
        h[4..6].copy_from_slice(&port.to_le_bytes());
        h[6..10].copy_from_slice(&Ipv4Addr::LOCALHOST.octets());
        h[16..24].copy_from_slice(&nonce.to_le_bytes());
        Ok(Box::new(Listen {
            magic: LISTEN_MAGIC,
            listener,
            nonce,
            calls: 0,
            pending: Vec::new(),
        }))
    }

    /// The listen comm `p` names (its magic checked), or an error for NULL or a foreign pointer.
    ///
    /// # Safety
    /// `p` is NULL or points to at least a `Listen`'s worth of readable memory (a listen comm
    /// this library handed out and NCCL has not closed, or any other live object of that size);
    /// the caller holds no other reference to that listen comm.
    pub unsafe fn from_ptr<'a>(p: *mut c_void) -> R<&'a mut Listen> {
        // SAFETY: read only when non-NULL and aligned, so (the caller's promise) readable; `magic`
        // is the first field of the repr(C) Listen.
        if p.is_null() || p as usize % 8 != 0 || unsafe { (*(p as *const Listen)).magic } != LISTEN_MAGIC {
            return fail(RC_USAGE, format!("{p:p} is not a listen comm"));
        }
        // SAFETY: the magic matches, so (the caller's promise) a live listen comm nobody else
        // references.
        Ok(unsafe { &mut *(p as *mut Listen) })
    }

    /// None on the first call (TCPX's accept is asynchronous), and until a peer has presented
    /// this listen's nonce.
    pub fn accept(&mut self) -> R<Option<Arc<Comm>>> {
        self.calls += 1;
        if self.calls == 1 {
            return Ok(None);
        }
        loop {
            match self.listener.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(true).map_err(remote)?;
                    self.pending.push((s, Vec::new()));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return fail(2, format!("accept: {e}")),
            }
        }
        let mut i = 0;
        while i < self.pending.len() {
            let (s, hello) = &mut self.pending[i];
            let mut buf = [0u8; HELLO_BYTES];
            let want = HELLO_BYTES - hello.len();
            match s.read(&mut buf[..want]) {
                Ok(0) => {
                    self.pending.remove(i);
                    continue;
                }
                Ok(n) => hello.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.pending.remove(i);
                    continue;
                }
            }
            if hello.len() == HELLO_BYTES {
                let (s, hello) = self.pending.remove(i);
                if hello[0..4] == HANDLE_MAGIC && hello[8..16] == self.nonce.to_le_bytes() {
                    // TCPX's accept thread sends its connection state to the connector
                    // (AcceptSocketWithRetryInternal); the connector's connect completes only
                    // once it has it. One byte into a fresh connection's empty buffer.
                    (&s).write_all(&[ACCEPTED]).map_err(remote)?;
                    return Ok(Some(Comm::start(s, false)?));
                }
                continue;
            }
            i += 1;
        }
        Ok(None)
    }
}

/// A connect in progress; its address lives inside the caller's handle buffer.
struct Connecting {
    buffer: usize,
    addr: SocketAddr,
    hello: [u8; HELLO_BYTES],
    /// Connected, hello sent, waiting for the listener's accept to answer; None while the
    /// listener refuses the connection.
    stream: Option<TcpStream>,
    started: Instant,
}

impl Connecting {
    /// Connects and sends the hello, unless the listener refuses: TCPX retries a refused connect
    /// for [`REFUSED_RETRY`], then fails with 2.
    fn try_connect(&mut self) -> R<()> {
        match TcpStream::connect_timeout(&self.addr, Duration::from_secs(5)) {
            Ok(mut stream) => {
                stream.write_all(&self.hello).map_err(remote)?;
                stream.set_nonblocking(true).map_err(remote)?;
                self.stream = Some(stream);
                Ok(())
            }
            Err(e) if e.kind() == ErrorKind::ConnectionRefused && self.started.elapsed() < REFUSED_RETRY => Ok(()),
            Err(e) => fail(RC_SYSTEM, format!("Connect to {} failed : {e}", self.addr)),
        }
    }

    /// The connection once the listener's accept has answered it. TCPX's connect thread waits
    /// for that answer (a blocking receive, socketWait), so a connect completes only after the
    /// peer's NCCL called accept; a listener that closes first is 2 ("Connection closed by
    /// remote peer"), and one that neither answers nor closes is waited for without end.
    fn progress(&mut self) -> R<Option<TcpStream>> {
        if self.stream.is_none() {
            self.try_connect()?;
        }
        let Some(stream) = &self.stream else {
            return Ok(None);
        };
        let mut answer = [0u8; 1];
        loop {
            return match (&*stream).read(&mut answer) {
                Ok(0) => fail(
                    RC_SYSTEM,
                    format!(
                        "Connection closed by remote peer {} before its accept answered",
                        self.addr
                    ),
                ),
                Ok(_) if answer[0] == ACCEPTED => Ok(self.stream.take()),
                Ok(_) => fail(
                    RC_SYSTEM,
                    format!("peer {} answered the connect with {}", self.addr, answer[0]),
                ),
                Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(None),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => Err(remote(e)),
            };
        }
    }
}

fn live_connects() -> &'static Mutex<HashSet<usize>> {
    static LIVE: OnceLock<Mutex<HashSet<usize>>> = OnceLock::new();
    LIVE.get_or_init(|| Mutex::new(HashSet::new()))
}

/// Keeps a connect's state until the next call, its address in the handle buffer (as TCPX keeps
/// `connect_args` there).
fn park(h: &mut [u8; HANDLE_BYTES], st: Box<Connecting>) {
    let state = Box::into_raw(st) as usize;
    live_connects().lock().unwrap().insert(state);
    h[64..68].copy_from_slice(&STATE_MAGIC);
    h[72..80].copy_from_slice(&(state as u64).to_le_bytes());
}

/// None until the listener's accept has answered (see [`Connecting::progress`]), the state kept
/// in the handle buffer between calls; then the comm. A failure frees the state (TCPX frees its
/// connect's arguments when it returns the error).
///
/// # Safety
/// `handle` points to the caller's live 128-byte handle buffer, which no one else touches during
/// the call; a buffer the emulator stored a connect state in must not have been freed or reused.
pub unsafe fn connect(handle: *mut [u8; HANDLE_BYTES]) -> R<Option<Arc<Comm>>> {
    // SAFETY: the caller's live handle buffer, untouched by others during the call.
    let h = unsafe { &mut *handle };
    if h[0..4] != HANDLE_MAGIC {
        return fail(RC_USAGE, "connect with a handle the emulator's listen did not write");
    }
    let mut st = if h[64..68] == STATE_MAGIC {
        let state = u64::from_le_bytes(h[72..80].try_into().unwrap()) as usize;
        if !live_connects().lock().unwrap().remove(&state) {
            return fail(RC_USAGE, "connect with a handle whose in-progress connect is gone");
        }
        // SAFETY: `state` was in the live set, so it is a Box<Connecting> made by `park` and not
        // yet taken back (removing it from the set makes this the only take).
        let st = unsafe { Box::from_raw(state as *mut Connecting) };
        h[64..80].fill(0);
        if st.buffer != handle as usize {
            return fail(
                RC_USAGE,
                "connect called again with a different handle buffer than the one it started with (TCPX keeps its in-progress state inside that buffer)",
            );
        }
        st
    } else {
        let port = u16::from_le_bytes([h[4], h[5]]);
        let ip = Ipv4Addr::new(h[6], h[7], h[8], h[9]);
        let mut hello = [0u8; HELLO_BYTES];
        hello[0..4].copy_from_slice(&HANDLE_MAGIC);
        hello[8..16].copy_from_slice(&h[16..24]);
        let mut st = Box::new(Connecting {
            buffer: handle as usize,
            addr: SocketAddr::from((ip, port)),
            hello,
            stream: None,
            started: Instant::now(),
        });
        // TCPX's first call only starts its connect thread.
        st.try_connect()?;
        park(h, st);
        return Ok(None);
    };
    match st.progress()? {
        Some(stream) => Ok(Some(Comm::start(stream, true)?)),
        None => {
            park(h, st);
            Ok(None)
        }
    }
}

// --- memory handles ---------------------------------------------------------------------------

#[repr(C)]
pub struct Mr {
    magic: u32,
    /// The id of the comm it was registered on.
    pub comm: u64,
    cuda: bool,
    ptr: usize,
    len: usize,
    /// Requests using it whose bytes the comm's thread has not finished moving.
    uses: Arc<AtomicU64>,
}

impl Mr {
    pub fn new(c: &Comm, ptr: usize, size: c_int, type_: c_int) -> R<Box<Mr>> {
        let Ok(len) = usize::try_from(size) else {
            return fail(RC_USAGE, format!("regMr of {size} bytes"));
        };
        let cuda = match type_ {
            NCCL_PTR_HOST => false,
            NCCL_PTR_CUDA => {
                if ptr % PAGE != 0 {
                    return fail(RC_BUSY, format!("data not aligned: {ptr:#x} vs {PAGE}"));
                }
                if !crate::gpu::available() {
                    return fail(RC_BUSY, "regMr of CUDA memory on a host without a CUDA driver");
                }
                true
            }
            other => return fail(RC_BUSY, format!("unknown mem type {other}")),
        };
        c.counts.lock().unwrap().regs += 1;
        Ok(Box::new(Mr {
            magic: MR_MAGIC,
            comm: c.id,
            cuda,
            ptr,
            len,
            uses: Arc::default(),
        }))
    }

    /// The handle deregMr was given, on whatever comm (TCPX's deregMr does not look at it).
    ///
    /// # Safety
    /// `p` is NULL or points to at least an `Mr`'s worth of readable memory (a handle regMr
    /// returned and deregMr has not freed, or any other live object of that size).
    pub unsafe fn from_ptr_any<'a>(p: *mut c_void) -> R<&'a Mr> {
        if p.is_null() {
            return fail(RC_USAGE, "mhandle is null");
        }
        // SAFETY: read only when aligned (non-NULL: checked), so (the caller's promise) readable;
        // `magic` is the first field of the repr(C) Mr.
        if p as usize % 8 != 0 || unsafe { (*(p as *const Mr)).magic } != MR_MAGIC {
            return fail(RC_USAGE, format!("{p:p} is not a memory handle"));
        }
        // SAFETY: the magic matches, so (the caller's promise) a live Mr from regMr.
        Ok(unsafe { &*(p as *const Mr) })
    }

    /// The handle isend/irecv/deregMr were given, which must be registered on `c`.
    ///
    /// # Safety
    /// `p` is NULL or points to at least an `Mr`'s worth of readable memory (a handle regMr
    /// returned and deregMr has not freed, or any other live object of that size).
    pub unsafe fn from_ptr<'a>(p: *mut c_void, c: &Comm) -> R<&'a Mr> {
        if p.is_null() {
            return fail(RC_USAGE, "mhandle is null");
        }
        // SAFETY: read only when aligned (non-NULL: checked), so (the caller's promise) readable;
        // `magic` is the first field of the repr(C) Mr.
        if p as usize % 8 != 0 || unsafe { (*(p as *const Mr)).magic } != MR_MAGIC {
            return fail(RC_USAGE, format!("{p:p} is not a memory handle"));
        }
        // SAFETY: the magic matches, so (the caller's promise) a live Mr from regMr.
        let mr = unsafe { &*(p as *const Mr) };
        if mr.comm != c.id {
            return fail(
                RC_USAGE,
                format!(
                    "a memory handle registered on comm {} used on comm {}: memory must be registered on every comm",
                    mr.comm, c.id
                ),
            );
        }
        Ok(mr)
    }

    /// Frees a handle `from_ptr` accepted; its magic is cleared first, so a later use of the
    /// freed handle is caught while the allocator has not reused the memory.
    ///
    /// # Safety
    /// `p` is a handle `from_ptr` accepted, freed once, and not used by anyone afterwards.
    pub unsafe fn free(p: *mut c_void) {
        let mr = p as *mut Mr;
        // SAFETY: the caller's promise: a live Box<Mr> from regMr (from_ptr accepted it), freed
        // once and used by nobody afterwards.
        unsafe {
            (*mr).magic = 0;
            drop(Box::from_raw(mr));
        }
    }

    fn covers(&self, ptr: usize, len: usize) -> bool {
        ptr >= self.ptr && ptr.checked_add(len).is_some_and(|e| e <= self.ptr + self.len)
    }
}

// --- requests and comms -----------------------------------------------------------------------

#[repr(C)]
pub struct Req {
    magic: u32,
    seq: AtomicU64,
    comm: *const Comm,
}

// SAFETY: the only raw pointer, `comm`, points to the Comm that owns this request and outlives it;
// a Comm may be used from any thread (it is Sync).
unsafe impl Send for Req {}
// SAFETY: `comm` is only read (as `&Comm`, which is Sync); `seq` is atomic.
unsafe impl Sync for Req {}

impl Req {
    /// The request `p` names (its magic checked), or an error for NULL or a foreign pointer.
    ///
    /// # Safety
    /// `p` is NULL or points to at least a `Req`'s worth of readable memory (a request of a comm
    /// that is still open, or any other live object of that size).
    pub unsafe fn from_ptr<'a>(p: *mut c_void) -> R<&'a Req> {
        if p.is_null() {
            return fail(RC_BUSY, "test called with NULL request");
        }
        // SAFETY: read only when aligned (non-NULL: checked), so (the caller's promise) readable;
        // `magic` is the first field of the repr(C) Req.
        if p as usize % 8 != 0 || unsafe { (*(p as *const Req)).magic } != REQ_MAGIC {
            return fail(RC_BUSY, format!("{p:p} is not a request"));
        }
        // SAFETY: the magic matches, so (the caller's promise) a request of an open comm.
        Ok(unsafe { &*(p as *const Req) })
    }

    pub fn comm(&self) -> &Comm {
        // SAFETY: a request lives inside its comm, so the comm is alive while the request is.
        unsafe { &*self.comm }
    }
}

struct Task {
    seq: u64,
    ptr: usize,
    len: usize,
    cuda: bool,
    /// Its memory handle's count of requests in flight, given back once the bytes have moved.
    uses: Arc<AtomicU64>,
}

impl Task {
    fn moved(&self) {
        self.uses.fetch_sub(1, Ordering::AcqRel);
    }
}

struct Shared {
    queue: Mutex<VecDeque<Task>>,
    wake: Condvar,
    /// Requests whose bytes are all sent / all received (into the pool, records published).
    finished: AtomicU64,
    /// When each of the last QUEUE_DEPTH sends finished (by seq % QUEUE_DEPTH), for
    /// TCPX_EMU_TX_COMPLETION_MS.
    finished_at: Mutex<Vec<Option<Instant>>>,
    /// Requests posted so far (the comm's tail), for the thread to read.
    posted: AtomicU64,
    /// A failure of the control path, which test reports (see the module's comment).
    failure: OnceLock<(c_int, String)>,
    /// The thread ended on a failure of the data path at this point: test reports it once a
    /// request numbered this or later is posted (its control message then fails).
    lost: OnceLock<u64>,
    /// The thread is running (it moves bytes of requests in flight).
    running: AtomicBool,
    stop: AtomicBool,
    /// Pool pages of each completed, not yet consumed receive, by ring slot.
    pages: Mutex<Vec<Vec<u32>>>,
    max_records: AtomicU64,
}

#[derive(Default)]
struct Counts {
    /// Oldest held request, oldest not yet reported done by test, next to post.
    head: u64,
    reported: u64,
    tail: u64,
    posts: u64,
    max_held: u64,
    refused: u64,
    bad_tests: u64,
    bad_consumes: u64,
    max_bytes: u64,
    bytes: u64,
    /// regMr calls on this comm.
    regs: u64,
    /// deregMr of a handle while a request using it was in flight on the running thread.
    bad_deregs: u64,
    /// Posts of CUDA memory (sent from, or received into, GPU memory directly).
    cuda_posts: u64,
}

/// The unpack queue of a receive comm: its `netUnpackMeta` ring and the device handle that
/// points at it and at the pool.
struct RecvMem {
    /// The ring as the CPU writes it.
    meta: *mut UnpackMeta,
    /// The `unpackNetDeviceHandle`: host memory in host mode, device memory in the GPU modes.
    handle: usize,
    /// GPU modes: the ring's memory and the GPU holding the handle.
    gpu: Option<(HostMem, Arc<Gpu>)>,
}

// SAFETY: the ring and the handle are allocations owned by this value (freed once, by Drop), usable
// from any thread.
unsafe impl Send for RecvMem {}
// SAFETY: the ring is written by the comm's I/O thread only (one slot per receive) and read by the
// consumer after the release-published count.
unsafe impl Sync for RecvMem {}

impl RecvMem {
    fn new(pool: &Pool) -> R<RecvMem> {
        let layout = std::alloc::Layout::new::<UnpackMeta>();
        let Some(gpu) = pool.gpu() else {
            // SAFETY: a zeroed allocation of UnpackMeta's layout (all-zero is valid).
            let meta = unsafe { std::alloc::alloc_zeroed(layout) } as *mut UnpackMeta;
            if meta.is_null() {
                return fail(2, "out of memory for the unpack ring");
            }
            let handle = Box::into_raw(Box::new(UnpackHandle {
                meta,
                bounce_buf: pool.base() as *mut c_void,
                head: u64::MAX,
            })) as usize;
            return Ok(RecvMem {
                meta,
                handle,
                gpu: None,
            });
        };
        // As TCPX: the ring in pinned host memory mapped into the device, the handle in device
        // memory, both made in the emulator's own context (gpu.rs), so accept queues no work in
        // the caller's context; the handle's write is waited for before accept returns.
        let err = |m: String| Fail { rc: 1, msg: m };
        let ring = HostMem::new(&gpu, layout.size(), true, 0).map_err(err)?;
        let h = UnpackHandle {
            meta: ring.dev as *mut UnpackMeta,
            bounce_buf: pool.base() as *mut c_void,
            head: u64::MAX,
        };
        // SAFETY: h is a plain 24-byte struct.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                &h as *const UnpackHandle as *const u8,
                std::mem::size_of::<UnpackHandle>(),
            )
        };
        let handle = gpu.write_handle(bytes).map_err(err)? as usize;
        Ok(RecvMem {
            meta: ring.host as *mut UnpackMeta,
            handle,
            gpu: Some((ring, gpu)),
        })
    }

    fn write(&self, slot: usize, i: usize, rec: LoadMeta) {
        // SAFETY: slot < 16 and i < 2048 (checked by the caller); the slot belongs to the receive
        // being filled, which nobody reads before its count is published.
        unsafe { std::ptr::write(std::ptr::addr_of_mut!((*self.meta).mem[slot][i]), rec) };
    }

    fn publish(&self, slot: usize, count: u64) {
        // SAFETY: cnt[slot] is an aligned u64 of the live ring; the release store orders the
        // records before it, as TCPX's release fence does.
        unsafe { AtomicU64::from_ptr(std::ptr::addr_of_mut!((*self.meta).cnt[slot])).store(count, Ordering::Release) };
    }
}

impl Drop for RecvMem {
    fn drop(&mut self) {
        match &self.gpu {
            // The ring's memory goes with the HostMem.
            Some((_, gpu)) => gpu.free_handle(self.handle as u64),
            None => {
                // SAFETY: both were allocated in new with these layouts and are freed once.
                unsafe {
                    std::alloc::dealloc(self.meta as *mut u8, std::alloc::Layout::new::<UnpackMeta>());
                    drop(Box::from_raw(self.handle as *mut UnpackHandle));
                }
            }
        }
    }
}

#[repr(C)]
pub struct Comm {
    magic: u32,
    pub id: u64,
    send: bool,
    slots: usize,
    reqs: Box<[Req]>,
    counts: Mutex<Counts>,
    shared: Arc<Shared>,
    stream: Arc<TcpStream>,
    thread: Mutex<Option<JoinHandle<()>>>,
    recv: Option<Arc<RecvMem>>,
    pool: Option<Arc<Pool>>,
    closed: AtomicBool,
}

impl Comm {
    fn start(stream: TcpStream, send: bool) -> R<Arc<Comm>> {
        let e = emu()?;
        stream.set_nonblocking(false).map_err(remote)?;
        stream.set_nodelay(true).map_err(remote)?;
        if e.socket_buffer > 0 {
            set_buffers(&stream, e.socket_buffer).map_err(remote)?;
        }
        let stream = Arc::new(stream);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let (pool, recv) = if send {
            (None, None)
        } else {
            let pool = e.pool()?;
            let mem = Arc::new(RecvMem::new(&pool)?);
            (Some(pool), Some(mem))
        };
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
            finished: AtomicU64::new(0),
            finished_at: Mutex::new(vec![None; QUEUE_DEPTH]),
            posted: AtomicU64::new(0),
            failure: OnceLock::new(),
            lost: OnceLock::new(),
            running: AtomicBool::new(true),
            stop: AtomicBool::new(false),
            pages: Mutex::new(vec![Vec::new(); QUEUE_DEPTH]),
            max_records: AtomicU64::new(0),
        });
        let thread = {
            let (sh, st, mem, pool) = (shared.clone(), stream.clone(), recv.clone(), pool.clone());
            let seed = e.seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            std::thread::Builder::new()
                .name(format!("tcpx-emu-{}{id}", if send { "tx" } else { "rx" }))
                .spawn(move || {
                    let r = match (&mem, &pool) {
                        (Some(mem), Some(pool)) => recv_loop(&sh, &st, mem, pool, seed),
                        _ => send_loop(&sh, &st),
                    };
                    sh.running.store(false, Ordering::Release);
                    match r {
                        Ok(()) => {}
                        Err(_) if sh.stop.load(Ordering::Acquire) => {}
                        Err(Stop::Ctrl(f)) => {
                            let _ = sh.failure.set((f.rc, f.msg));
                        }
                        Err(Stop::Data { fail, report_from }) => {
                            // As a TCPX helper thread (persistentSocketThread returns when
                            // taskProgress fails): a WARN, and nothing for test to report.
                            warn(&format!(
                                "{} thread of comm {id}: {}; its requests in flight never complete, and test reports nothing until a later request's control message fails",
                                if send { "send" } else { "receive" },
                                fail.msg
                            ));
                            let _ = sh.lost.set(report_from);
                        }
                    }
                })
                .map_err(|e| Fail {
                    rc: 2,
                    msg: format!("thread: {e}"),
                })?
        };
        let slots = e.slots;
        Ok(Arc::new_cyclic(|me| Comm {
            magic: COMM_MAGIC,
            id,
            send,
            slots,
            reqs: (0..slots)
                .map(|_| Req {
                    magic: REQ_MAGIC,
                    seq: AtomicU64::new(u64::MAX),
                    comm: me.as_ptr(),
                })
                .collect(),
            counts: Mutex::new(Counts::default()),
            shared,
            stream,
            thread: Mutex::new(Some(thread)),
            recv,
            pool,
            closed: AtomicBool::new(false),
        }))
    }

    /// The send or receive comm `p` names (its magic checked), or an error for NULL or a foreign
    /// pointer.
    ///
    /// # Safety
    /// `p` is NULL or points to at least a `Comm`'s worth of readable memory (a comm connect or
    /// accept returned and NCCL has not closed, or any other live object of that size).
    pub unsafe fn from_ptr<'a>(p: *mut c_void) -> R<&'a Comm> {
        // SAFETY: read only when non-NULL and aligned, so (the caller's promise) readable; `magic`
        // is the first field of the repr(C) Comm.
        if p.is_null() || p as usize % 8 != 0 || unsafe { (*(p as *const Comm)).magic } != COMM_MAGIC {
            return fail(RC_USAGE, format!("{p:p} is not a send or receive comm"));
        }
        // SAFETY: the magic matches, so (the caller's promise) a comm that is still open.
        Ok(unsafe { &*(p as *const Comm) })
    }

    pub fn device_handle(&self) -> DevHandle {
        DevHandle {
            netDeviceType: NCCL_NET_DEVICE_UNPACK,
            netDeviceVersion: NCCL_NET_DEVICE_UNPACK_VERSION,
            handle: self.recv.as_ref().map_or(0, |m| m.handle) as *mut c_void,
            size: std::mem::size_of::<UnpackHandle>(),
            needsProxyProgress: 1,
        }
    }

    /// What test reports of a failed connection (see the module's comment).
    fn broken(&self) -> R<()> {
        if let Some((rc, msg)) = self.shared.failure.get() {
            return fail(*rc, msg.clone());
        }
        if let Some(&from) = self.shared.lost.get() {
            if self.shared.posted.load(Ordering::Acquire) > from {
                return fail(
                    RC_SYSTEM,
                    format!(
                        "connection closed by remote peer: the control message of request {from} of comm {} could not be {}",
                        self.id,
                        if self.send { "sent" } else { "received" }
                    ),
                );
            }
        }
        Ok(())
    }

    /// deregMr of `mr` on this open comm: flagged while a request using it is in flight on the
    /// running thread (TCPX closes the dmabuf fd its helper threads send from; tcpxClose joins
    /// them, so a handle is deregistered safely after the comm's close).
    pub fn deregistering(&self, mr: &Mr) {
        let uses = mr.uses.load(Ordering::Acquire);
        if uses > 0 && self.shared.running.load(Ordering::Acquire) {
            self.counts.lock().unwrap().bad_deregs += 1;
            warn(&format!(
                "deregMr of a memory handle that {uses} request(s) in flight on comm {} use while its thread runs: TCPX would close the buffer's dmabuf fd under its helper threads (close the comm first)",
                self.id
            ));
        }
    }

    /// Whether send `seq`, whose bytes have all gone, is reported done yet: TCPX reports a send
    /// once the kernel's completion for its last byte arrived (after the peer's acknowledgement),
    /// which TCPX_EMU_TX_COMPLETION_MS stands for.
    fn completion_due(&self, seq: u64) -> bool {
        let delay = emu().map_or(Duration::ZERO, |e| e.tx_completion);
        if !self.send || delay.is_zero() {
            return true;
        }
        let at = self.shared.finished_at.lock().unwrap()[(seq % QUEUE_DEPTH as u64) as usize];
        at.is_some_and(|t| t.elapsed() >= delay)
    }

    /// isend / irecv: a request in the next free slot, or 3 when all are held.
    pub fn post(&self, ptr: usize, size: c_int, mr: &Mr) -> R<*const Req> {
        let Ok(len) = usize::try_from(size) else {
            return fail(RC_USAGE, format!("a size of {size} bytes"));
        };
        if len > 0 && !mr.covers(ptr, len) {
            return fail(
                RC_USAGE,
                format!(
                    "data {ptr:#x}+{len} lies outside its memory handle {:#x}+{}",
                    mr.ptr, mr.len
                ),
            );
        }
        // No failure is reported here: TCPX's isend and irecv only take a request slot.
        let mut c = self.counts.lock().unwrap();
        if c.tail - c.head >= self.slots as u64 {
            c.refused += 1;
            // TCPX WARNs every time; once per comm is enough to read, the count keeps the rest.
            let msg = if c.refused == 1 {
                format!(
                    "unable to allocate requests ({} held; further refusals on comm {} are only counted)",
                    self.slots, self.id
                )
            } else {
                String::new()
            };
            return fail(RC_BUSY, msg);
        }
        let seq = c.tail;
        c.tail += 1;
        c.posts += 1;
        c.cuda_posts += mr.cuda as u64;
        c.max_held = c.max_held.max(c.tail - c.head);
        c.max_bytes = c.max_bytes.max(len as u64);
        c.bytes += len as u64;
        let req = &self.reqs[(seq % self.slots as u64) as usize];
        req.seq.store(seq, Ordering::Relaxed);
        mr.uses.fetch_add(1, Ordering::AcqRel);
        self.shared.queue.lock().unwrap().push_back(Task {
            seq,
            ptr,
            len,
            cuda: mr.cuda,
            uses: mr.uses.clone(),
        });
        self.shared.posted.store(c.tail, Ordering::Release);
        self.shared.wake.notify_one();
        Ok(req as *const Req)
    }

    /// test: only the oldest request not yet reported done may be tested.
    pub fn test(&self, req: &Req) -> R<bool> {
        let seq = req.seq.load(Ordering::Relaxed);
        let mut c = self.counts.lock().unwrap();
        if c.reported == c.tail || seq != c.reported {
            c.bad_tests += 1;
            return fail(
                RC_BUSY,
                format!(
                    "test called with invalid request: request {seq} of comm {} is not the oldest in flight ({})",
                    self.id, c.reported
                ),
            );
        }
        if self.shared.finished.load(Ordering::Acquire) > seq && self.completion_due(seq) {
            c.reported += 1;
            if self.send {
                c.head += 1; // a send frees its slot here ("no IsendConsumed")
            }
            return Ok(true);
        }
        drop(c);
        self.resend_control()?;
        self.broken()?;
        Ok(false)
    }

    /// With TCPX_EMU_SIGPIPE=1, test on a send comm whose thread stopped on a failed connection
    /// sends the control message again from the calling thread, without MSG_NOSIGNAL, as TCPX's
    /// test sends its kept control messages at every call: the thread's failed send already took
    /// the reset's error, so this one meets a closed socket (EPIPE, and SIGPIPE on the caller).
    fn resend_control(&self) -> R<()> {
        let stopped = self.shared.failure.get().is_some() || self.shared.lost.get().is_some();
        if !self.send || !stopped || !emu().is_ok_and(|e| e.sigpipe) {
            return Ok(());
        }
        let ctrl = [0u8; 8];
        // SAFETY: a live 8-byte buffer; the fd is the comm's stream, open until close.
        let n = unsafe {
            libc::send(
                self.stream.as_raw_fd(),
                ctrl.as_ptr() as *const c_void,
                ctrl.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            return fail(
                RC_SYSTEM,
                format!(
                    "test of comm {}: the control message sent again from the calling thread failed: {}",
                    self.id,
                    std::io::Error::last_os_error()
                ),
            );
        }
        Ok(())
    }

    /// irecvConsumed: the oldest completed receive, and only it; its pages are recycled now.
    pub fn consumed(&self, req: &Req) -> R<()> {
        if self.send {
            warn("irecvConsumed called for a send request");
            return Ok(());
        }
        let seq = req.seq.load(Ordering::Relaxed);
        let mut c = self.counts.lock().unwrap();
        if c.head == c.reported || seq != c.head {
            c.bad_consumes += 1;
            return fail(
                RC_BUSY,
                format!(
                    "irecvConsumed called with invalid request {seq} of comm {}: expected {} (consumes go oldest first, after test said done)",
                    self.id, c.head
                ),
            );
        }
        let pages = std::mem::take(&mut self.shared.pages.lock().unwrap()[(seq % QUEUE_DEPTH as u64) as usize]);
        if let Some(pool) = &self.pool {
            pool.recycle(&pages);
        }
        c.head += 1;
        Ok(())
    }

    /// Stops the thread, gives back every page still held, and records the counters.
    pub fn close(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.shared.stop.store(true, Ordering::Release);
        let _ = self.stream.shutdown(Shutdown::Both);
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.lock().unwrap().take() {
            let _ = t.join();
        }
        if let Some(pool) = &self.pool {
            for pages in self.shared.pages.lock().unwrap().iter_mut() {
                pool.recycle(&std::mem::take(pages));
            }
        }
        let c = self.counts.lock().unwrap();
        if let Ok(e) = emu() {
            e.record(&format!(
                "tcpx-emu pid={} comm={} kind={} posts={} max_held={} refused={} bad_tests={} bad_consumes={} max_bytes={} max_records={} bytes={} regs={} cuda_posts={} bad_deregs={}",
                std::process::id(),
                self.id,
                if self.send { "send" } else { "recv" },
                c.posts,
                c.max_held,
                c.refused,
                c.bad_tests,
                c.bad_consumes,
                c.max_bytes,
                self.shared.max_records.load(Ordering::Relaxed),
                c.bytes,
                c.regs,
                c.cuda_posts,
                c.bad_deregs
            ));
        }
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        self.close();
    }
}

// --- the I/O threads --------------------------------------------------------------------------

/// Why a comm's thread stopped (see the module's comment).
enum Stop {
    /// On the control path: test reports it.
    Ctrl(Fail),
    /// On the data path: a WARN; test reports it once request `report_from` or a later one exists.
    Data { fail: Fail, report_from: u64 },
}

impl From<Fail> for Stop {
    fn from(f: Fail) -> Stop {
        Stop::Ctrl(f)
    }
}

fn next_task(sh: &Shared) -> Option<Task> {
    let mut q = sh.queue.lock().unwrap();
    loop {
        if sh.stop.load(Ordering::Acquire) {
            return None;
        }
        if let Some(t) = q.pop_front() {
            return Some(t);
        }
        q = sh.wake.wait(q).unwrap();
    }
}

/// send(2) with MSG_NOSIGNAL: a closed peer is an error, never SIGPIPE; with TCPX_EMU_SIGPIPE=1
/// without it, as TCPX sends.
fn send_all(stream: &TcpStream, mut buf: &[u8]) -> R<()> {
    let flags = if emu().is_ok_and(|e| e.sigpipe) {
        0
    } else {
        libc::MSG_NOSIGNAL
    };
    while !buf.is_empty() {
        // SAFETY: buf is a live slice; the fd is the stream's.
        let n = unsafe { libc::send(stream.as_raw_fd(), buf.as_ptr() as *const c_void, buf.len(), flags) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(remote(e));
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}

fn send_loop(sh: &Shared, stream: &TcpStream) -> Result<(), Stop> {
    let mut reader = None;
    while let Some(t) = next_task(sh) {
        // The control message: a failure here is test's to report.
        send_all(stream, &(t.len as u64).to_le_bytes())?;
        let payload = if t.cuda {
            send_from_gpu(stream, &t, &mut reader)
        } else if t.len > 0 {
            // SAFETY: the caller keeps ptr..ptr+len valid until test reports the send done, which
            // happens only after this task finishes (TCPX's contract, as NCCL's).
            send_all(stream, unsafe { std::slice::from_raw_parts(t.ptr as *const u8, t.len) })
        } else {
            Ok(())
        };
        match payload {
            // The data path: the sender's control messages of every request posted so far went out
            // already (test drives them as soon as a request is posted).
            Err(fail) if fail.rc == RC_SYSTEM => {
                return Err(Stop::Data {
                    fail,
                    report_from: sh.posted.load(Ordering::Acquire),
                })
            }
            Err(f) => return Err(Stop::Ctrl(f)),
            Ok(()) => {}
        }
        t.moved();
        sh.finished_at.lock().unwrap()[(t.seq % QUEUE_DEPTH as u64) as usize] = Some(Instant::now());
        sh.finished.fetch_add(1, Ordering::Release);
    }
    Ok(())
}

/// Sends `t.len` bytes of GPU memory: read in the emulator's own context of the buffer's device
/// (gpu.rs `Reader`), a chunk copied while the one before it is sent.
fn send_from_gpu(stream: &TcpStream, t: &Task, reader: &mut Option<Reader>) -> R<()> {
    if t.len == 0 {
        return Ok(());
    }
    let gpu_err = |m: String| Fail { rc: 1, msg: m };
    let e = emu()?;
    if e.mode() == Mode::Host {
        return fail(1, "a send from CUDA memory in host mode");
    }
    let ordinal =
        crate::gpu::ordinal_of(t.ptr as u64).map_err(|m| gpu_err(format!("a send from {:#x}: {m}", t.ptr)))?;
    if reader.as_ref().is_none_or(|r| r.ordinal() != ordinal) {
        *reader = Some(Reader::new(e.gpu_of(ordinal)?).map_err(gpu_err)?);
    }
    let r = reader.as_mut().unwrap();
    let chunk = |k: usize| (k * Reader::CHUNK, (t.len - k * Reader::CHUNK).min(Reader::CHUNK));
    let chunks = t.len.div_ceil(Reader::CHUNK);
    r.start(0, t.ptr as u64, chunk(0).1).map_err(gpu_err)?;
    for k in 0..chunks {
        if k + 1 < chunks {
            // Buffer (k+1) % 2 held chunk k-1, which is sent already.
            let (off, n) = chunk(k + 1);
            r.start((k + 1) % 2, (t.ptr + off) as u64, n).map_err(gpu_err)?;
        }
        send_all(stream, r.finish(k % 2, chunk(k).1).map_err(gpu_err)?)?;
    }
    Ok(())
}

/// xorshift64*: the fragment sizes and offsets, reproducible from TCPX_EMU_SEED.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Fragment lengths: three in four a whole page, else 1..=4096 bytes (at a random offset inside
/// its page). About 1170 fragments for 4 MiB, far more than 2048 for 8 MiB.
fn fragment_len(rng: &mut Rng) -> usize {
    let r = rng.next();
    if r % 4 != 0 {
        PAGE
    } else {
        1 + ((r >> 8) % PAGE as u64) as usize
    }
}

fn recv_loop(sh: &Shared, stream: &TcpStream, mem: &RecvMem, pool: &Pool, seed: u64) -> Result<(), Stop> {
    let mut rng = Rng(seed | 1);
    // A pool in device memory is written by copies in the emulator's context (pool.rs).
    let mut lander = match (pool.mode(), pool.gpu()) {
        (Mode::Gpu, Some(g)) => Some(Lander::new(&g).map_err(|m| Fail { rc: 1, msg: m })?),
        _ => None,
    };
    // Gives a failed receive's pages back, once no copy of ours still writes them.
    let abort = |lander: &mut Option<Lander>, pages: &[u32]| {
        if let Some(l) = lander.as_mut() {
            let _ = l.landed();
        }
        pool.recycle(pages);
    };
    let mut taken = Vec::with_capacity(BATCH);
    let mut frags = Vec::with_capacity(BATCH);
    while let Some(t) = next_task(sh) {
        // The control message: a failure here is test's to report.
        let mut header = [0u8; 8];
        (&*stream).read_exact(&mut header).map_err(remote)?;
        let size = u64::from_le_bytes(header) as usize;
        if size > t.len {
            return Err(Stop::Ctrl(Fail {
                rc: RC_USAGE,
                msg: format!("a {size}-byte message arrived for a {}-byte receive", t.len),
            }));
        }
        let slot = (t.seq % QUEUE_DEPTH as u64) as usize;
        let mut pages = Vec::new();
        let mut count = 0usize;
        let mut off = 0usize;
        while off < size {
            // Never more pages than the rest needs: every fragment is at most one page.
            taken.clear();
            if !pool.take_up_to(BATCH.min((size - off).div_ceil(PAGE)), &sh.stop, &mut taken) {
                abort(&mut lander, &pages);
                return Err(Stop::Ctrl(Fail {
                    rc: RC_SYSTEM,
                    msg: "closed while waiting for a free bounce page".into(),
                }));
            }
            pages.extend_from_slice(&taken);
            frags.clear();
            let first = count;
            for &page in &taken {
                if count == MAX_RECORDS {
                    abort(&mut lander, &pages);
                    return Err(Stop::Ctrl(Fail {
                        rc: RC_BUSY,
                        msg: format!(
                            "request too many pages: more than {MAX_RECORDS} fragments for a {size}-byte receive (TCPX fail-stops the process here; keep receives at or below 4 MiB)"
                        ),
                    }));
                }
                let len = fragment_len(&mut rng).min(size - off);
                let at = if len == PAGE { 0 } else { rng.below(PAGE - len + 1) };
                frags.push(Frag { page, at, len });
                off += len;
                count += 1;
            }
            match pool.land(stream, &frags, lander.as_mut()) {
                Ok(()) => {}
                // The data path: test reports it once a later receive is posted.
                Err(LandFail::Socket(m)) => {
                    abort(&mut lander, &pages);
                    return Err(Stop::Data {
                        fail: remote(m),
                        report_from: t.seq + 1,
                    });
                }
                Err(LandFail::Other(m)) => {
                    abort(&mut lander, &pages);
                    return Err(Fail { rc: 1, msg: m }.into());
                }
            }
            let mut dst = off - frags.iter().map(|f| f.len).sum::<usize>();
            for (i, f) in frags.iter().enumerate() {
                mem.write(
                    slot,
                    first + i,
                    LoadMeta {
                        src_off: (f.page as usize * PAGE + f.at) as u32,
                        len: f.len as u32,
                        dst_off: dst as u64,
                    },
                );
                dst += f.len;
            }
        }
        if let Some(Err(m)) = lander.as_mut().map(Lander::landed) {
            abort(&mut lander, &pages);
            return Err(Fail { rc: 1, msg: m }.into());
        }
        mem.publish(slot, count as u64);
        sh.max_records.fetch_max(count as u64, Ordering::Relaxed);
        sh.pages.lock().unwrap()[slot] = pages;
        t.moved();
        sh.finished.fetch_add(1, Ordering::Release);
    }
    Ok(())
}

/// Sets a connection's SO_SNDBUF and SO_RCVBUF to `bytes` (the kernel doubles each), which also
/// turns off their autotuning (TCPX_EMU_SOCKET_BUFFER).
fn set_buffers(stream: &TcpStream, bytes: usize) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let v = bytes.min(c_int::MAX as usize) as c_int;
    for opt in [libc::SO_SNDBUF, libc::SO_RCVBUF] {
        // SAFETY: a valid socket descriptor, an int option and its size.
        let rc = unsafe {
            libc::setsockopt(
                stream.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&v as *const c_int).cast(),
                std::mem::size_of::<c_int>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_stay_inside_a_page_and_4_mib_needs_far_fewer_than_2048() {
        let mut rng = Rng(12345);
        let mut n = 0;
        let mut off = 0;
        while off < 4 << 20 {
            let len = fragment_len(&mut rng);
            assert!((1..=PAGE).contains(&len));
            off += len;
            n += 1;
        }
        assert!(n < 1400, "{n} fragments for 4 MiB");
        let (mut n8, mut off8) = (0, 0);
        while off8 < 8 << 20 {
            off8 += fragment_len(&mut rng);
            n8 += 1;
        }
        assert!(n8 > MAX_RECORDS, "{n8} fragments for 8 MiB");
    }
}
