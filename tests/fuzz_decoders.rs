//! Every decoder of bytes that come from the peer or from NCCL's handle, driven with hostile input:
//! mutations of valid messages (bit flips, random and boundary bytes, huge values written over
//! length and count fields, splices), truncations and random bytes. Each must return (no panic, no
//! hang: a watchdog aborts with the seed after 20 s without progress), allocate nothing larger
//! than a fixed bound whatever the bytes say (a counting allocator measures every allocation a
//! decoder makes), and accept only what is valid (each decoder's property is stated at its test).
//!
//! Cases per decoder: `TCPXR_FUZZ_CASES` (default 500000, a few seconds on 2 cores); the seed is
//! random per run and printed on failure, `TCPXR_FUZZ_SEED` repeats one. For a long run:
//! `TCPXR_FUZZ_CASES=5000000 cargo test --release --test fuzz_decoders -- --nocapture`.
mod fuzzing;
use fuzzing::{cases, hostile, seed, Rng};
use nccl_net_tcpxr::engine::wire::{
    self, ListenHandle, MsgHeader, HANDLE_BYTES, HELLO_BYTES, MAX_CHUNK_BYTES, MAX_INLINE_BYTES, MAX_STRIPES,
    MAX_WELCOME_BYTES, MSG_HEADER_BYTES, WELCOME_HEAD_BYTES,
};
use nccl_net_tcpxr::net::acceptor::{Acceptor, Verdict, MAX_PENDING};
use nccl_net_tcpxr::net::addr;
use nccl_net_tcpxr::transport::socket;
use nccl_net_tcpxr::transport::INNER_HANDLE_BYTES;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

// --- allocation bound ------------------------------------------------------------------------

/// The largest single allocation any decoder may make, whatever the bytes say: error messages are
/// a few hundred bytes; nothing is sized by a length or count from the peer.
const ALLOCATION_BOUND: usize = 4096;

/// The system allocator, recording the largest request made on a thread while it measures.
struct Counting;

thread_local! {
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // try_with: the thread-locals may already be gone while a thread exits.
    let _ = MEASURING.try_with(|m| {
        if m.get() {
            let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
        }
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; the bookkeeping only reads
// and writes const-initialised thread-locals, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's layout, forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: ptr came from this allocator, that is from System, with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result with the largest allocation it made on this thread.
fn measured<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.with(|l| l.set(0));
    MEASURING.with(|m| m.set(true));
    let out = f();
    MEASURING.with(|m| m.set(false));
    (out, LARGEST.with(|l| l.get()))
}

/// Aborts the process, naming the decoder, the seed and the case, when no case has finished for
/// 20 s: a decoder that loops forever must fail the run instead of hanging it.
struct Watchdog {
    progress: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Watchdog {
    fn start(name: &'static str, seed: u64) -> Watchdog {
        let progress = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (progress.clone(), stop.clone());
        std::thread::spawn(move || {
            let (mut last, mut since) = (0, Instant::now());
            while !s.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(100));
                let now = p.load(Ordering::Acquire);
                if now != last {
                    (last, since) = (now, Instant::now());
                } else if since.elapsed() > Duration::from_secs(20) {
                    eprintln!("fuzz {name}: case {now} made no progress for 20 s (hang); TCPXR_FUZZ_SEED={seed}");
                    std::process::abort();
                }
            }
        });
        Watchdog { progress, stop }
    }
    fn tick(&self) {
        self.progress.fetch_add(1, Ordering::Release);
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}

/// Names the decoder, seed, case and input when a case panics (a decoder's panic or a broken
/// property), so the failure can be reproduced.
struct Reporter<'a> {
    name: &'a str,
    seed: u64,
    case: u64,
    input: &'a [u8],
}

impl Drop for Reporter<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "fuzz {}: failed at case {} of TCPXR_FUZZ_SEED={}, input ({} bytes) {:02x?}",
                self.name,
                self.case,
                self.seed,
                self.input.len(),
                self.input
            );
        }
    }
}

