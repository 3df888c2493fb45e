//! Spreading a message over more stripes while few connections of the process move data.
//!
//! NCCL's ring keeps about one message at a time on each connection (run 358), and a message
//! below the comm's chunk size is one chunk, moved by one I/O thread at each end. In the mid band
//! NCCL runs a collective on 1-2 channels, so most of the I/O pool's threads sit idle while each
//! step waits on one thread's copy. The rule: a message below the comm's chunk, sent while
//! `moving` send comms of the process carry data, is cut into `threads / (2 × moving)` pieces
//! (each send meets a receive at its peer, and the peer sends as much back: two busy threads per
//! moving connection), at most one per stripe and none below the piece size.
//!
//! "Moving" is the number of send comms that posted a striped message in this or the previous
//! window of [`WINDOW`], not the messages out at one instant: NCCL's proxy thread posts a step's
//! messages one channel after the other, so the first of 8 channels would see itself alone
//! (run 365: cut by the instant's count, the 2-rank all_reduce of 8 MiB on 8 channels took 7 %
//! longer in every pass).
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long a send comm counts as moving after its last striped message: longer than a mid-band
/// step (a 256 KiB message, 50-100 us), short enough that the count follows the collective.
pub const WINDOW: Duration = Duration::from_millis(1);

/// Set in a test's environment, the I/O threads the rule counts in place of the pool's, so that a
/// host with fewer cores than the rule needs (the pool is capped at the cores a process may use)
/// still exercises the cut and the receiver following it. Never set under NCCL.
pub const TEST_THREADS: &str = "TCPXR_TEST_SPREAD_THREADS";

/// What a comm spreads by: pieces of at least `piece` bytes (0: never spread) over the process's
/// `threads` I/O threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spread {
    pub piece: usize,
    pub threads: usize,
}

impl Spread {
    /// The chunk size of a striped host message of `size` bytes over `stripes` stripes of a comm
    /// whose chunk is `chunk`, while `moving` send comms of the process carry data; 0 keeps the
    /// comm's chunk.
    pub fn chunk_for(&self, size: usize, stripes: usize, chunk: usize, moving: usize) -> usize {
        if self.piece == 0 || size >= chunk {
            return 0;
        }
        let pieces = (self.threads / (2 * moving.max(1))).min(stripes);
        if pieces < 2 {
            return 0;
        }
        let piece = size.div_ceil(pieces).next_multiple_of(4096).max(self.piece);
        match piece < size && piece < chunk {
            true => piece,
            false => 0,
        }
    }
}

/// A count of moving send comms by window: the current window and the previous one, each its
/// number above [`COUNT_BITS`] bits of count. One per process ([`PROCESS`]).
pub struct Count {
    current: AtomicU64,
    previous: AtomicU64,
}

const COUNT_BITS: u32 = 16;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

/// The process's count, which every send comm's [`Mover`] adds to.
static PROCESS: Count = Count::new();

fn window_now() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    // Window 0 is a new count's state; real windows start at 1.
    1 + (start.elapsed().as_nanos() / WINDOW.as_nanos()) as u64
}

/// A send comm's part in the count: the last window it was counted in.
#[derive(Debug, Default)]
pub struct Mover {
    counted_in: u64,
}

impl Mover {
    /// Counts this comm as moving now (once per window) and returns how many send comms of the
    /// process move.
    pub fn moving(&mut self) -> usize {
        PROCESS.moving_at(self, window_now())
    }
}

impl Count {
    const fn new() -> Count {
        Count {
            current: AtomicU64::new(0),
            previous: AtomicU64::new(0),
        }
    }

