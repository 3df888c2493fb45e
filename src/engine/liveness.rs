//! Noticing a peer that is gone when the stripes' inner transport does not say so.
//!
//! TCPX's `test` reports a failure of its control socket, but not one of the data sockets its
//! helper threads serve: a helper thread whose send the peer reset, or whose receive found the
//! connection closed, WARNs and ends, and its requests never complete (net_tcpx.cc,
//! persistentSocketThread); `test` says so only once a later request's control message fails. A
//! sender whose receiver died while its sends were out, or a receiver whose sender died in the
//! middle of a message, that posts nothing more (NCCL waits for what is out) would wait forever.
//! tcpxr's own control connection tells instead: the peer's process closes it as it dies, and
//! the look sees that close even behind bytes not read yet (a sender's headers), so the peer's
//! end closed or failed means the peer is gone.
//!
//! The look costs one `poll` and is taken only while chunks are in flight on the stripes and
//! nothing has moved for [`LOOK_AFTER`] (again every [`LOOK_AFTER`] while that lasts); a moving
//! comm reads no clock either but every [`SAMPLE`]th still pass. Chunks in flight, not merely
//! requests outstanding: a receiver whose chunks wait for NCCL to consume earlier receives waits
//! on NCCL, not on the network. A reset or a timed-out connection ends the comm at once. An
//! orderly close does only when nothing moves for [`CLOSED_GRACE`] after it was seen: a peer that
//! closed normally did so after its own requests completed, so what is in flight here is already
//! on its way (a receiver that received everything leaves sends TCPX reports done a moment after
//! that receiver's close: TCPX reports a send of GPU memory once the kernel's zero-copy completion
//! for it arrived; a sender that sent everything leaves bytes in this side's socket buffers), and
//! it must complete, not fail.
use super::ctrl::PeerGone;
use std::time::{Duration, Instant};

/// No progress for this long with chunks in flight: look at the control connection.
pub const LOOK_AFTER: Duration = Duration::from_millis(100);
/// After the peer's orderly close was seen, how long nothing may move before the comm fails. Not
/// 1 s (as first written): what stands still after a normal close can be this side's own delay,
/// bytes already here but not taken (a receive queued behind a long kernel, TCPX's pages held
/// until NCCL consumes earlier receives, tcpxr's unpack on a busy GPU), and 5 s, the default
/// peer timeout, lets such a delay pass where 1 s failed a job at its end. A goodbye on the
/// control connection at a normal close would need no timer.
pub const CLOSED_GRACE: Duration = Duration::from_secs(5);
/// Still passes between clock reads.
const SAMPLE: u32 = 16;

/// The peer is gone: how its control connection ended, and how long nothing had moved.
#[derive(Debug, PartialEq, Eq)]
pub struct Gone {
    pub how: PeerGone,
    pub still: Duration,
}

#[derive(Default)]
pub struct PeerWatch {
    mark: u64,
    /// Passes without movement since the last clock read.
    passes: u32,
    /// When a clock read first found nothing moving (the stall's start, as seen).
    still_since: Option<Instant>,
    looked: Option<Instant>,
    /// When an orderly close was first seen in this stall.
    closed_at: Option<Instant>,
}

impl PeerWatch {
    /// One progress pass: `mark` grows whenever anything moves; `waiting`: chunks are in flight.
    /// `look` says whether the peer has left the control connection. Some once the peer is gone.
    pub fn observe(&mut self, mark: u64, waiting: bool, look: impl FnOnce() -> Option<PeerGone>) -> Option<Gone> {
        if mark != self.mark || !waiting {
            self.mark = mark;
            if self.still_since.is_some() || self.passes > 0 {
                *self = PeerWatch {
                    mark,
                    ..PeerWatch::default()
                };
            }
            return None;
        }
        self.passes += 1;
        if self.passes < SAMPLE {
            return None;
        }
        self.passes = 0;
        self.observe_at(Instant::now(), look)
    }

    fn observe_at(&mut self, now: Instant, look: impl FnOnce() -> Option<PeerGone>) -> Option<Gone> {
        let since = *self.still_since.get_or_insert(now);
        if now.duration_since(since) < LOOK_AFTER || self.looked.is_some_and(|t| now.duration_since(t) < LOOK_AFTER) {
            return None;
        }
        self.looked = Some(now);
        let still = now.duration_since(since);
        match look()? {
            PeerGone::Failed(why) => Some(Gone {
                how: PeerGone::Failed(why),
                still,
            }),
            PeerGone::Closed => {
                let at = *self.closed_at.get_or_insert(now);
                (now.duration_since(at) >= CLOSED_GRACE).then_some(Gone {
                    how: PeerGone::Closed,
                    still,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_connection_is_looked_at_only_after_a_stall_and_then_once_per_interval() {
        let mut w = PeerWatch::default();
        let t0 = Instant::now();
        let looks = std::cell::Cell::new(0);
        let look = || {
            looks.set(looks.get() + 1);
            None
        };
        assert_eq!(w.observe_at(t0, look), None);
        assert_eq!(w.observe_at(t0 + ms(99), look), None);
        assert_eq!(looks.get(), 0, "not before LOOK_AFTER without progress");
        assert_eq!(w.observe_at(t0 + ms(100), look), None);
        assert_eq!(w.observe_at(t0 + ms(150), look), None);
        assert_eq!(looks.get(), 1, "once per LOOK_AFTER");
        assert_eq!(w.observe_at(t0 + ms(200), look), None);
        assert_eq!(looks.get(), 2);
    }

    #[test]
    fn a_failed_connection_is_gone_at_the_first_look_and_a_closed_one_after_the_grace() {
        let t0 = Instant::now();
        let mut w = PeerWatch::default();
        w.observe_at(t0, || None);
        let failed = || Some(PeerGone::Failed("Connection reset by peer".into()));
        assert_eq!(
            w.observe_at(t0 + ms(100), failed),
            Some(Gone {
                how: PeerGone::Failed("Connection reset by peer".into()),
                still: ms(100)
            })
        );

        let mut w = PeerWatch::default();
        w.observe_at(t0, || None);
        let closed = || Some(PeerGone::Closed);
        assert_eq!(
            w.observe_at(t0 + ms(100), closed),
            None,
            "an orderly close: grace first"
        );
        assert_eq!(w.observe_at(t0 + ms(5000), closed), None);
        assert_eq!(
            w.observe_at(t0 + ms(5100), closed),
            Some(Gone {
                how: PeerGone::Closed,
                still: ms(5100)
            })
        );
    }

    #[test]
    fn progress_or_nothing_outstanding_starts_over_and_reads_no_clock() {
        let mut w = PeerWatch::default();
        let mut looks = 0;
        // Moving: the mark changes every pass; nothing outstanding: never a stall.
        for i in 0..10 * SAMPLE as u64 {
            assert_eq!(w.observe(i + 1, true, || panic!("looked while moving")), None);
            assert_eq!(w.observe(i + 1, false, || panic!("looked while idle")), None);
        }
        assert!(w.still_since.is_none(), "no clock read while moving");
        // A stall whose close was seen, then a send completes: the grace starts over.
        let t0 = Instant::now();
        w.observe_at(t0, || None);
        assert_eq!(
            w.observe_at(t0 + ms(100), || {
                looks += 1;
                Some(PeerGone::Closed)
            }),
            None
        );
        assert!(w.closed_at.is_some());
        assert_eq!(w.observe(12345, true, || panic!("no look on movement")), None);
        assert!(w.closed_at.is_none() && w.still_since.is_none());
        assert_eq!(looks, 1);
    }
}
