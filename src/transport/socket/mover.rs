//! The frames a stripe is moving and how far the oldest one has got: the stripe's I/O state,
//! the same whichever thread drives it (NCCL's proxy thread or an I/O thread of the pool).
//!
//! Each chunk travels as one frame, header then payload (frame.rs). `pump` moves as much as the
//! socket takes or has without blocking: one `sendmsg` gathers the rest of the oldest frame and
//! the whole of the next ones (headers from here, payloads straight from the engine's buffers),
//! one `recvmsg` scatters into them the same way, so a chunk that fits the socket costs one
//! syscall on either side. A receive checks each header as soon as it is complete.
//!
//! The receiver's window (grant.rs) bounds what a send may put on the wire: a sender short of
//! allowance reads the receiver's grants and stops ([`Outcome::Starved`]) when none has come; a
//! receiver grants more as it reads.
use super::demote;
use super::frame::{self, HEADER_BYTES, MAX_PAYLOAD};
use super::grant::{Allowance, Grants, WindowBounds};
use crate::error::{Error, Result};
use crate::net::conn::{self, Direction};
use std::collections::VecDeque;
use std::io::{self, ErrorKind};

/// Frames one syscall gathers at most (two iovecs each).
const GATHER: usize = 8;

/// Non-blocking byte movement over a socket (or, in tests, a scripted stand-in).
pub trait Wire {
    /// Sends from `iov`: the bytes taken, or `WouldBlock` when none.
    ///
    /// # Safety
    /// Every entry of `iov` must describe memory readable for its whole length during the call.
    unsafe fn send(&mut self, iov: &[libc::iovec]) -> io::Result<usize>;
    /// Receives into `iov`: the bytes read, 0 when the peer has closed, `WouldBlock` when none.
    ///
    /// # Safety
    /// Every entry of `iov` must describe memory writable for its whole length during the call,
    /// and not borrowed by anyone else meanwhile.
    unsafe fn recv(&mut self, iov: &[libc::iovec]) -> io::Result<usize>;
}

/// One chunk on the wire: the engine's buffer, the chunk's place in the stripe's sequence, and its
/// header (to send, or as received).
pub struct Frame {
    ptr: usize,
    len: usize,
    seq: u64,
    header: [u8; HEADER_BYTES],
    /// A receive into bounce memory the GPU reads next: each read's lines are demoted
    /// (demote.rs).
    demote: bool,
}

impl Frame {
    /// Chunk `seq` of the stripe: `len` bytes at `ptr`.
    ///
    /// # Safety
    /// `ptr .. ptr + len` must stay valid until the frame has moved or is dropped unmoved: readable
    /// for a send, writable and used by nobody else for a receive.
    pub unsafe fn new(ptr: usize, len: usize, seq: u64) -> Result<Frame> {
        if len > MAX_PAYLOAD {
            return Err(Error::invalid_usage(format!(
                "a stripe chunk of {len} bytes: the socket transport carries at most {MAX_PAYLOAD}"
            )));
        }
        Ok(Frame {
            ptr,
            len,
            seq,
            header: frame::encode(seq, len),
            demote: false,
        })
    }

    /// This receive's lines leave the reading core's caches as they land (demote.rs).
    pub fn demoted(self) -> Frame {
        Frame { demote: true, ..self }
    }

    fn total(&self) -> usize {
        HEADER_BYTES + self.len
    }
}

/// What a pump ended with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every frame held has moved.
    Drained,
    /// The socket would block and frames are left.
    Blocked,
    /// The budget is spent and frames are left; the socket may take or have more.
    Budget,
    /// A send has used what the receiver granted and frames are left: the next grant arrives as
    /// readable bytes on the socket.
    Starved,
}

/// A stripe's side of the window (grant.rs).
enum Flow {
    Send(Allowance),
    Recv(Grants),
}

pub struct Mover {
    dir: Direction,
    /// Frames being moved, oldest first.
    frames: VecDeque<Frame>,
    /// Bytes of the oldest frame (header included) moved so far.
    head_moved: usize,
    /// Payload bytes of all held frames not moved yet.
    unmoved: usize,
    /// Stream bytes (headers included) moved since the stripe started: what grants count.
    moved: u64,
    flow: Flow,
}

impl Mover {
    /// A sending stripe's: nothing goes before the receiver's first grant.
    pub fn sender() -> Mover {
        Mover::with(Direction::Send, Flow::Send(Allowance::none()))
    }

    /// A receiving stripe's, letting the sender have a window of unread bytes on the wire within
    /// `window` (0: no limit). Its first grant waits for [`Mover::flush_grant`].
    pub fn receiver(window: WindowBounds) -> Mover {
        Mover::with(Direction::Recv, Flow::Recv(Grants::new(window)))
    }

