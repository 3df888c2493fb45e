//! The control connection of a comm: tcpxr's own TCP socket, driven without blocking from NCCL's
//! thread. Outgoing bytes queue and drain as the socket allows: headers are copied into the queue,
//! large inline payloads are queued by reference and written from NCCL's buffer with the rest in
//! one gathered write. Incoming bytes are read on demand, as many as the caller asks for, straight
//! into where they belong: a header into the header, an inline payload into NCCL's buffer.
//!
//! Exact reads cost a small message two recvs instead of one, and still land its payload sooner.
//! Each connection carries data one way, so the receiver owes the sender an ACK for every small
//! message, and the recv that drains the socket sends it (the kernel's `tcp_cleanup_rbuf`): over
//! loopback the whole delivery of that ACK, after the bytes are copied. One read of header and
//! payload into a buffer of tcpxr's took 3.4-3.5 us against 1.4-1.5 for a header alone, and put
//! the payload in NCCL's buffer 0.5-1.3 us later than Socket's size-then-payload reads do (runs
//! 391-392, 2 ranks on one H200). NCCL's LL kernel sees a payload as soon as it lands: with exact
//! reads it lands as early as Socket's (run 397), and the all_gather of 32-128 B took 0.91-0.94 of
//! the time it took with the buffer (runs 393-394).
//!
//! A header and the small payload behind it can also come in one gathered read
//! ([`Ctrl::read_header_then`]): the header into the header, the rest straight into NCCL's buffer,
//! so the payload still lands inside the call, before the ACK. Until the header is decoded the
//! payload's size is unknown, so the read may take bytes of the messages behind it too: the
//! caller hands those back ([`Ctrl::unread`]) and later reads take them first.
use crate::error::{Error, Result};
use crate::net::conn::{self, Direction};
use crate::net::sys;
use std::collections::VecDeque;
use std::io::{ErrorKind, Read};
use std::net::TcpStream;
use std::os::fd::AsRawFd;

/// A run of queued bytes: `Copied(n)`, the next n bytes of `out`; or memory the caller keeps.
enum Seg {
    Copied(usize),
    Borrowed(*const u8, usize),
}

/// Segments gathered into one write at most (well under the kernel's IOV_MAX of 1024).
const GATHER: usize = 64;
/// Written copied bytes kept at the front of `out` before it is compacted.
const COMPACT_AT: usize = 64 << 10;
/// Inline payloads from this size on are queued by reference rather than copied.
pub const BORROW_FROM: usize = 4096;

pub struct Ctrl {
    stream: TcpStream,
    /// Copied bytes not yet written start at `out[out_pos]`; `segs` says how they interleave with
    /// borrowed ones, and `seg_done` how much of the first segment is already written.
    out: Vec<u8>,
    out_pos: usize,
    segs: VecDeque<Seg>,
    seg_done: usize,
    /// Bytes ever queued / ever written, so callers can ask "is my message out yet?".
    queued: u64,
    written: u64,
    /// Bytes ever received (for the stall report).
    read: u64,
    /// Bytes a gathered read took past its message, handed back by [`Ctrl::unread`]: the stream's
    /// next bytes, which every read takes before the socket's.
    ahead: Vec<u8>,
    ahead_pos: usize,
}

// SAFETY: the borrowed segments point at NCCL's send buffers, which NCCL keeps alive and
// unchanged until the send is reported done; the Ctrl is only ever used under its comm's mutex.
unsafe impl Send for Ctrl {}

impl Ctrl {
    /// Takes over a connected socket. `peer_timeout_ms`: a peer that stops answering (no data
    /// acknowledged, no keepalive answered) makes the connection fail within about that time, so a
    /// receive waiting for a header, or an inline payload that cannot be written, ends as
    /// ncclRemoteError instead of waiting forever.
    pub fn new(stream: TcpStream, peer_timeout_ms: u64) -> Result<Self> {
        stream
            .set_nonblocking(true)
            .map_err(|e| Error::os("set_nonblocking", e))?;
        stream.set_nodelay(true).map_err(|e| Error::os("TCP_NODELAY", e))?;
        crate::net::sys::set_peer_timeout(&stream, peer_timeout_ms)
            .map_err(|e| Error::os("control connection peer timeout", e))?;
        Ok(Ctrl {
            stream,
            out: Vec::new(),
            out_pos: 0,
            segs: VecDeque::new(),
            seg_done: 0,
            queued: 0,
            written: 0,
            read: 0,
            ahead: Vec::new(),
            ahead_pos: 0,
        })
    }