/// Drives one decoder: `make` gives a valid message and an unrelated valid one (for splices) plus
/// whatever the check needs to know about them; `check` decodes the hostile bytes and asserts the
/// decoder's property, returning whether they were accepted. Returns (cases, accepted).
fn fuzz<C>(
    name: &'static str,
    fixed: Option<usize>,
    mut make: impl FnMut(&mut Rng) -> (Vec<u8>, Vec<u8>, C),
    mut check: impl FnMut(&[u8], &C) -> bool,
) -> (u64, u64) {
    let (n, seed) = (cases(), seed());
    let mut rng = Rng::new(seed);
    let dog = Watchdog::start(name, seed);
    let start = Instant::now();
    let (mut accepted, mut largest) = (0u64, 0usize);
    for case in 0..n {
        let (valid, other, ctx) = make(&mut rng);
        let input = hostile(&mut rng, &valid, &other, fixed);
        let report = Reporter {
            name,
            seed,
            case,
            input: &input,
        };
        let (ok, biggest) = measured(|| check(&input, &ctx));
        assert!(
            biggest <= ALLOCATION_BOUND,
            "{name}: an allocation of {biggest} bytes (bound {ALLOCATION_BOUND})"
        );
        drop(report);
        accepted += ok as u64;
        largest = largest.max(biggest);
        dog.tick();
    }
    eprintln!(
        "fuzz {name}: {n} cases in {:.2} s, {accepted} accepted, largest allocation {largest} B, seed {seed}",
        start.elapsed().as_secs_f64()
    );
    assert!(
        accepted > 0 || n < 100,
        "{name}: not even the unchanged valid inputs were accepted"
    );
    (n, accepted)
}

// --- valid messages ------------------------------------------------------------------------------

fn any_addr(rng: &mut Rng) -> SocketAddr {
    let port = 1 + rng.below(65535) as u16;
    if rng.chance(70) {
        SocketAddr::new(IpAddr::V4(Ipv4Addr::from(rng.next() as u32)), port)
    } else {
        let mut o = [0u8; 16];
        o.copy_from_slice(&rng.bytes(16));
        SocketAddr::new(IpAddr::V6(Ipv6Addr::from(o)), port)
    }
}

fn any_handle(rng: &mut Rng) -> ListenHandle {
    ListenHandle {
        ctrl: any_addr(rng),
        stripes: 1 + rng.below(16) as u16,
        chunk_bytes: 4096 * (1 + rng.below(4096)) as u32,
        inline_bytes: rng.below(MAX_INLINE_BYTES as usize + 1) as u32,
        nonce: rng.next(),
    }
}

fn handle_bytes(h: &ListenHandle) -> Vec<u8> {
    let mut out = [0u8; HANDLE_BYTES];
    h.write(&mut out);
    out.to_vec()
}

// --- one test per decoder ------------------------------------------------------------------------

/// NCCL's handle (from the peer through NCCL's bootstrap): what `read` accepts has every count and
/// size within tcpxr's bounds, so the welcome the connector then reads is at most 8 KiB, and it
/// round-trips through `write`.
#[test]
fn fuzz_the_nccl_handle() {
    fuzz(
        "handle",
        Some(HANDLE_BYTES),
        |rng| {
            let (a, b) = (any_handle(rng), any_handle(rng));
            (handle_bytes(&a), handle_bytes(&b), ())
        },
        |input, _| {
            let bytes: &[u8; HANDLE_BYTES] = input.try_into().unwrap();
            let Ok(h) = ListenHandle::read(bytes) else { return false };
            assert!((1..=MAX_STRIPES).contains(&h.stripes), "{h:?}");
            assert!(
                (4096..=MAX_CHUNK_BYTES).contains(&h.chunk_bytes) && h.chunk_bytes % 4096 == 0,
                "{h:?}"
            );
            assert!(h.inline_bytes <= MAX_INLINE_BYTES, "{h:?}");
            assert_ne!(h.ctrl.port(), 0);
            assert!(WELCOME_HEAD_BYTES + h.inner_handle_bytes() <= MAX_WELCOME_BYTES);
            let again = handle_bytes(&h);
            assert_eq!(ListenHandle::read(again.as_slice().try_into().unwrap()).unwrap(), h);
            true
        },
    );
}

/// The control connection's hello (from whoever connects to the listen port): accepted exactly
/// when it is the hello of the listen's nonce, byte for byte; any length is refused cleanly.
#[test]
fn fuzz_the_hello() {
    fuzz(
        "hello",
        None,
        |rng| {
            let nonce = rng.next();
            (wire::hello(nonce).to_vec(), wire::hello(rng.next()).to_vec(), nonce)
        },
        |input, nonce| {
            let ok = wire::check_hello(input, *nonce).is_ok();
            assert_eq!(ok, input == wire::hello(*nonce), "verdict on {input:02x?}");
            ok
        },
    );
}