    /// A stripe in the state it has once started: a sender granted [`grant::UNLIMITED`], a
    /// receiver without a window that has written its one grant.
    ///
    /// [`grant::UNLIMITED`]: super::grant::UNLIMITED
    #[cfg(test)]
    pub fn new(dir: Direction) -> Mover {
        let flow = match dir {
            Direction::Send => Flow::Send(Allowance::unlimited()),
            Direction::Recv => Flow::Recv(Grants::written(0)),
        };
        Mover::with(dir, flow)
    }

    fn with(dir: Direction, flow: Flow) -> Mover {
        Mover {
            dir,
            frames: VecDeque::new(),
            head_moved: 0,
            unmoved: 0,
            moved: 0,
            flow,
        }
    }

    /// Writes what the socket takes of a receiver's queued grant; true when none is left (always,
    /// for a sender).
    pub fn flush_grant(&mut self, wire: &mut impl Wire) -> Result<bool> {
        match &mut self.flow {
            Flow::Recv(g) => {
                g.flush(wire)?;
                Ok(!g.pending())
            }
            Flow::Send(_) => Ok(true),
        }
    }

    pub fn direction(&self) -> Direction {
        self.dir
    }

    /// Stream bytes (headers included) moved since the stripe started.
    pub fn moved(&self) -> u64 {
        self.moved
    }

    /// A receiver's window: times it grew and the largest it reached (None for a sender).
    pub fn window_growth(&self) -> Option<(u64, u64)> {
        match &self.flow {
            Flow::Recv(g) => Some(g.growth()),
            Flow::Send(_) => None,
        }
    }

    /// Whether a sender may still be written grants (its receiver has a window).
    pub fn grants_may_come(&self) -> bool {
        matches!(&self.flow, Flow::Send(a) if a.more_may_come())
    }

    /// Whether a send has used all the receiver has granted (it waits for readable bytes, not
    /// for room in the socket).
    pub fn starved(&self) -> bool {
        matches!(&self.flow, Flow::Send(a) if a.room(self.moved) == 0)
    }

    pub fn push(&mut self, f: Frame) {
        self.unmoved += f.len;
        self.frames.push_back(f);
    }

    /// Drops every frame (the stripe is closing): nothing touches their buffers any more.
    pub fn clear(&mut self) {
        self.frames.clear();
        self.head_moved = 0;
        self.unmoved = 0;
    }

    /// Payload bytes under way and not moved: for a send, everything the socket has not taken
    /// yet; for a receive, the rest of a frame that has started to arrive (a receive whose first
    /// byte has not arrived is a wait, not a backlog). Headers are not counted, so the figure
    /// compares with chunk sizes.
    pub fn backlog(&self) -> usize {
        match self.dir {
            Direction::Send => self.unmoved,
            Direction::Recv if self.head_moved > 0 => self.frames[0].len - self.head_moved.saturating_sub(HEADER_BYTES),
            Direction::Recv => 0,
        }
    }

    /// Payload bytes of the oldest frame not moved yet (0 with no frame).
    pub fn head_unmoved(&self) -> usize {
        self.frames
            .front()
            .map_or(0, |f| f.len - self.head_moved.saturating_sub(HEADER_BYTES))
    }

