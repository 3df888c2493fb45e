//! How a striped host-memory message is cut into chunks, below the comm's chunk size: two rules,
//! each for its own connections ([`striped_chunk`]).
//!
//! **Idle** ([`idle_chunk`], NCCL_TCPXR_IDLE_CHUNK_BYTES; point-to-point connections by default):
//! a message NCCL waits on alone goes out over every stripe at once.
//!
//! **Spread** ([`Spread`], NCCL_TCPXR_SPREAD_PIECE_BYTES; the other connections, collectives'):
//! NCCL's ring keeps about one message at a time on each connection (run 358), and a message
//! below the comm's chunk size is one chunk, moved by one I/O thread at each end. In the mid band
//! NCCL runs a collective on 1-2 channels (run 369: the 4-rank all_reduce of 2-4 MiB in messages
//! of 128-256 KiB), so most of the I/O pool's threads sit idle while each step waits on one
//! thread's copy. The rule: a message below the comm's chunk, sent while `moving` send comms of
//! the process carry data, is cut into `threads / (2 × moving)` pieces (each send meets a receive
//! at its peer, and the peer sends as much back: two busy threads per moving connection), at most
//! one per stripe and none below the piece size.
//!
//! "Moving" is the number of distinct send comms among the process's last [`RECENT`] striped
//! messages: NCCL's proxy thread posts the messages of the channels a collective runs on in turn,
//! so the recent posts name every such channel's comm. Not the messages out at one instant: the
//! proxy posts a step's channels one after the other, so the first of 8 would see itself alone
//! (run 365: the 2-rank all_reduce of 8 MiB on 8 channels took 7 % longer in every pass); nor the
//! comms that posted in the last 1-2 ms, which cut the 4-rank all_gather of 8 MiB on 4 channels
//! (runs 366, 368, 369). Counted this way the rule cuts, at 4 ranks, the all_reduce of 2-4 MiB
//! and nearly nothing of all_gather or reduce_scatter (run 371, NCCL_TCPXR_STATS); with 64 KiB
//! pieces the 4-rank all_reduce of 4 MiB and the 2-rank all_reduce of 2 MiB took 5-15 % less time
//! in every pass, every other size of the four ops at 1-16 MiB within 3 % by medians (runs 372-373).
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// How many of the process's latest striped messages name the comms counted as moving: twice
/// NCCL's 8 channels, so that every channel a collective runs on has posted among them.
pub const RECENT: usize = 16;

/// Set in a test's environment, the I/O threads the rule counts in place of the pool's, so that a
/// host with fewer cores than the rule needs (the pool is capped at the cores a process may use)
/// still exercises the cut and the receiver following it. Never set under NCCL.
pub const TEST_THREADS: &str = "TCPXR_TEST_SPREAD_THREADS";

/// The chunk size of a striped host-memory message of `size` bytes over `stripes` stripes, with
/// `outstanding` other messages of the comm not yet reported done. While the comm is not streaming
/// (the test of `send::goes_inline`) the message is cut so that each stripe gets one piece, but no
/// piece below `idle` (0: never cut finer), and that is its chunk size where it is below the
/// comm's `chunk`; else 0, the comm's. A message NCCL waits on alone then goes out over several
/// stripes at once, each moved by its own I/O thread, instead of whole on one (one 512 KiB message
/// one way: 58-62 us in 128 KiB chunks against 83-95 in one; docs/BENCHMARKS.md#defaults), while a
/// message large enough to give every stripe a whole chunk, and a streaming comm, keep the comm's
/// chunks (2 MiB alone in 64 KiB chunks: 149-154 us against 118-135).
pub(crate) fn idle_chunk(size: usize, stripes: usize, outstanding: usize, chunk: usize, idle: usize) -> usize {
    if idle == 0 || outstanding > 1 {
        return 0;
    }
    let even = size.div_ceil(stripes.max(1)).next_multiple_of(4096);
    let piece = even.max(idle);
    if piece < chunk && piece < size {
        piece
    } else {
        0
    }
}

/// The chunk size of a striped host-memory message (0: the comm's `chunk`) and, where the spread
/// rule decided it, whether it cut. A connection the idle rule covers (`idle` above 0:
/// point-to-point ones by default, every one where NCCL_TCPXR_IDLE_CHUNK_BYTES is set) keeps that
/// rule ([`idle_chunk`]) even while it streams: the spread rule was measured on collectives' rings
/// (run 372). Elsewhere a message below `chunk` is cut as `spread` says with `moving()` send comms
/// of the process counted ([`Spread::chunk_for`]); the count is taken only there.
pub(crate) fn striped_chunk(
    size: usize,
    stripes: usize,
    outstanding: usize,
    chunk: usize,
    idle: usize,
    (spread, moving): (Spread, impl FnOnce() -> usize),
) -> (usize, Option<bool>) {
    match idle {
        0 if spread.piece > 0 && size < chunk => {
            let cut = spread.chunk_for(size, stripes, chunk, moving());
            (cut, Some(cut != 0))
        }
        0 => (0, None),
        idle => (idle_chunk(size, stripes, outstanding, chunk, idle), None),
    }
}

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

/// The comms of the process's latest striped messages: a ring of comm ids (0: none yet).
pub struct Count {
    next: AtomicUsize,
    ids: [AtomicU64; RECENT],
}

/// The process's count, which every send comm's [`Mover`] adds to.
static PROCESS: Count = Count::new();

/// A send comm's part in the count: its id, unique in the process.
#[derive(Debug)]
pub struct Mover {
    id: u64,
}

