//! A stripe's window in tcpxr's own protocol: the receiver lets the sender have at most `window`
//! bytes on the wire that it has not read yet.
//!
//! **Why.** Left to TCP, a stripe's unread bytes grow to whatever the kernel's autotuning allows
//! (megabytes a socket, 32 sockets a rank), and the bytes the receiver copies out have left the
//! cache by then: per GB, the receiving copy cost 247 ms in tcpxr's I/O threads against 158 in plain
//! TCP's (docs/BENCHMARKS.md, "Socket buffers and the copy's cost"). Small socket buffers keep the
//! bytes warm but hand the limit to TCP, whose small window stalls on loss-probe timers while a
//! descheduled receiver holds its socket, and whose zero window a late receiver turns into a dead
//! peer (TCP_USER_TIMEOUT). Here the limit is tcpxr's: TCP keeps its large window, and bytes the
//! receiver is not ready for wait in the sender's own buffer, which costs nothing.
//!
//! **Format.** The receiver writes grants on the stripe's reverse direction, which carries nothing
//! else: 8 bytes little-endian, [`MAGIC`] in the top byte and below it the stream offset (headers
//! included) up to which the sender may send. Grants only grow. The first one is written when the
//! receiving stripe starts, so a sender waits for it before its first byte; a receiver without a
//! window grants [`UNLIMITED`] once.
//!
//! **Off by default** (NCCL_TCPXR_UNREAD_BYTES=0): a 256 KiB window brought the copies' cost a byte
//! down to plain TCP's and made the 4-rank ring 1.4x faster, but in NCCL it helped some collectives
//! and slowed sendrecv and 2-rank all_reduce (docs/BENCHMARKS.md, "The stripes' window").
//!
//! **Growth** (NCCL_TCPXR_UNREAD_MAX_BYTES): sendrecv's few stripes a peer each carry more than
//! a collective's, and a fixed window that suits the many starves the few. A window that doubles
//! while the sender waits on it kept sendrecv at its speed without a window at 4 ranks, and most
//! of the collectives' gain; at 2 ranks it lost on one instance and not on another (runs
//! 229-232). See [`Grants::after_read`].
//!
//! **Rhythm.** The receiver grants `read + window` once that is at least half a window past its last
//! grant; the sender reads grants only when its allowance is short of what it is about to send. So
//! a grant costs one small write on the receiving side and, at most, one read on the sending side,
//! and at most about three grants wait unread: the reverse direction cannot fill, and a grant's
//! write never finds it full (if it did, the grant is kept and written on the next pump).
//! No deadlock: a sender stopped at its allowance `g` has sent `g`; a receiver that has read all of
//! it grants `g + window`, since that is a whole window past `g`.
//!
//! **Close.** A grant that reaches a sender after NCCL closed its send comm makes the sender's
//! kernel answer with a reset, which discards whatever it had not yet had acknowledged, bytes NCCL
//! already counts as sent. Two rules keep that from losing any: a receiving stripe's window fits
//! in its socket's receive buffer ([`WindowBounds::fitted`]), so the receiver's kernel takes every
//! granted byte at once whether or not it reads; and a closing sender waits for that kernel's
//! acknowledgement of its last bytes (stripe.rs, `CLOSE_ACK_WAIT`), which is then a round trip.
use super::mover::Wire;
use crate::error::{Error, Result};
use crate::net::conn::{self, Direction};
use std::io::ErrorKind;

pub const GRANT_BYTES: usize = 8;
const MAGIC: u8 = 0xC7;
/// The largest offset a grant carries: no limit in practice (64 PiB a stripe).
pub const UNLIMITED: u64 = (1 << 56) - 1;

pub(super) fn encode(limit: u64) -> [u8; GRANT_BYTES] {
    debug_assert!(limit <= UNLIMITED);
    (limit | (MAGIC as u64) << 56).to_le_bytes()
}

fn decode(bytes: [u8; GRANT_BYTES]) -> Result<u64> {
    let v = u64::from_le_bytes(bytes);
    if (v >> 56) as u8 != MAGIC {
        return Err(Error::remote(format!(
            "stripe peer sent {bytes:02x?} where a tcpxr grant (top byte {MAGIC:#x}) belongs"
        )));
    }
    Ok(v & UNLIMITED)
}

/// The sending side: how far the receiver lets it go.
pub struct Allowance {
    /// Stream offset the receiver has granted up to.
    limit: u64,
    /// The start of a grant whose rest has not arrived.
    partial: [u8; GRANT_BYTES],
    have: usize,
}