/// The welcome's head (from the listener the handle names): accepted only when it is a welcome of
/// this protocol version for exactly the stripes and chunk size of the handle, so the inner handles
/// read after it are the 8 KiB at most that the handle allows.
#[test]
fn fuzz_the_welcome_head() {
    fuzz(
        "welcome head",
        Some(WELCOME_HEAD_BYTES),
        |rng| {
            let h = any_handle(rng);
            let inner = vec![[0u8; INNER_HANDLE_BYTES]; h.stripes as usize];
            let w = wire::welcome(h.stripes, h.chunk_bytes, &inner)[..WELCOME_HEAD_BYTES].to_vec();
            let other = wire::welcome(1, 4096, &[])[..WELCOME_HEAD_BYTES].to_vec();
            (w, other, h)
        },
        |input, h| {
            let head: &[u8; WELCOME_HEAD_BYTES] = input.try_into().unwrap();
            let Ok((stripes, chunk)) = wire::read_welcome_head(head, h) else {
                return false;
            };
            assert_eq!((stripes, chunk), (h.stripes, h.chunk_bytes));
            assert_eq!(
                &input[..8],
                &wire::welcome(1, 4096, &[])[..8],
                "magic, version and kind"
            );
            true
        },
    );
}

/// The message header (from the sending peer, one per message): what `decode` accepts is exactly
/// what `encode` writes (no bits ignored, so a desynchronised stream is caught); its size is any
/// u64, which the receiver checks against the posted size before anything is written.
#[test]
fn fuzz_the_message_header() {
    fuzz(
        "message header",
        Some(MSG_HEADER_BYTES),
        |rng| {
            let mut h = || MsgHeader {
                size: if rng.chance(50) {
                    rng.next()
                } else {
                    rng.next() % (1 << 24)
                },
                seq: rng.next() as u32,
                inline: rng.chance(50),
                chunk: (rng.next() % 4096) as u32 * 4096,
            };
            (h().encode().to_vec(), h().encode().to_vec(), ())
        },
        |input, _| {
            let bytes: &[u8; MSG_HEADER_BYTES] = input.try_into().unwrap();
            let Ok(h) = MsgHeader::decode(bytes) else { return false };
            assert_eq!(&h.encode(), bytes, "decode accepted bits encode never writes");
            true
        },
    );
}

/// An address inside a handle (any length): accepted ones have a port and survive a round trip.
#[test]
fn fuzz_the_address_in_handles() {
    fuzz(
        "address",
        None,
        |rng| {
            let mut a = [0u8; addr::ADDR_BYTES];
            addr::encode(&any_addr(rng), &mut a);
            let mut b = [0u8; addr::ADDR_BYTES];
            addr::encode(&any_addr(rng), &mut b);
            (a.to_vec(), b.to_vec(), ())
        },
        |input, _| {
            let Some(a) = addr::decode(input) else { return false };
            assert!(input.len() >= addr::ADDR_BYTES);
            assert_ne!(a.port(), 0);
            let mut again = [0u8; addr::ADDR_BYTES];
            addr::encode(&a, &mut again);
            assert_eq!(addr::decode(&again), Some(a));
            true
        },
    );
}

/// The socket transport's inner handle (one per stripe inside the peer's welcome): accepted ones
/// carry the token at its place and a valid address, and re-encode to the same meaning.
#[test]
fn fuzz_the_socket_stripe_handle() {
    fuzz(
        "stripe handle",
        Some(INNER_HANDLE_BYTES),
        |rng| {
            let a = socket::encode_stripe_handle(rng.next(), &any_addr(rng));
            let b = socket::encode_stripe_handle(rng.next(), &any_addr(rng));
            (a.to_vec(), b.to_vec(), ())
        },
        |input, _| {
            let h: &[u8; INNER_HANDLE_BYTES] = input.try_into().unwrap();
            let Ok((token, at)) = socket::decode_stripe_handle(h) else {
                return false;
            };
            assert_eq!(token.to_le_bytes(), input[8..16]);
            assert_ne!(at.port(), 0);
            let again = socket::encode_stripe_handle(token, &at);
            assert_eq!(socket::decode_stripe_handle(&again).unwrap(), (token, at));
            true
        },
    );
}

