//! Notices when a comm stops moving: requests outstanding and nothing written, read or completed
//! for NCCL_TCPXR_STALL_SECONDS. Which rank and which connection hangs is the question NCCL users
//! ask most, and NCCL itself cannot answer it; the comm that stalls can, by saying what it waits
//! for (see `comm::Side::stall_report`). One WARN when a stall is noticed, another every
//! interval while it lasts, and one line when the comm moves again.
//!
//! The comm calls [`StallWatch::observe`] on every progress pass with a count that grows whenever
//! anything moves; the clock is read only every [`SAMPLE`] passes, so the watch costs NCCL's
//! polling loop next to nothing.
use std::time::{Duration, Instant};

/// Progress passes between clock reads.
const SAMPLE: u32 = 256;

/// What the watch has to say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stall {
    /// No progress for `for_` with requests outstanding; `first`: the first report of this stall.
    Stalled { for_: Duration, first: bool },
    /// Progress again after a reported stall of `after`.
    Resumed { after: Duration },
}

pub struct StallWatch {
    /// None: off (NCCL_TCPXR_STALL_SECONDS=0).
    every: Option<Duration>,
    passes: u32,
    mark: u64,
    /// `mark` changed (or nothing was outstanding) since the last clock read.
    moved_since_sample: bool,
    /// When `mark` last changed (or the comm last had nothing outstanding).
    moved: Instant,
    /// When the next report is due, once a stall has been reported.
    next_report: Option<Instant>,
}

impl StallWatch {
    pub fn new(seconds: u64) -> StallWatch {
        StallWatch {
            every: (seconds > 0).then(|| Duration::from_secs(seconds)),
            passes: 0,
            mark: 0,
            moved_since_sample: false,
            moved: Instant::now(),
            next_report: None,
        }
    }

    /// One progress pass: `mark` grows whenever anything moves; `waiting`: requests are
    /// outstanding (an idle comm never stalls).
    pub fn observe(&mut self, mark: u64, waiting: bool) -> Option<Stall> {
        let every = self.every?;
        self.moved_since_sample |= mark != self.mark || !waiting;
        self.mark = mark;
        self.passes += 1;
        // A reported stall's end is said at once; otherwise the clock is read every SAMPLE passes.
        let resumed = self.moved_since_sample && self.next_report.is_some();
        if self.passes < SAMPLE && !resumed {
            return None;
        }
        self.passes = 0;
        let changed = std::mem::take(&mut self.moved_since_sample);
        self.observe_at(changed, every, Instant::now())
    }

    fn observe_at(&mut self, changed: bool, every: Duration, now: Instant) -> Option<Stall> {
        if changed {
            let stalled = now.duration_since(self.moved);
            self.moved = now;
            return self.next_report.take().map(|_| Stall::Resumed { after: stalled });
        }
        let for_ = now.duration_since(self.moved);
        match self.next_report {
            None if for_ >= every => {
                self.next_report = Some(now + every);
                Some(Stall::Stalled { for_, first: true })
            }
            Some(due) if now >= due => {
                self.next_report = Some(now + every);
                Some(Stall::Stalled { for_, first: false })
            }
            _ => None,
        }
    }
}

/// Logs what the watch said about the `side` comm with `peer`; `report` says what a stalled comm
/// waits for (built only when needed).
pub fn log(event: Option<Stall>, side: &str, peer: &str, report: impl FnOnce() -> String) {
    match event {
        None => {}
        Some(Stall::Resumed { after }) => {
            log::warn!(
                "{side} comm with {peer}: moving again after {} without progress",
                human(after)
            )
        }
        Some(Stall::Stalled { for_, first }) => log::warn!(
            "{side} comm with {peer}: no progress for {}{}: {}",
            human(for_),
            if first { "" } else { " (still)" },
            report()
        ),
    }
}

/// "1.2 s" / "35 ms": durations in a report.
pub fn human(d: Duration) -> String {
    if d >= Duration::from_secs(1) {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        format!("{} ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_is_reported_once_then_every_interval_then_its_end() {
        let mut w = StallWatch::new(10);
        let t0 = w.moved;
        let s = Duration::from_secs;
        let every = s(10);
        assert_eq!(w.observe_at(false, every, t0 + s(9)), None);
        assert_eq!(
            w.observe_at(false, every, t0 + s(10)),
            Some(Stall::Stalled {
                for_: s(10),
                first: true
            })
        );
        assert_eq!(w.observe_at(false, every, t0 + s(15)), None, "once per interval");
        assert_eq!(
            w.observe_at(false, every, t0 + s(20)),
            Some(Stall::Stalled {
                for_: s(20),
                first: false
            })
        );
        assert_eq!(
            w.observe_at(true, every, t0 + s(23)),
            Some(Stall::Resumed { after: s(23) })
        );
        assert_eq!(
            w.observe_at(true, every, t0 + s(40)),
            None,
            "no stall was reported since"
        );
        assert_eq!(w.observe_at(false, every, t0 + s(49)), None);
        assert!(matches!(
            w.observe_at(false, every, t0 + s(50)),
            Some(Stall::Stalled { first: true, .. })
        ));
    }

    #[test]
    fn off_idle_and_moving_comms_never_report() {
        let mut off = StallWatch::new(0);
        off.moved -= Duration::from_secs(1000);
        assert_eq!(off.observe(0, true), None);
        let mut w = StallWatch::new(1);
        w.moved -= Duration::from_secs(100);
        for i in 0..10 * SAMPLE {
            // Nothing outstanding: not a stall however long; moving: not a stall.
            assert_eq!(w.observe(0, false), None);
            assert_eq!(w.observe(u64::from(i) + 1, true), None);
        }
    }
}