impl Allowance {
    /// Nothing granted yet: the receiver's first grant opens the stripe.
    pub fn none() -> Allowance {
        Allowance {
            limit: 0,
            partial: [0; GRANT_BYTES],
            have: 0,
        }
    }

    /// As if the receiver had granted [`UNLIMITED`] (the tests' senders).
    #[cfg(test)]
    pub fn unlimited() -> Allowance {
        Allowance {
            limit: UNLIMITED,
            ..Allowance::none()
        }
    }

    /// Whether the receiver may still write grants: it has not granted [`UNLIMITED`], which a
    /// receiver without a window does once, first.
    pub fn more_may_come(&self) -> bool {
        self.limit < UNLIMITED
    }

    /// Bytes that may go now, `sent` having gone.
    pub fn room(&self, sent: u64) -> u64 {
        self.limit.saturating_sub(sent)
    }

    /// Reads the grants that have arrived, without blocking. Errors: the peer gone or closing, a
    /// grant that is not one or goes backwards.
    pub fn read(&mut self, wire: &mut impl Wire) -> Result<()> {
        let mut buf = [0u8; 64];
        loop {
            let iov = [libc::iovec {
                iov_base: buf.as_mut_ptr() as *mut libc::c_void,
                iov_len: buf.len(),
            }];
            // SAFETY: `buf` is this frame's own, writable for its length and borrowed by nobody.
            let n = match unsafe { wire.recv(&iov) } {
                Ok(0) => {
                    return Err(Error::remote(
                        "stripe send failed, peer gone: the receiver closed the connection while chunks \
                         waited to be sent",
                    ))
                }
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(conn::error("stripe", Direction::Send, e)),
            };
            for &b in &buf[..n] {
                self.partial[self.have] = b;
                self.have += 1;
                if self.have == GRANT_BYTES {
                    self.have = 0;
                    let limit = decode(self.partial)?;
                    if limit < self.limit {
                        return Err(Error::remote(format!(
                            "stripe peer's grant went back from {} to {limit}",
                            self.limit
                        )));
                    }
                    self.limit = limit;
                }
            }
            if n < buf.len() {
                return Ok(());
            }
        }
    }
}

/// A receiving stripe's window: `least` bytes (0: no window), growing up to `most` while the
/// sender waits on it (NCCL_TCPXR_UNREAD_BYTES and NCCL_TCPXR_UNREAD_MAX_BYTES).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowBounds {
    pub least: u64,
    pub most: u64,
}

impl WindowBounds {
    /// A window that stays `window` bytes (0: none).
    pub fn fixed(window: u64) -> WindowBounds {
        WindowBounds {
            least: window,
            most: window,
        }
    }

    /// The SO_RCVBUF a receiving stripe asks for, `rcvbuf` being NCCL_TCPXR_SOCKET_RCVBUF (0:
    /// autotuning): at least twice the largest window, so that TCP takes every byte the window
    /// grants even from a receiver that has read nothing yet (the kernel's autotuning starts near
    /// 128 KiB, which took 113 KiB unread on loopback). [`WindowBounds::fitted`] is what the
    /// kernel honours of it.
    pub fn receive_buffer(self, rcvbuf: usize) -> usize {
        match self.most {
            0 => rcvbuf,
            w => rcvbuf.max(2 * w as usize),
        }
    }

    /// The bounds a receiving socket whose kernel keeps an SO_RCVBUF of `kept` bytes can honour:
    /// at most a quarter of it (Linux keeps twice what was asked, and TCP advertises about half
    /// of what it keeps), and never below [`MIN_FITTED_WINDOW`]. Every granted byte must fit in
    /// the receiver's kernel: one the sender's kernel still holds when NCCL closes the send comm
    /// is lost if a later grant arrives after the close and makes it a reset. The stripes ask
    /// for twice the window, but `net.core.rmem_max` silently caps what they get (212992 bytes
    /// on a stock kernel).
    pub fn fitted(self, kept: usize) -> WindowBounds {
        if self.most == 0 {
            return self;
        }
        let most = self.most.min(((kept / 4) as u64).max(MIN_FITTED_WINDOW));
        WindowBounds {
            least: self.least.min(most),
            most,
        }
    }
}

/// The smallest window [`WindowBounds::fitted`] leaves: a kernel that keeps less than four times
/// this for a socket (rmem_max below 8 KiB) cannot hold a useful window at all.
pub const MIN_FITTED_WINDOW: u64 = 4096;