/// A stripe's hello (from whoever connects to a stripe listener): accepted exactly when it is the
/// hello of that listener's token, byte for byte.
#[test]
fn fuzz_the_socket_stripe_hello() {
    fuzz(
        "stripe hello",
        None,
        |rng| {
            let token = rng.next();
            (
                socket::stripe_hello(token).to_vec(),
                socket::stripe_hello(rng.next()).to_vec(),
                token,
            )
        },
        |input, token| {
            let ok = socket::check_stripe_hello(input, *token) == Verdict::Accept;
            assert_eq!(ok, input == socket::stripe_hello(*token), "verdict on {input:02x?}");
            ok
        },
    );
}

/// The acceptor's hello handling, over real sockets: rounds of connections that send hostile
/// variants of a hello (some complete, some cut short and left open or closed, some with more
/// bytes than a hello behind it) at once. The acceptor hands over exactly the connections whose
/// first 16 bytes are the valid hello, each once, drops every other one (cut-short ones at the
/// handshake deadline), and never holds more than MAX_PENDING. Connections: TCPXR_FUZZ_CASES/500,
/// 200-20000.
#[test]
fn fuzz_the_acceptor_over_sockets() {
    // Capped: each connection may leave a TIME_WAIT port behind.
    let (n, seed) = ((cases() / 500).clamp(200, 20_000), seed());
    let mut rng = Rng::new(seed ^ 0xacce);
    let dog = Watchdog::start("acceptor", seed);
    let timeout = Duration::from_millis(50);
    let mut acceptor = Acceptor::bind(IpAddr::V4(Ipv4Addr::LOCALHOST), HELLO_BYTES, timeout, "fuzz listener").unwrap();
    let at = acceptor.local_addr().unwrap();
    let nonce = rng.next();
    let valid = wire::hello(nonce);
    let other = wire::hello(rng.next());
    let start = Instant::now();
    let (mut sent, mut wanted_total, mut got_total) = (0u64, 0u64, 0u64);
    while sent < n {
        let round = (1 + rng.below(MAX_PENDING)).min((n - sent) as usize);
        let mut clients = Vec::new();
        let mut wanted = 0;
        for _ in 0..round {
            let mut bytes = hostile(&mut rng, &valid, &other, None);
            // Now and then the valid hello with more behind it: taken, the rest left unread.
            if rng.chance(5) {
                bytes = valid.to_vec();
                let more = 1 + rng.below(4096);
                bytes.extend(rng.bytes(more));
            }
            let is_valid = bytes.len() >= HELLO_BYTES && bytes[..HELLO_BYTES] == valid;
            wanted += is_valid as u64;
            let mut c = std::net::TcpStream::connect(at).unwrap();
            use std::io::Write;
            let _ = c.write_all(&bytes);
            // Cut-short hellos are left open (dropped at the deadline) or closed (dropped at once).
            clients.push((rng.chance(50).then_some(c), bytes));
        }
        let report = Reporter {
            name: "acceptor",
            seed,
            case: sent,
            input: &[],
        };
        let mut got = 0u64;
        let deadline = Instant::now() + timeout * 3 + Duration::from_secs(2);
        loop {
            let (hit, biggest) = measured(|| acceptor.poll(|h| socket_verdict(h, nonce)).unwrap());
            // Its table of at most MAX_PENDING waiting connections (about 80 bytes each) may grow
            // past ALLOCATION_BOUND; nothing is sized by what a connection sends.
            assert!(biggest <= 16 << 10, "acceptor: an allocation of {biggest} bytes");
            assert!(acceptor.pending() <= MAX_PENDING);
            match hit {
                Some((_, hello)) => {
                    assert_eq!(hello, valid, "the acceptor handed over a connection with another hello");
                    got += 1;
                }
                None if acceptor.pending() == 0 && got == wanted => break,
                None => {
                    assert!(
                        Instant::now() < deadline,
                        "round of {round}: {got} of {wanted} valid hellos handed over, {} still pending",
                        acceptor.pending()
                    );
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        }
        drop(report);
        drop(clients);
        sent += round as u64;
        wanted_total += wanted;
        got_total += got;
        dog.tick();
    }
    eprintln!(
        "fuzz acceptor: {sent} connections in {:.2} s, {got_total} valid hellos taken of {wanted_total}, seed {seed}",
        start.elapsed().as_secs_f64()
    );
}

fn socket_verdict(hello: &[u8], nonce: u64) -> Verdict {
    match wire::check_hello(hello, nonce) {
        Ok(()) => Verdict::Accept,
        Err(why) => Verdict::Reject(why),
    }
}
