//! The I/O pool's counters (NCCL_TCPXR_STATS=1): how each turn reached a worker and each hand-off
//! reached the pool, logged once when the pool stops. They say whether hand-offs meet a spinner or
//! wait for a sleeping thread to wake (a wake-up costs tens of microseconds on a virtual machine:
//! workers.rs, "Spinning"), and how much thread time spinning took.
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Where a worker found its turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// A spinner took it from the hand-off queue.
    Queue,
    /// A spinner found it in the epoll set (a stripe that re-armed its socket).
    SpinPoll,
    /// A sleeping worker was woken for it.
    Wake,
}

#[derive(Default)]
pub struct PoolCounters {
    from_queue: AtomicU64,
    from_spin_poll: AtomicU64,
    after_wake: AtomicU64,
    sleeps: AtomicU64,
    queued: AtomicU64,
    armed: AtomicU64,
    taken_back: AtomicU64,
    spin_nanos: AtomicU64,
}

/// Counters are statistics: nothing is ordered by them.
const R: Ordering = Ordering::Relaxed;

impl PoolCounters {
    pub fn turn(&self, found: Found) {
        match found {
            Found::Queue => &self.from_queue,
            Found::SpinPoll => &self.from_spin_poll,
            Found::Wake => &self.after_wake,
        }
        .fetch_add(1, R);
    }

    /// A worker went to sleep in the epoll set.
    pub fn sleep(&self) {
        self.sleeps.fetch_add(1, R);
    }

    /// A hand-off went to the queue (a worker was spinning).
    pub fn queued(&self) {
        self.queued.fetch_add(1, R);
    }

    /// A hand-off armed its socket in the epoll set; `taken_back`: it had been queued, and every
    /// spinner went to sleep before taking it (counted there, not here).
    pub fn armed(&self, taken_back: bool) {
        if taken_back {
            self.taken_back.fetch_add(1, R);
        } else {
            self.armed.fetch_add(1, R);
        }
    }

    /// A worker spun this long (found work or not).
    pub fn spun(&self, d: Duration) {
        self.spin_nanos.fetch_add(d.as_nanos() as u64, R);
    }

    /// The line NCCL_TCPXR_STATS logs when the pool stops after `secs`.
    pub fn line(&self, threads: usize, spinners: usize, secs: f64) -> String {
        let g = |c: &AtomicU64| c.load(R);
        let (q, p, w) = (g(&self.from_queue), g(&self.from_spin_poll), g(&self.after_wake));
        let turns = (q + p + w).max(1) as f64;
        let spin_s = g(&self.spin_nanos) as f64 / 1e9;
        format!(
            "stats I/O pool: {threads} threads, at most {spinners} spinning, over {secs:.2} s: turns {q} from the \
             hand-off queue, {p} found spinning in the epoll set, {w} after a wake-up ({:.1} % woken); {} sleeps; \
             hand-offs {} queued to a spinner ({} of them taken back and armed, every spinner gone to sleep), {} \
             armed in the epoll set with none spinning; spinning {spin_s:.2} s of thread time ({:.2} threads on \
             average)",
            100.0 * w as f64 / turns,
            g(&self.sleeps),
            g(&self.queued),
            g(&self.taken_back),
            g(&self.armed),
            spin_s / secs.max(1e-9),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_each_path_and_the_share_of_turns_after_a_wake_up() {
        let c = PoolCounters::default();
        for found in [Found::Queue, Found::Queue, Found::SpinPoll, Found::Wake] {
            c.turn(found);
        }
        c.sleep();
        c.queued();
        c.queued();
        c.armed(false);
        c.armed(true);
        c.spun(Duration::from_millis(1500));
        let line = c.line(8, 4, 3.0);
        for want in [
            "8 threads, at most 4 spinning, over 3.00 s",
            "turns 2 from the hand-off queue, 1 found spinning in the epoll set, 1 after a wake-up (25.0 % woken)",
            "1 sleeps",
            "hand-offs 2 queued to a spinner (1 of them taken back and armed, every spinner gone to sleep), 1 armed \
             in the epoll set with none spinning",
            "spinning 1.50 s of thread time (0.50 threads on average)",
        ] {
            assert!(line.contains(want), "{want:?} missing from {line:?}");
        }
    }
}