impl Default for Mover {
    fn default() -> Mover {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        Mover {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl Mover {
    /// Records a striped message of this comm among the process's latest [`RECENT`].
    pub fn note(&self) {
        PROCESS.note(self.id)
    }
}

/// How many distinct send comms sent the process's latest [`RECENT`] striped messages: a scan of
/// the ring, taken only for a message the spread rule decides.
pub fn moving() -> usize {
    PROCESS.distinct()
}

impl Count {
    const fn new() -> Count {
        Count {
            next: AtomicUsize::new(0),
            ids: [const { AtomicU64::new(0) }; RECENT],
        }
    }

    /// Records a message of comm `id` in the ring. Threads posting at once may overwrite each
    /// other's slot: the count only decides how finely to cut, never what arrives (each message's
    /// header names its chunk size).
    fn note(&self, id: u64) {
        let at = self.next.fetch_add(1, Ordering::Relaxed) % RECENT;
        self.ids[at].store(id, Ordering::Relaxed);
    }

    /// The distinct comms in the ring.
    fn distinct(&self) -> usize {
        let mut seen = [0u64; RECENT];
        let mut distinct = 0;
        for slot in &self.ids {
            let v = slot.load(Ordering::Relaxed);
            if v != 0 && !seen[..distinct].contains(&v) {
                seen[distinct] = v;
                distinct += 1;
            }
        }
        distinct
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_message_is_spread_over_the_stripes_in_pieces_no_smaller_than_the_idle_chunk() {
        let (chunk, idle) = (512 << 10, 64 << 10);
        assert_eq!(
            idle_chunk(512 << 10, 4, 0, chunk, idle),
            128 << 10,
            "one piece per stripe"
        );
        assert_eq!(
            idle_chunk(512 << 10, 4, 1, chunk, idle),
            128 << 10,
            "one other out: still idle"
        );
        assert_eq!(
            idle_chunk(512 << 10, 4, 2, chunk, idle),
            0,
            "a third in flight: streaming"
        );
        assert_eq!(
            idle_chunk(128 << 10, 4, 0, chunk, idle),
            64 << 10,
            "never below the idle chunk"
        );
        assert_eq!(idle_chunk(100_000, 4, 0, chunk, idle), 64 << 10);
        assert_eq!(idle_chunk(300_001, 4, 0, chunk, idle), 77_824, "a quarter, up to 4 KiB");
        assert_eq!(idle_chunk(64 << 10, 4, 0, chunk, idle), 0, "one piece anyway");
        assert_eq!(
            idle_chunk(2 << 20, 4, 0, chunk, idle),
            0,
            "every stripe gets a whole chunk"
        );
        assert_eq!(idle_chunk(3 << 20, 4, 0, chunk, idle), 0);
        assert_eq!(
            idle_chunk(512 << 10, 1, 0, chunk, idle),
            0,
            "one stripe: nothing to spread over"
        );
        assert_eq!(idle_chunk(512 << 10, 4, 0, chunk, 0), 0, "off");
        assert_eq!(
            idle_chunk(4 << 20, 4, 0, 64 << 10, 64 << 10),
            0,
            "not finer than the comm's"
        );
    }

    #[test]
    fn the_idle_rule_keeps_its_connections_and_the_spread_rule_cuts_the_others_below_the_chunk() {
        let (chunk, spread) = (
            512 << 10,
            Spread {
                piece: 64 << 10,
                threads: 10,
            },
        );
        // Point-to-point (idle rule on), streaming: the idle rule says whole, and whole it stays.
        assert_eq!(
            striped_chunk(256 << 10, 4, 3, chunk, 64 << 10, (spread, || 2)),
            (0, None)
        );
        // Idle there: the idle rule's one piece per stripe.
        assert_eq!(
            striped_chunk(256 << 10, 4, 0, chunk, 64 << 10, (spread, || 2)),
            (64 << 10, None)
        );
        // A collective's connection, 2 comms moving: 10 / 4 = 2 pieces, however many are out.
        assert_eq!(
            striped_chunk(256 << 10, 4, 3, chunk, 0, (spread, || 2)),
            (128 << 10, Some(true))
        );
        // 3 comms moving: one piece; the rule looked and left it whole.
        assert_eq!(
            striped_chunk(256 << 10, 4, 0, chunk, 0, (spread, || 3)),
            (0, Some(false))
        );
        // A whole chunk, or the rule off: not the rule's to decide.
        assert_eq!(striped_chunk(chunk, 4, 0, chunk, 0, (spread, || 1)), (0, None));
        let off = Spread { piece: 0, ..spread };
        assert_eq!(striped_chunk(256 << 10, 4, 0, chunk, 0, (off, || 1)), (0, None));
    }

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
    fn the_count_is_the_distinct_comms_among_the_latest_messages() {
        let count = Count::new();
        let record = |id: u64| -> usize {
            count.note(id);
            count.distinct()
        };
        assert_eq!(record(7), 1);
        assert_eq!(record(7), 1, "a comm counts once");
        assert_eq!(record(8), 2);
        // Round-robin over 4 comms: 4 once the ring holds no older comm.
        for round in 0..10 {
            for id in 1..=4 {
                let n = record(id);
                assert!(round < 4 || n == 4, "round {round}: {n}");
            }
        }
        // Then 2 comms only: once the ring has turned over, 2.
        for _ in 0..RECENT / 2 {
            record(1);
            record(2);
        }
        assert_eq!(record(1), 2);
    }
}