    /// The control connection's socket, for profiler events.
    pub fn fd(&self) -> std::ffi::c_int {
        use std::os::fd::AsRawFd;
        self.stream.as_raw_fd()
    }

    /// Queues a copy of `bytes`; returns the stream offset at which they end.
    pub fn queue(&mut self, bytes: &[u8]) -> u64 {
        if bytes.is_empty() {
            return self.queued;
        }
        self.out.extend_from_slice(bytes);
        match self.segs.back_mut() {
            Some(Seg::Copied(n)) => *n += bytes.len(),
            _ => self.segs.push_back(Seg::Copied(bytes.len())),
        }
        self.queued += bytes.len() as u64;
        self.queued
    }

    /// Queues `len` bytes at `ptr` without copying them; returns the stream offset at which they
    /// end.
    ///
    /// # Safety
    /// `ptr .. ptr + len` must stay readable and unchanged until `written()` reaches that offset
    /// (or this Ctrl is dropped).
    pub unsafe fn queue_borrowed(&mut self, ptr: *const u8, len: usize) -> u64 {
        if len > 0 {
            self.segs.push_back(Seg::Borrowed(ptr, len));
            self.queued += len as u64;
        }
        self.queued
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    /// Bytes ever queued and ever received.
    pub fn queued_and_read(&self) -> (u64, u64) {
        (self.queued, self.read)
    }

    /// The peer's address, for messages.
    pub fn peer(&self) -> String {
        self.stream
            .peer_addr()
            .map_or_else(|_| "an unknown peer".into(), |a| a.to_string())
    }

    pub fn idle(&self) -> bool {
        self.segs.is_empty()
    }

    /// Whether the peer has closed or lost its end of the connection, looked at without reading
    /// (one poll, no data consumed): bytes waiting to be read do not hide a close. None while it
    /// is open (or the look itself failed).
    pub fn peer_gone(&self) -> Option<PeerGone> {
        let events = crate::net::sys::poll_events(&self.stream, libc::POLLRDHUP, 0).ok()?;
        if events & libc::POLLERR != 0 {
            let why = match self.stream.take_error() {
                Ok(Some(e)) => e.to_string(),
                _ => "failed".to_string(),
            };
            return Some(PeerGone::Failed(why));
        }
        (events & (libc::POLLRDHUP | libc::POLLHUP) != 0).then_some(PeerGone::Closed)
    }

    /// Writes as much of the queue as the socket takes now, in gathered writes: `sendmsg` with
    /// MSG_NOSIGNAL, so a peer gone is EPIPE, never SIGPIPE, whose default action would end the
    /// host process (a `writev` cannot pass the flag: until 2026-11-29 a C program's sends to a
    /// closed peer died there; tests/faults.rs).
    pub fn flush(&mut self) -> Result<()> {
        while !self.segs.is_empty() {
            // On the stack: flush runs on every progress pass.
            let mut iov = [libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            }; GATHER];
            let mut count = 0;
            let mut at = self.out_pos;
            for (i, seg) in self.segs.iter().take(GATHER).enumerate() {
                let skip = if i == 0 { self.seg_done } else { 0 };
                let (base, len) = match *seg {
                    Seg::Copied(n) => {
                        at += n - skip;
                        (self.out[at - (n - skip)..at].as_ptr(), n - skip)
                    }
                    // SAFETY: queue_borrowed's caller keeps the range readable until it is written.
                    Seg::Borrowed(p, n) => (unsafe { p.add(skip) }, n - skip),
                };
                iov[i] = libc::iovec {
                    iov_base: base as *mut libc::c_void,
                    iov_len: len,
                };
                count = i + 1;
            }
            // SAFETY: each entry names bytes of `out`, not changed during the call, or borrowed
            // memory its queuer keeps readable until written.
            match unsafe { sys::send_iov(self.stream.as_raw_fd(), &iov[..count]) } {
                Ok(n) => self.advance(n),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(control_error(Direction::Send, e)),
            }
        }
        self.out.clear();
        self.out_pos = 0;
        Ok(())
    }