/// A grown window halves once this many windows have been read without the sender waiting on it:
/// the bytes a window lets wait unread are what the cache holds for the receiving copy, so it
/// shrinks back once the stripe no longer needs it.
const SHRINK_AFTER_WINDOWS: u64 = 8;

/// The receiving side: the grants it owes the sender.
pub struct Grants {
    bounds: WindowBounds,
    /// Unread bytes the sender may have on the wire now, within `bounds`; 0: no limit.
    window: u64,
    /// The last grant queued (written, or in `out`).
    granted: u64,
    /// That grant's bytes, of which `out_sent` are written.
    out: [u8; GRANT_BYTES],
    out_sent: usize,
    /// The receiver has found the socket empty while a chunk was posted since the last grant.
    waited: bool,
    /// Stream offset at which the window last changed size.
    resized_at: u64,
    /// Times the window grew, and the largest it reached (NCCL_TCPXR_STATS).
    growths: u64,
    largest: u64,
}

impl Grants {
    /// The first grant is queued: [`Grants::flush`] writes it.
    pub fn new(bounds: WindowBounds) -> Grants {
        let window = bounds.least;
        let granted = if window == 0 { UNLIMITED } else { window.min(UNLIMITED) };
        Grants {
            bounds,
            window,
            granted,
            out: encode(granted),
            out_sent: 0,
            waited: false,
            resized_at: 0,
            growths: 0,
            largest: window,
        }
    }

    /// As [`Grants::new`] once the first grant is written (the tests' receivers).
    #[cfg(test)]
    pub fn written(window: u64) -> Grants {
        Grants {
            out_sent: GRANT_BYTES,
            ..Grants::new(WindowBounds::fixed(window))
        }
    }

    /// Whether a grant waits to be written.
    pub fn pending(&self) -> bool {
        self.out_sent < GRANT_BYTES
    }

    /// The receiver found no bytes while a chunk was posted (`true`), or has no chunk posted
    /// (`false`: bytes that arrive meanwhile waited for the receiver, not it for them).
    pub fn waiting(&mut self, posted: bool) {
        self.waited = posted;
    }

    /// Times the window grew and the largest it reached.
    pub fn growth(&self) -> (u64, u64) {
        (self.growths, self.largest)
    }

    /// Queues a grant if `read` (stream bytes read so far) has moved the window half its size past
    /// the last one, and writes what is queued. `mid_chunk`: a chunk has started to arrive and
    /// not finished.
    ///
    /// The window doubles when the sender waited on it while the receiver waited on the sender:
    /// the receiver has read everything granted in the middle of a chunk (so the sender, which
    /// holds the whole chunk, stopped at the grant) after finding the socket empty since that
    /// grant (so it was ready for more). A receiver that was merely late reads a full window
    /// without waiting and the window stays. It halves back toward `least` after
    /// [`SHRINK_AFTER_WINDOWS`] windows read without growing.
    pub fn after_read(&mut self, read: u64, mid_chunk: bool, wire: &mut impl Wire) -> Result<()> {
        if self.window > 0 && !self.pending() {
            if read == self.granted && mid_chunk && self.waited && self.window < self.bounds.most {
                self.window = (2 * self.window).min(self.bounds.most);
                self.resized_at = read;
                self.growths += 1;
                self.largest = self.largest.max(self.window);
            } else if self.window > self.bounds.least && read - self.resized_at >= SHRINK_AFTER_WINDOWS * self.window {
                self.window = (self.window / 2).max(self.bounds.least);
                self.resized_at = read;
            }
            let next = (read + self.window).min(UNLIMITED);
            // A window that has just shrunk may put `next` below the last grant: grants only grow.
            if next.saturating_sub(self.granted) >= self.window.div_ceil(2) {
                self.granted = next;
                self.out = encode(next);
                self.out_sent = 0;
                self.waited = false;
            }
        }
        self.flush(wire)
    }

    /// Writes what is left of the queued grant, as far as the socket takes it.
    pub fn flush(&mut self, wire: &mut impl Wire) -> Result<()> {
        while self.pending() {
            let rest = &self.out[self.out_sent..];
            let iov = [libc::iovec {
                iov_base: rest.as_ptr() as *mut libc::c_void,
                iov_len: rest.len(),
            }];
            // SAFETY: `out` is owned here and readable for the iovec's length.
            match unsafe { wire.send(&iov) } {
                // Took nothing: as full.
                Ok(0) => return Ok(()),
                Ok(n) => self.out_sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(conn::error("stripe", Direction::Recv, e)),
            }
        }
        Ok(())
    }
}