    /// Moves bytes until every frame has moved, the socket would block, or `budget` payload bytes
    /// (at least 1; headers are free) have moved in this call; `done(len)` is called for each
    /// frame completed, oldest first. Errors: the socket's (peer gone: ncclRemoteError), a header
    /// that is not the one posted, the peer closing while frames are posted.
    pub fn pump(&mut self, wire: &mut impl Wire, budget: usize, mut done: impl FnMut(usize)) -> Result<Outcome> {
        const EMPTY: libc::iovec = libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        };
        let mut left = budget.max(1);
        loop {
            if let Flow::Recv(g) = &mut self.flow {
                if g.pending() {
                    g.flush(wire)?;
                }
                if self.frames.is_empty() {
                    g.waiting(false);
                }
            }
            if self.frames.is_empty() {
                return Ok(Outcome::Drained);
            }
            if left == 0 {
                return Ok(Outcome::Budget);
            }
            let mut iov = [EMPTY; 2 * GATHER];
            // Which entries are payloads to demote once read into, and whether any is (only
            // receives into bounce memory are: most reads skip the demote pass entirely).
            let mut demote = [false; 2 * GATHER];
            let mut any_demote = false;
            let mut k = 0;
            // The rest of the oldest frame and the whole of the next ones, `left` payload bytes
            // at most; a frame none of whose payload fits is left for later.
            let mut room = left;
            let mut add = |base: *mut u8, len: usize, demoted: bool| {
                iov[k] = libc::iovec {
                    iov_base: base as *mut libc::c_void,
                    iov_len: len,
                };
                demote[k] = demoted;
                any_demote |= demoted;
                k += 1;
            };
            for (i, f) in self.frames.iter_mut().take(GATHER).enumerate() {
                let skip = if i == 0 { self.head_moved } else { 0 };
                let payload_skip = skip.saturating_sub(HEADER_BYTES);
                let payload = (f.len - payload_skip).min(room);
                if i > 0 && payload == 0 && f.len > 0 {
                    break;
                }
                if skip < HEADER_BYTES {
                    let rest = &mut f.header[skip..];
                    add(rest.as_mut_ptr(), rest.len(), false);
                }
                if payload > 0 {
                    add((f.ptr + payload_skip) as *mut u8, payload, f.demote);
                    room -= payload;
                }
            }
            if let Flow::Send(allowance) = &mut self.flow {
                let want: usize = iov[..k].iter().map(|v| v.iov_len).sum();
                if allowance.room(self.moved) < want as u64 {
                    allowance.read(wire)?;
                }
                let room = allowance.room(self.moved);
                if room == 0 {
                    return Ok(Outcome::Starved);
                }
                k = truncate(&mut iov[..k], room);
            }
            let result = match self.dir {
                // SAFETY: the iovecs cover the held frames' headers (owned here, not otherwise
                // borrowed during the call) and their buffers, which `Frame::new`'s caller keeps
                // valid until the frame has moved or is dropped.
                Direction::Send => unsafe { wire.send(&iov[..k]) },
                // SAFETY: as above; a receive buffer is posted to this stripe only.
                Direction::Recv => unsafe { wire.recv(&iov[..k]) },
            };
            match result {
                Ok(0) if self.dir == Direction::Recv => return Err(self.closed_by_peer()),
                // A send of a non-empty iovec that takes nothing: treat as full.
                Ok(0) => return Ok(Outcome::Blocked),
                Ok(n) => {
                    if any_demote {
                        for (ptr, len) in written(&iov[..k], &demote[..k], n) {
                            demote::lines(ptr, len);
                        }
                    }
                    let payload = self.advance(n, &mut done)?;
                    left -= payload.min(left);
                    if let Flow::Recv(g) = &mut self.flow {
                        g.after_read(self.moved, self.head_moved > 0, wire)?;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    if let Flow::Recv(g) = &mut self.flow {
                        g.waiting(true);
                    }
                    return Ok(Outcome::Blocked);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(conn::error("stripe", self.dir, e)),
            }
        }
    }

    /// Accounts for `n` bytes moved from the head on: checks headers as they complete and retires
    /// whole frames. Returns how many of the bytes were payload.
    fn advance(&mut self, mut n: usize, done: &mut impl FnMut(usize)) -> Result<usize> {
        self.moved += n as u64;
        let mut payload = 0;
        while n > 0 {
            let f = &self.frames[0];
            let before = self.head_moved;
            let take = n.min(f.total() - before);
            self.head_moved += take;
            n -= take;
            payload += self.head_moved.saturating_sub(HEADER_BYTES) - before.saturating_sub(HEADER_BYTES);
            if self.dir == Direction::Recv && before < HEADER_BYTES && self.head_moved >= HEADER_BYTES {
                frame::check(&f.header, f.seq, f.len)?;
            }
            if self.head_moved == f.total() {
                done(f.len);
                self.frames.pop_front();
                self.head_moved = 0;
            }
        }
        self.unmoved -= payload;
        Ok(payload)
    }

    fn closed_by_peer(&self) -> Error {
        let f = &self.frames[0];
        if self.head_moved > 0 {
            Error::remote(format!(
                "stripe receive failed, peer gone: the connection closed in the middle of chunk {} \
                 ({} of its {} bytes with header had arrived)",
                f.seq,
                self.head_moved,
                f.total()
            ))
        } else {
            Error::remote(format!(
                "stripe receive failed, peer gone: the connection closed before chunk {} arrived",
                f.seq
            ))
        }
    }
}

/// The parts of `iov`'s entries flagged in `flagged` that a read of `n` bytes wrote, as
/// (address, length): what [`demote::lines`] is given after a read.
fn written<'a>(iov: &'a [libc::iovec], flagged: &'a [bool], n: usize) -> impl Iterator<Item = (usize, usize)> + 'a {
    iov.iter()
        .zip(flagged)
        .scan(n, |left, (v, &f)| {
            let wrote = v.iov_len.min(*left);
            *left -= wrote;
            (wrote > 0).then_some((f, v.iov_base as usize, wrote))
        })
        .filter_map(|(f, ptr, len)| f.then_some((ptr, len)))
}

/// Shortens `iov` to `room` bytes in all; returns the entries left.
fn truncate(iov: &mut [libc::iovec], room: u64) -> usize {
    let mut left = room;
    for (i, v) in iov.iter_mut().enumerate() {
        if (v.iov_len as u64) >= left {
            v.iov_len = left as usize;
            return i + usize::from(left > 0);
        }
        left -= v.iov_len as u64;
    }
    iov.len()
}

#[cfg(test)]
mod tests {
    use super::super::grant;
    use super::*;
    use crate::abi::ncclResult_t;