    /// Retires `n` written bytes from the front of the queue.
    fn advance(&mut self, mut n: usize) {
        self.written += n as u64;
        while n > 0 {
            let Some(seg) = self.segs.front() else { break };
            let len = match *seg {
                Seg::Copied(len) | Seg::Borrowed(_, len) => len,
            };
            let take = n.min(len - self.seg_done);
            if matches!(seg, Seg::Copied(_)) {
                self.out_pos += take;
            }
            self.seg_done += take;
            n -= take;
            if self.seg_done == len {
                self.segs.pop_front();
                self.seg_done = 0;
            }
        }
        // A queue that never quite drains must not keep every byte it ever wrote.
        if self.out_pos >= COMPACT_AT && self.out_pos * 2 >= self.out.len() {
            self.out.drain(..self.out_pos);
            self.out_pos = 0;
        }
    }

    /// One non-blocking recv into `buf`; Ok(0) means nothing yet. A closed connection is an error.
    fn recv_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.recv_with(|mut s| s.read(buf))
    }

    /// One non-blocking receive by `recv` (a read or a gathered read), retried when interrupted
    /// and counted; Ok(0) means nothing yet. A closed connection is an error.
    fn recv_with(&mut self, mut recv: impl FnMut(&TcpStream) -> std::io::Result<usize>) -> Result<usize> {
        loop {
            match recv(&self.stream) {
                Ok(0) => return Err(Error::remote("control connection closed by peer")),
                Ok(n) => {
                    self.read += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(0),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(control_error(Direction::Recv, e)),
            }
        }
    }

    /// Fills `buf[*got..]` as far as the stream has bytes, those handed back first; true once
    /// full. Reads no byte past `buf` (module doc: the next message's bytes stay in the socket).
    pub fn read_into(&mut self, buf: &mut [u8], got: &mut usize) -> Result<bool> {
        let from_ahead = (self.ahead.len() - self.ahead_pos).min(buf.len() - *got);
        if from_ahead > 0 {
            buf[*got..*got + from_ahead].copy_from_slice(&self.ahead[self.ahead_pos..self.ahead_pos + from_ahead]);
            *got += from_ahead;
            self.ahead_pos += from_ahead;
            if self.ahead_pos == self.ahead.len() {
                self.ahead.clear();
                self.ahead_pos = 0;
            }
        }
        while *got < buf.len() {
            let n = self.recv_some(&mut buf[*got..])?;
            if n == 0 {
                return Ok(false);
            }
            *got += n;
        }
        Ok(true)
    }

    /// Reads a header and what follows it in one call: `header` first, then into `then`, as far
    /// as the socket has bytes. Returns how many landed in `then`, which may include bytes of
    /// later messages: the caller gives back what is not its own with [`Ctrl::unread`] before
    /// the next read. Only for a header not yet begun with nothing handed back pending; otherwise
    /// it reads as [`Ctrl::read_into`] does, the header alone. `got`: the header's bytes so far.
    pub fn read_header_then(&mut self, header: &mut [u8], got: &mut usize, then: &mut [u8]) -> Result<usize> {
        if *got > 0 || self.ahead_pos < self.ahead.len() || then.is_empty() {
            self.read_into(header, got)?;
            return Ok(0);
        }
        let iov = [
            libc::iovec {
                iov_base: header.as_mut_ptr() as *mut libc::c_void,
                iov_len: header.len(),
            },
            libc::iovec {
                iov_base: then.as_mut_ptr() as *mut libc::c_void,
                iov_len: then.len(),
            },
        ];
        // recvmsg, as the stripes read: the socket call without readv's file layer around it (a
        // failed poll, what most calls are, took 5-10 % less on this repository's CPU host).
        // SAFETY: both entries name the caller's exclusive buffers, writable for their lengths.
        let n = self.recv_with(|s| unsafe { sys::recv_iov(s.as_raw_fd(), &iov) })?;
        *got = n.min(header.len());
        Ok(n - *got)
    }

    /// Hands back `bytes`, the stream's next ones that a [`Ctrl::read_header_then`] took past
    /// its message: later reads take them before the socket's.
    pub fn unread(&mut self, bytes: &[u8]) {
        debug_assert!(self.ahead_pos == self.ahead.len(), "handed back twice");
        self.ahead.clear();
        self.ahead_pos = 0;
        self.ahead.extend_from_slice(bytes);
    }
}