    /// Counts `mover` in window `now` unless it already is, and returns the larger of this
    /// window's count and the previous window's, so that a new window does not start from nothing.
    fn moving_at(&self, mover: &mut Mover, now: u64) -> usize {
        let mut cur = self.current.load(Ordering::Acquire);
        loop {
            let (w, n) = (cur >> COUNT_BITS, cur & COUNT_MASK);
            let next = match w.cmp(&now) {
                // Another thread read the clock later and started a newer window: read that one.
                std::cmp::Ordering::Greater => break,
                std::cmp::Ordering::Equal if mover.counted_in == now => break,
                std::cmp::Ordering::Equal => cur + u64::from(n < COUNT_MASK),
                std::cmp::Ordering::Less => (now << COUNT_BITS) | 1,
            };
            match self
                .current
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    if w < now {
                        // Racing roll-overs may leave an older window here: the count only
                        // decides how finely to cut, never what arrives (each message's header
                        // names its chunk size).
                        self.previous.store(cur, Ordering::Release);
                    }
                    mover.counted_in = now;
                    cur = next;
                    break;
                }
                Err(seen) => cur = seen,
            }
        }
        let window = cur >> COUNT_BITS;
        let prev = self.previous.load(Ordering::Acquire);
        let prev_count = match prev >> COUNT_BITS == window.saturating_sub(1) {
            true => prev & COUNT_MASK,
            false => 0,
        };
        (cur & COUNT_MASK).max(prev_count) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ON: Spread = Spread {
        piece: 128 << 10,
        threads: 10,
    };

    #[test]
    fn a_message_is_cut_into_threads_over_twice_the_moving_comms_at_most_one_per_stripe() {
        // 2 comms moving, 10 threads: 2 pieces. 256 KiB -> 128 KiB pieces.
        assert_eq!(ON.chunk_for(256 << 10, 4, 512 << 10, 2), 128 << 10);
        // 1 comm: 5 pieces, but 4 stripes and no piece below 128 KiB.
        assert_eq!(ON.chunk_for(384 << 10, 4, 512 << 10, 1), 128 << 10);
        let small = Spread { piece: 4096, ..ON };
        assert_eq!(small.chunk_for(400 << 10, 4, 512 << 10, 1), 100 << 10);
        assert_eq!(small.chunk_for(400 << 10, 2, 512 << 10, 1), 200 << 10);
        // Pieces are whole pages.
        assert_eq!(small.chunk_for(300_001, 2, 512 << 10, 1), 151_552);
    }

    #[test]
    fn busy_pools_whole_chunks_small_messages_and_off_keep_the_comms_chunk() {
        // 3 comms moving: 10 / 6 = 1 piece.
        assert_eq!(ON.chunk_for(256 << 10, 4, 512 << 10, 3), 0);
        // A whole chunk or more is already striped.
        assert_eq!(ON.chunk_for(512 << 10, 4, 512 << 10, 1), 0);
        // No piece below 128 KiB: a 128 KiB message stays whole.
        assert_eq!(ON.chunk_for(128 << 10, 4, 512 << 10, 1), 0);
        // One stripe, a small pool, or off.
        assert_eq!(ON.chunk_for(256 << 10, 1, 512 << 10, 1), 0);
        assert_eq!(Spread { threads: 3, ..ON }.chunk_for(256 << 10, 4, 512 << 10, 1), 0);
        assert_eq!(Spread { piece: 0, ..ON }.chunk_for(256 << 10, 4, 512 << 10, 1), 0);
    }

    #[test]
    fn comms_count_once_per_window_and_the_previous_window_carries_over() {
        let count = Count::new();
        let (mut a, mut b, mut c) = (Mover::default(), Mover::default(), Mover::default());
        assert_eq!(count.moving_at(&mut a, 5), 1);
        assert_eq!(count.moving_at(&mut a, 5), 1, "a comm counts once in a window");
        assert_eq!(count.moving_at(&mut b, 5), 2);
        assert_eq!(count.moving_at(&mut c, 5), 3);
        // Next window: the previous window's 3 until more than 3 post in this one.
        assert_eq!(count.moving_at(&mut a, 6), 3);
        assert_eq!(count.moving_at(&mut b, 6), 3);
        // A window later with one comm posting: the previous window had 2.
        assert_eq!(count.moving_at(&mut a, 7), 2);
        // After a quiet window, only this window counts.
        assert_eq!(count.moving_at(&mut b, 9), 1);
        // A thread that read the clock before another started window 10 reads window 10.
        assert_eq!(count.moving_at(&mut c, 10), 1);
        assert_eq!(count.moving_at(&mut a, 9), 1);
    }
}