    /// A byte pipe with a script: each call moves at most the next scripted number of bytes (0:
    /// would block; script empty: no limit); past the end of `incoming`, a receive sees EOF when
    /// `eof` is set and would block otherwise.
    #[derive(Default)]
    struct Scripted {
        limits: VecDeque<usize>,
        sent: Vec<u8>,
        incoming: Vec<u8>,
        read_pos: usize,
        eof: bool,
        calls: usize,
    }

    impl Scripted {
        fn limit(&mut self) -> usize {
            self.calls += 1;
            self.limits.pop_front().unwrap_or(usize::MAX)
        }
    }

    impl Wire for Scripted {
        unsafe fn send(&mut self, iov: &[libc::iovec]) -> io::Result<usize> {
            let mut budget = self.limit();
            if budget == 0 {
                return Err(ErrorKind::WouldBlock.into());
            }
            let start = self.sent.len();
            for v in iov {
                let take = v.iov_len.min(budget);
                // SAFETY: the caller guarantees each iovec readable for its length.
                let bytes = unsafe { std::slice::from_raw_parts(v.iov_base as *const u8, take) };
                self.sent.extend_from_slice(bytes);
                budget -= take;
            }
            Ok(self.sent.len() - start)
        }

        unsafe fn recv(&mut self, iov: &[libc::iovec]) -> io::Result<usize> {
            let mut budget = self.limit();
            let available = self.incoming.len() - self.read_pos;
            if available == 0 {
                return if self.eof {
                    Ok(0)
                } else {
                    Err(ErrorKind::WouldBlock.into())
                };
            }
            if budget == 0 {
                return Err(ErrorKind::WouldBlock.into());
            }
            budget = budget.min(available);
            let mut moved = 0;
            for v in iov {
                let take = v.iov_len.min(budget - moved);
                // SAFETY: the caller guarantees each iovec writable for its length; the source is
                // our own vector, which does not overlap it.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        self.incoming.as_ptr().add(self.read_pos + moved),
                        v.iov_base as *mut u8,
                        take,
                    )
                };
                moved += take;
            }
            self.read_pos += moved;
            Ok(moved)
        }
    }

    fn frame(buf: &mut [u8], seq: u64) -> Frame {
        // SAFETY: the tests keep every buffer alive and unborrowed until the mover is done.
        unsafe { Frame::new(buf.as_mut_ptr() as usize, buf.len(), seq) }.unwrap()
    }

    fn bytes(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    /// What a sender puts on the wire for these payloads.
    fn wire_image(payloads: &[Vec<u8>]) -> Vec<u8> {
        let mut out = vec![];
        for (seq, p) in payloads.iter().enumerate() {
            out.extend_from_slice(&frame::encode(seq as u64, p.len()));
            out.extend_from_slice(p);
        }
        out
    }

    #[test]
    fn partial_writes_resume_where_the_socket_stopped_and_frames_complete_in_order() {
        let mut payloads = vec![bytes(100, 1), bytes(0, 2), bytes(5000, 3)];
        let mut tx = Mover::new(Direction::Send);
        for (seq, p) in payloads.iter_mut().enumerate() {
            tx.push(frame(p, seq as u64));
        }
        assert_eq!(tx.backlog(), 5100, "payload bytes");
        let mut wire = Scripted {
            limits: [5, 17, 1, 0].into(),
            ..Default::default()
        };
        let mut done = vec![];
        assert_eq!(
            tx.pump(&mut wire, usize::MAX, |n| done.push(n)).unwrap(),
            Outcome::Blocked
        );
        assert_eq!(wire.sent.len(), 23, "5 + 17 + 1 bytes: into the first payload");
        assert!(done.is_empty());
        assert_eq!(tx.backlog(), 5100 - 7, "the header and 7 payload bytes went");
        // The rest of the first frame (93) and the whole second one, a bare header (16).
        wire.limits = [109, 0].into();
        assert_eq!(
            tx.pump(&mut wire, usize::MAX, |n| done.push(n)).unwrap(),
            Outcome::Blocked
        );
        assert_eq!(done, vec![100, 0], "first frame done, then the empty one");
        assert_eq!(
            tx.pump(&mut wire, usize::MAX, |n| done.push(n)).unwrap(),
            Outcome::Drained
        );
        assert_eq!(done, vec![100, 0, 5000]);
        assert_eq!(tx.backlog(), 0);
        assert_eq!(wire.sent, wire_image(&payloads));
    }

    #[test]
    fn partial_reads_land_in_place_across_split_headers_and_only_a_started_frame_is_backlog() {
        let payloads = vec![bytes(3000, 7), bytes(1, 8), bytes(70_000, 9)];
        let mut outs: Vec<Vec<u8>> = payloads.iter().map(|p| vec![0u8; p.len()]).collect();
        let mut rx = Mover::new(Direction::Recv);
        for (seq, o) in outs.iter_mut().enumerate() {
            rx.push(frame(o, seq as u64));
        }
        let mut wire = Scripted {
            incoming: wire_image(&payloads),
            // 7 bytes: half a header; then into the first payload; then across the second frame's
            // header; then a would-block.
            limits: [7, 20, 2990, 0].into(),
            ..Default::default()
        };
        assert_eq!(rx.backlog(), 0, "nothing has arrived: waiting, not backlog");
        let mut done = vec![];
        assert_eq!(
            rx.pump(&mut wire, usize::MAX, |n| done.push(n)).unwrap(),
            Outcome::Blocked
        );
        assert_eq!(done, vec![3000]);
        assert_eq!(
            rx.backlog(),
            1,
            "second frame: 1 header byte arrived, its 1 payload byte to come"
        );
        wire.limits = [1000, 0].into();
        rx.pump(&mut wire, usize::MAX, |n| done.push(n)).unwrap();
        assert_eq!(done, vec![3000, 1]);
        assert!(rx.backlog() > 60_000);
        assert_eq!(
            rx.pump(&mut wire, usize::MAX, |n| done.push(n)).unwrap(),
            Outcome::Drained
        );
        assert_eq!(done, vec![3000, 1, 70_000]);
        assert!(outs == payloads);
        // With more posted than has arrived, the pump stops at would-block and nothing is left
        // half-counted.
        let mut more = vec![0u8; 10];
        rx.push(frame(&mut more, 3));
        assert_eq!(rx.pump(&mut wire, usize::MAX, |_| panic!()).unwrap(), Outcome::Blocked);
        assert_eq!(rx.backlog(), 0);
    }

    #[test]
    fn random_splits_under_every_window_deliver_every_byte_in_place_demoted_or_not_and_never_run_past_the_grant() {
        let mut rng = 0x0bad_cafe_f00d_1234u64;
        let mut next = move |m: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % m as u64) as usize
        };
        for round in 0..300 {
            let window = [(0, 0), (16, 16), (1000, 1000), (20_000, 20_000), (1000, 16_000)][round % 5];
            let n = 1 + next(12);
            let mut payloads: Vec<Vec<u8>> = (0..n).map(|i| bytes(next(9000), (round + i) as u8)).collect();
            let mut outs: Vec<Vec<u8>> = payloads.iter().map(|p| vec![0u8; p.len()]).collect();
            let bounds = WindowBounds {
                least: window.0,
                most: window.1,
            };
            let (mut tx, mut rx) = (Mover::sender(), Mover::receiver(bounds));
            for (seq, p) in payloads.iter_mut().enumerate() {
                tx.push(frame(p, seq as u64));
            }
            // Every other receive demoted as it lands (demote.rs): same bytes either way.
            for (seq, o) in outs.iter_mut().enumerate() {
                let f = frame(o, seq as u64);
                rx.push(if seq % 2 == 1 { f.demoted() } else { f });
            }
            // Each end sends into its `sent` and receives from its `incoming`: data tx -> rx,
            // grants rx -> tx, handed over after every pump. The receiver's first grant is
            // written as its stripe starts.
            let (mut tx_end, mut rx_end) = (Scripted::default(), Scripted::default());
            assert!(rx.flush_grant(&mut rx_end).unwrap());
            let (mut sent, mut got, mut starved, mut steps) = (0, 0, 0, 0);
            while got < n {
                steps += 1;
                assert!(steps < 1_000_000, "round {round}: no progress");
                tx_end.incoming.append(&mut rx_end.sent);
                tx_end.limits = (0..4).map(|_| next(3) * next(20_000)).collect();
                if tx.pump(&mut tx_end, usize::MAX, |_| sent += 1).unwrap() == Outcome::Starved {
                    assert!(tx.starved());
                    starved += 1;
                }
                rx_end.incoming.append(&mut tx_end.sent);
                rx_end.limits = (0..4).map(|_| next(3) * next(20_000)).collect();
                rx.pump(&mut rx_end, usize::MAX, |_| got += 1).unwrap();
                if bounds.most > 0 {
                    let (on_wire, read) = (tx.moved, rx_end.read_pos as u64);
                    assert!(
                        on_wire <= read + bounds.most,
                        "round {round}: {on_wire} sent, {read} read"
                    );
                }
            }
            assert_eq!(sent, n, "round {round}");
            assert!(outs == payloads, "round {round}");
            let stream: usize = payloads.iter().map(|p| HEADER_BYTES + p.len()).sum();
            if bounds.least == 16 && stream > 16 {
                assert!(starved > 0, "round {round}: a window of one header starves the sender");
            }
        }
    }

    #[test]
    fn a_read_demotes_exactly_the_flagged_bytes_it_wrote() {
        let (mut h1, mut p1, mut h2, mut p2) = ([0u8; 16], [0u8; 100], [0u8; 16], [0u8; 50]);
        let iov: Vec<libc::iovec> = [&mut h1[..], &mut p1[..], &mut h2[..], &mut p2[..]]
            .into_iter()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            })
            .collect();
        let at = |i: usize| iov[i].iov_base as usize;
        let flagged = [false, true, false, true];
        let demoted = |n| written(&iov, &flagged, n).collect::<Vec<_>>();
        assert_eq!(demoted(0), vec![]);
        assert_eq!(demoted(10), vec![]);
        assert_eq!(demoted(20), vec![(at(1), 4)]);
        assert_eq!(demoted(132), vec![(at(1), 100)]);
        assert_eq!(demoted(140), vec![(at(1), 100), (at(3), 8)]);
        assert_eq!(demoted(182), vec![(at(1), 100), (at(3), 50)]);
        assert_eq!(written(&iov, &[false; 4], 182).count(), 0);
    }

    #[test]
    fn a_sender_reads_grants_only_when_short_and_refuses_what_is_not_a_grant() {
        let mut payload = bytes(10_000, 4);
        let mut tx = Mover::sender();
        tx.push(frame(&mut payload, 0));
        assert!(tx.starved(), "nothing granted yet");
        let mut wire = Scripted::default();
        assert_eq!(tx.pump(&mut wire, usize::MAX, |_| panic!()).unwrap(), Outcome::Starved);
        assert!(wire.sent.is_empty());
        // Half a grant, then its rest: 1000 bytes of stream, header included.
        let g = grant::encode(1000);
        wire.incoming.extend_from_slice(&g[..3]);
        assert_eq!(tx.pump(&mut wire, usize::MAX, |_| panic!()).unwrap(), Outcome::Starved);
        wire.incoming.extend_from_slice(&g[3..]);
        assert_eq!(tx.pump(&mut wire, usize::MAX, |_| panic!()).unwrap(), Outcome::Starved);
        assert_eq!(wire.sent.len(), 1000);
        // Two grants at once: the larger counts. With room enough, no read at all.
        wire.incoming.extend_from_slice(&grant::encode(3000));
        wire.incoming.extend_from_slice(&grant::encode(grant::UNLIMITED));
        let calls = wire.calls;
        let mut done = vec![];
        assert_eq!(
            tx.pump(&mut wire, usize::MAX, |n| done.push(n)).unwrap(),
            Outcome::Drained
        );
        assert_eq!((done, wire.calls - calls), (vec![10_000], 2), "one read, one send");
        assert_eq!(wire.sent, wire_image(&[bytes(10_000, 4)]));
        // A grant that goes back, bytes that are no grant, and the receiver closing.
        for (incoming, eof, what) in [
            (grant::encode(10).to_vec(), false, "went back"),
            (vec![0x55; 8], false, "where a tcpxr grant"),
            (vec![], true, "receiver closed"),
        ] {
            let mut tx = Mover::sender();
            let mut wire = Scripted {
                incoming: [grant::encode(100).as_slice(), &incoming].concat(),
                eof,
                ..Default::default()
            };
            let mut more = bytes(200, 5);
            tx.push(frame(&mut more, 0));
            let e = tx.pump(&mut wire, usize::MAX, |_| panic!()).unwrap_err();
            assert_eq!(e.code, ncclResult_t::ncclRemoteError);
            assert!(e.msg.contains(what), "{}", e.msg);
        }
    }

    #[test]
    fn a_receiver_grants_half_a_window_at_a_time_and_keeps_a_grant_the_socket_refused() {
        let payloads = vec![bytes(3000, 1), bytes(3000, 2)];
        let mut outs = vec![vec![0u8; 3000]; 2];
        let mut rx = Mover::receiver(WindowBounds::fixed(4000));
        for (seq, o) in outs.iter_mut().enumerate() {
            rx.push(frame(o, seq as u64));
        }
        let mut wire = Scripted {
            incoming: wire_image(&payloads),
            ..Default::default()
        };
        assert!(rx.flush_grant(&mut wire).unwrap());
        let grants = |w: &Scripted| -> Vec<u64> {
            w.sent
                .chunks(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()) & grant::UNLIMITED)
                .collect()
        };
        assert_eq!(grants(&wire), vec![4000]);
        // 1999 bytes read: the next grant (5999) is not yet half a window on.
        wire.limits = [1999, 0].into();
        rx.pump(&mut wire, usize::MAX, |_| {}).unwrap();
        assert_eq!(grants(&wire), vec![4000]);
        // One more byte: 6000 is. Then the socket refuses the next grant (limit 0 on the send);
        // it goes with the next pump.
        wire.limits = [1, 2016, 0].into();
        rx.pump(&mut wire, usize::MAX, |_| {}).unwrap();
        assert_eq!(grants(&wire), vec![4000, 6000]);
        // (A pump retries a refused grant before each read: one more 0.)
        wire.limits = [2000, 0, 0, 0].into();
        rx.pump(&mut wire, usize::MAX, |_| {}).unwrap();
        assert_eq!(grants(&wire), vec![4000, 6000], "refused");
        wire.limits = [].into();
        rx.pump(&mut wire, usize::MAX, |_| {}).unwrap();
        assert_eq!(outs, payloads);
        assert_eq!(grants(&wire), vec![4000, 6000, 8000, 10032]);
    }

    #[test]
    fn a_window_doubles_while_the_sender_waits_on_it_and_halves_back_once_it_does_not() {
        let payload = bytes(200_000, 7);
        let image = wire_image(std::slice::from_ref(&payload));
        let mut out = vec![0u8; payload.len()];
        let mut rx = Mover::receiver(WindowBounds {
            least: 1000,
            most: 4000,
        });
        let mut wire = Scripted::default();
        assert!(rx.flush_grant(&mut wire).unwrap());
        let last_grant =
            |w: &Scripted| u64::from_le_bytes(w.sent[w.sent.len() - 8..].try_into().unwrap()) & grant::UNLIMITED;
        // The sender stops at each grant: the wire holds the stream up to it.
        let feed = |w: &mut Scripted| {
            let upto = last_grant(w) as usize;
            w.incoming = image[..upto].to_vec();
        };
        // A late receiver: the sender filled the window before the receive was posted.
        feed(&mut wire);
        assert_eq!(rx.pump(&mut wire, usize::MAX, |_| panic!()).unwrap(), Outcome::Drained);
        rx.push(frame(&mut out, 0));
        assert_eq!(rx.pump(&mut wire, usize::MAX, |_| panic!()).unwrap(), Outcome::Blocked);
        assert_eq!(
            (rx.window_growth(), last_grant(&wire)),
            (Some((0, 1000)), 2000),
            "late, not short"
        );
        // Now it waits (it found the socket empty) and the sender stops at the grant: the window
        // was short, and doubles, up to its most.
        for (growths, window) in [(1, 2000), (2, 4000), (2, 4000)] {
            let read = last_grant(&wire);
            feed(&mut wire);
            assert_eq!(rx.pump(&mut wire, usize::MAX, |_| panic!()).unwrap(), Outcome::Blocked);
            assert_eq!(rx.window_growth(), Some((growths, 4000.min(window))));
            assert_eq!(last_grant(&wire), read + window);
        }
        // A receiver that is behind (budgets of 500 bytes: it never finds the socket empty, and
        // never reads up to the grant): after 8 windows of 4000 it halves, after 8 of 2000 again.
        let grown_at = rx.moved();
        let mut windows = vec![];
        while rx.moved() < grown_at + 90_000 {
            feed(&mut wire);
            assert_eq!(rx.pump(&mut wire, 500, |_| panic!()).unwrap(), Outcome::Budget);
            let window = last_grant(&wire) - rx.moved();
            if windows.last() != Some(&window) {
                windows.push(window);
            }
        }
        // Between grants the receiver reads into the window, so what is left of it varies; the
        // grants' span shows its size.
        let first_below = |limit: u64| windows.iter().position(|&w| w <= limit);
        assert!(windows.iter().all(|&w| w <= 4000) && windows[0] > 2000, "{windows:?}");
        let (halved, least) = (first_below(2000).unwrap(), first_below(1000).unwrap());
        assert!(
            halved < least && windows[halved..].iter().all(|&w| w <= 2000),
            "{windows:?}"
        );
        assert!(
            windows[least..].iter().all(|&w| w == 1000),
            "back to its least: {windows:?}"
        );
        assert_eq!(rx.window_growth(), Some((2, 4000)));
    }

    #[test]
    fn a_budget_caps_the_payload_one_pump_moves_and_the_next_pump_goes_on() {
        let mut payloads = vec![bytes(1000, 1), bytes(1000, 2)];
        let mut tx = Mover::new(Direction::Send);
        for (seq, p) in payloads.iter_mut().enumerate() {
            tx.push(frame(p, seq as u64));
        }
        let mut wire = Scripted::default();
        let mut done = vec![];
        assert_eq!(tx.pump(&mut wire, 600, |n| done.push(n)).unwrap(), Outcome::Budget);
        assert_eq!(wire.sent.len(), HEADER_BYTES + 600, "headers are free");
        assert_eq!(tx.backlog(), 1400);
        assert_eq!(tx.pump(&mut wire, 600, |n| done.push(n)).unwrap(), Outcome::Budget);
        assert_eq!(wire.sent.len(), 2 * HEADER_BYTES + 1200);
        assert_eq!(done, vec![1000]);
        assert_eq!(
            tx.pump(&mut wire, 0, |n| done.push(n)).unwrap(),
            Outcome::Budget,
            "0 moves 1"
        );
        assert_eq!(wire.sent.len(), 2 * HEADER_BYTES + 1201);
        assert_eq!(
            tx.pump(&mut wire, 799, |n| done.push(n)).unwrap(),
            Outcome::Drained,
            "exactly"
        );
        assert_eq!(wire.sent, wire_image(&payloads));
        // A frame of exactly the budget goes in one pump, header and all.
        let mut one = bytes(4096, 3);
        tx.push(frame(&mut one, 2));
        assert_eq!(tx.pump(&mut wire, 4096, |n| done.push(n)).unwrap(), Outcome::Drained);
        // A receive stops at the budget too, mid-frame.
        let mut outs = vec![vec![0u8; 1000]; 2];
        let mut rx = Mover::new(Direction::Recv);
        for (seq, o) in outs.iter_mut().enumerate() {
            rx.push(frame(o, seq as u64));
        }
        let mut wire = Scripted {
            incoming: wire_image(&payloads),
            ..Default::default()
        };
        assert_eq!(rx.pump(&mut wire, 500, |_| {}).unwrap(), Outcome::Budget);
        assert_eq!(rx.backlog(), 500);
        assert_eq!(rx.pump(&mut wire, usize::MAX, |_| {}).unwrap(), Outcome::Drained);
        assert!(outs == payloads);
    }

    #[test]
    fn a_frame_that_is_not_the_posted_one_is_an_error_and_nothing_lands_outside_the_posted_buffers() {
        // The sender cut 50 bytes where the receiver posted 100: the header says so.
        let mut guarded = vec![0xEEu8; 300];
        let mut rx = Mover::new(Direction::Recv);
        rx.push(frame(&mut guarded[100..200], 0));
        let mut image = wire_image(&[bytes(50, 1), bytes(50, 2)]);
        image.extend_from_slice(&[0xAB; 200]);
        let mut wire = Scripted {
            incoming: image,
            ..Default::default()
        };
        let e = rx
            .pump(&mut wire, usize::MAX, |_| panic!("nothing completes"))
            .unwrap_err();
        assert_eq!(e.code, ncclResult_t::ncclRemoteError);
        assert!(
            e.msg.contains("chunk 0 of 50 bytes arrived where chunk 0 of 100"),
            "{}",
            e.msg
        );
        assert!(guarded[..100].iter().chain(&guarded[200..]).all(|b| *b == 0xEE));
        // A chunk out of order, and garbage, are caught the same way.
        for (image, what) in [
            (
                wire_image(&[vec![], bytes(100, 3)])[HEADER_BYTES..].to_vec(),
                "chunk 1 of 100",
            ),
            (vec![0x55; 200], "no tcpxr frame header"),
        ] {
            let mut out = vec![0u8; 100];
            let mut rx = Mover::new(Direction::Recv);
            rx.push(frame(&mut out, 0));
            let mut wire = Scripted {
                incoming: image,
                ..Default::default()
            };
            let e = rx.pump(&mut wire, usize::MAX, |_| panic!()).unwrap_err();
            assert!(e.msg.contains(what), "{}", e.msg);
        }
    }

    #[test]
    fn the_peer_closing_mid_frame_or_between_frames_is_a_remote_error_that_says_which() {
        let payload = bytes(1000, 5);
        for (cut, what) in [
            (500, "in the middle of chunk 0 (500 of its 1016"),
            (0, "before chunk 0"),
        ] {
            let mut out = vec![0u8; 1000];
            let mut rx = Mover::new(Direction::Recv);
            rx.push(frame(&mut out, 0));
            let mut wire = Scripted {
                incoming: wire_image(std::slice::from_ref(&payload))[..cut].to_vec(),
                eof: true,
                ..Default::default()
            };
            let e = rx.pump(&mut wire, usize::MAX, |_| panic!()).unwrap_err();
            assert_eq!(e.code, ncclResult_t::ncclRemoteError);
            assert!(e.msg.contains(what), "{}", e.msg);
        }
    }

    #[test]
    fn a_socket_error_is_reported_by_kind() {
        struct Failing(ErrorKind);
        impl Wire for Failing {
            unsafe fn send(&mut self, _: &[libc::iovec]) -> io::Result<usize> {
                Err(self.0.into())
            }
            unsafe fn recv(&mut self, _: &[libc::iovec]) -> io::Result<usize> {
                Err(self.0.into())
            }
        }
        let mut data = bytes(10, 0);
        let mut tx = Mover::new(Direction::Send);
        tx.push(frame(&mut data, 0));
        let e = tx
            .pump(&mut Failing(ErrorKind::BrokenPipe), usize::MAX, |_| {})
            .unwrap_err();
        assert_eq!(e.code, ncclResult_t::ncclRemoteError);
        let e = tx
            .pump(&mut Failing(ErrorKind::PermissionDenied), usize::MAX, |_| {})
            .unwrap_err();
        assert_eq!(e.code, ncclResult_t::ncclSystemError);
    }
}