/// How a peer left its end of a control connection ([`Ctrl::peer_gone`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerGone {
    /// An orderly close (its FIN): its process exited, or it closed the comm.
    Closed,
    /// A reset, or no answer within the peer timeout (keepalive, TCP_USER_TIMEOUT): the reason.
    Failed(String),
}

impl std::fmt::Display for PeerGone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerGone::Closed => f.write_str("was closed by the peer"),
            PeerGone::Failed(why) => write!(f, "failed ({why})"),
        }
    }
}

fn control_error(dir: Direction, e: std::io::Error) -> Error {
    conn::error("control connection", dir, e)
}

/// A control connection over loopback, and the socket that writes to it (the tests').
#[cfg(test)]
pub(super) fn loopback_pair() -> (Ctrl, TcpStream) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let writer = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (reader, _) = l.accept().unwrap();
    (Ctrl::new(reader, 5000).unwrap(), writer)
}

#[cfg(test)]
mod tests {
    use super::loopback_pair as pair;
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    fn read_all(c: &mut Ctrl, buf: &mut [u8]) {
        let mut got = 0;
        let start = std::time::Instant::now();
        while !c.read_into(buf, &mut got).unwrap() {
            assert!(
                start.elapsed().as_secs() < 5,
                "only {got} of {} bytes arrived",
                buf.len()
            );
        }
    }

    /// A read takes no byte past what it was asked for: a header read leaves the payload behind
    /// it in the socket, for the next read to put straight into place (module doc).
    #[test]
    fn a_read_takes_no_byte_past_its_buffer() {
        let (mut c, mut w) = pair();
        w.write_all(&[7u8; 40]).unwrap();
        let mut header = [0u8; 16];
        read_all(&mut c, &mut header);
        assert_eq!(
            c.queued_and_read().1,
            16,
            "all 40 bytes were there; only the 16 asked for are read"
        );
        let mut payload = [0u8; 24];
        let mut got = 0;
        assert!(c.read_into(&mut payload, &mut got).unwrap());
        assert_eq!((got, payload, c.queued_and_read().1), (24, [7u8; 24], 40));
        assert!(!c.read_into(&mut [0u8; 1], &mut 0).unwrap(), "nothing more was sent");
    }

    /// A gathered read puts the header and what follows into two buffers in one call; what it
    /// took past its message, handed back, comes first to the next reads, before the socket's.
    #[test]
    fn a_gathered_read_fills_header_then_payload_and_what_it_hands_back_is_read_first() {
        let (mut c, mut w) = pair();
        // A header, its 8-byte payload, the next header and its first 4 bytes.
        let stream: Vec<u8> = (0..44u8).collect();
        w.write_all(&stream).unwrap();
        let (mut header, mut got, mut then) = ([0u8; 16], 0, [0u8; 64]);
        let start = std::time::Instant::now();
        let mut took = 0;
        while got + took < stream.len() {
            assert!(start.elapsed().as_secs() < 5, "only {got} + {took} bytes arrived");
            took += c.read_header_then(&mut header, &mut got, &mut then[took..]).unwrap();
        }
        assert_eq!((&header[..], &then[..took]), (&stream[..16], &stream[16..]));
        // The payload was 8 bytes: the rest goes back, and with it pending a gathered read takes
        // the header alone, from what was handed back.
        c.unread(&then[8..took]);
        w.write_all(&[200u8; 12]).unwrap();
        let (mut next, mut got) = ([0u8; 16], 0);
        assert_eq!(c.read_header_then(&mut next, &mut got, &mut [0u8; 64]).unwrap(), 0);
        assert_eq!((got, &next[..]), (16, &stream[24..40]));
        let mut payload = [0u8; 16];
        read_all(&mut c, &mut payload);
        assert_eq!(&payload[..4], &stream[40..44]);
        assert_eq!(&payload[4..], &[200u8; 12]);
        assert_eq!(c.queued_and_read().1, 56, "every byte counted once");
    }

    #[test]
    fn copied_and_borrowed_bytes_go_out_in_order_through_partial_gathered_writes() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = Ctrl::new(TcpStream::connect(l.local_addr().unwrap()).unwrap(), 5000).unwrap();
        let (mut reader, _) = l.accept().unwrap();
        // Payloads larger than the socket buffers, so that writes stop part-way through segments.
        let payloads: Vec<Vec<u8>> = (0..12)
            .map(|i| {
                (0..(1usize << 20) + i * 4099)
                    .map(|k| ((k * 7 + i) % 253) as u8)
                    .collect()
            })
            .collect();
        let mut expected = Vec::new();
        let mut end = 0;
        for (i, p) in payloads.iter().enumerate() {
            let header = [i as u8; 16];
            expected.extend_from_slice(&header);
            assert_eq!(c.queue(&header), end + 16);
            end += 16;
            expected.extend_from_slice(p);
            // SAFETY: `payloads` outlives every flush below.
            assert_eq!(unsafe { c.queue_borrowed(p.as_ptr(), p.len()) }, end + p.len() as u64);
            end += p.len() as u64;
            expected.extend_from_slice(b"tail");
            assert_eq!(c.queue(b"tail"), end + 4);
            end += 4;
        }
        let total = expected.len();
        let drain = std::thread::spawn(move || {
            let mut got = vec![0u8; total];
            reader.read_exact(&mut got).unwrap();
            got
        });
        let start = std::time::Instant::now();
        while !c.idle() {
            c.flush().unwrap();
            assert!(start.elapsed().as_secs() < 10, "queue did not drain");
        }
        assert_eq!(c.written(), end);
        assert!(
            drain.join().unwrap() == expected,
            "bytes arrived out of order or changed"
        );
        assert!(
            c.out.is_empty() && c.out_pos == 0,
            "a drained queue keeps no copied bytes"
        );
    }

    /// A peer that stops taking bytes (alive on loopback, but never reading: once its window is
    /// full its kernel only answers the zero-window probes) fails the control connection with
    /// ncclRemoteError about the peer timeout after the last byte went, as a stripe's does
    /// (TCP_USER_TIMEOUT). A peer that vanishes while the connection is idle is keepalive's, which
    /// only a lost link shows; its settings are read back.
    #[test]
    fn the_control_connection_gives_up_on_a_peer_that_stops_taking_bytes_within_the_peer_timeout() {
        use std::os::fd::AsRawFd;
        let timeout = std::time::Duration::from_millis(500);
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let _silent = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (r, _) = l.accept().unwrap();
        let mut c = Ctrl::new(r, timeout.as_millis() as u64).unwrap();
        let big = vec![7u8; 64 << 20];
        // SAFETY: `big` outlives every flush below.
        unsafe { c.queue_borrowed(big.as_ptr(), big.len()) };
        let start = std::time::Instant::now();
        let (mut written, mut last_progress) = (0, start);
        let err = loop {
            match c.flush() {
                Err(e) => break e,
                Ok(()) if c.written() > written => (written, last_progress) = (c.written(), std::time::Instant::now()),
                Ok(()) => std::thread::sleep(std::time::Duration::from_millis(1)),
            }
            assert!(start.elapsed().as_secs() < 20, "still no error after 20 s");
        };
        let after = last_progress.elapsed();
        assert_eq!(err.code, crate::abi::ncclResult_t::ncclRemoteError, "{}", err.msg);
        assert!(written < big.len() as u64, "the silent peer's buffers took everything");
        assert!(
            after >= timeout / 2 && after < timeout * 4,
            "gave up {after:?} after the last byte went, with a {timeout:?} peer timeout"
        );
        let get = |level, name| {
            let mut v: libc::c_int = -1;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: a live socket and an int-sized out-buffer.
            let r = unsafe {
                libc::getsockopt(
                    c.stream.as_raw_fd(),
                    level,
                    name,
                    &mut v as *mut libc::c_int as *mut libc::c_void,
                    &mut len,
                )
            };
            assert_eq!(r, 0);
            v
        };
        assert_eq!(get(libc::SOL_SOCKET, libc::SO_KEEPALIVE), 1);
        assert_eq!(get(libc::IPPROTO_TCP, libc::TCP_KEEPIDLE), 1);
    }

    /// `peer_gone` tells an open connection from one the peer closed (even with its bytes still
    /// unread here) and from one it reset (it closed with bytes of ours unread), reading nothing.
    #[test]
    fn peer_gone_tells_open_closed_and_reset_apart_without_reading() {
        let wait_for = |c: &Ctrl, what: &str, want: &dyn Fn(&Option<PeerGone>) -> bool| {
            let start = std::time::Instant::now();
            loop {
                let got = c.peer_gone();
                if want(&got) {
                    return got;
                }
                assert!(start.elapsed().as_secs() < 5, "{what}: still {got:?}");
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        };
        let (mut c, mut w) = pair();
        assert_eq!(c.peer_gone(), None);
        w.write_all(b"unread").unwrap();
        drop(w);
        wait_for(&c, "closed", &|g| g.is_some());
        assert_eq!(c.peer_gone(), Some(PeerGone::Closed));
        let mut got = [0u8; 6];
        read_all(&mut c, &mut got);
        assert_eq!(&got, b"unread", "the look consumed nothing");

        let (mut c, w) = pair();
        c.queue(b"never read by the peer");
        c.flush().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(w);
        let got = wait_for(&c, "reset", &|g| matches!(g, Some(PeerGone::Failed(_))));
        assert!(
            matches!(got, Some(PeerGone::Failed(ref why)) if why.contains("reset")),
            "{got:?}"
        );
    }

    #[test]
    fn written_copied_bytes_are_let_go_even_while_the_queue_never_drains() {
        let (mut c, _peer) = pair();
        let big = vec![7u8; 1 << 20];
        c.queue(&vec![1u8; 100 << 10]);
        // SAFETY: only the bookkeeping runs here; nothing is written from `big`.
        unsafe { c.queue_borrowed(big.as_ptr(), big.len()) };
        c.queue(b"x");
        // The copied 100 KiB and part of the borrowed payload went out: the copied bytes are
        // dropped although the queue is not empty.
        c.advance((100 << 10) + 10);
        assert_eq!((c.out_pos, c.out.len(), c.seg_done), (0, 1, 10));
        c.advance((1 << 20) - 10);
        assert_eq!(c.segs.len(), 1, "only the trailing copied byte is left");
        c.advance(1);
        assert!(c.idle());
        assert_eq!(c.written(), (100 << 10) + (1 << 20) + 1);
    }

    #[test]
    fn reads_of_any_size_keep_every_byte_in_order_and_a_closed_peer_is_an_error() {
        let (mut c, mut w) = pair();
        let big: Vec<u8> = (0..(96 << 10) + 7).map(|i| (i * 31 % 251) as u8).collect();
        // A header and a small payload in one write, then a large payload, then a trailer.
        w.write_all(b"0123456789abcdefSMALL").unwrap();
        w.write_all(&big).unwrap();
        w.write_all(b"END").unwrap();
        let mut header = [0u8; 16];
        read_all(&mut c, &mut header);
        assert_eq!(&header, b"0123456789abcdef");
        let mut small = [0u8; 5];
        read_all(&mut c, &mut small);
        assert_eq!(&small, b"SMALL");
        let mut got = vec![0u8; big.len()];
        read_all(&mut c, &mut got);
        assert!(got == big);
        let mut end = [0u8; 3];
        read_all(&mut c, &mut end);
        assert_eq!(&end, b"END");
        // Nothing more: not an error, just not yet.
        let mut more = [0u8; 1];
        assert!(!c.read_into(&mut more, &mut 0).unwrap());
        drop(w);
        let start = std::time::Instant::now();
        let err = loop {
            match c.read_into(&mut more, &mut 0) {
                Err(e) => break e,
                Ok(_) => assert!(start.elapsed().as_secs() < 5),
            }
        };
        assert_eq!(err.code, crate::abi::ncclResult_t::ncclRemoteError);
    }
}
