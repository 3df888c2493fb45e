//! A comm's counters (NCCL_TCPXR_STATS=1): what it moved, and per stripe where the time went,
//! logged as INFO lines when it closes: the comm's totals, then one line a stripe (NCCL's logger
//! cuts a line near 1 KiB, which four stripes' details passed).
use super::striper::StripeCounts;

/// Size classes of [`Stats::by_size`]: class `c` holds messages over `2^(c-1)` bytes and up to
/// `2^c` (class 0: 0 and 1 byte); the last holds everything larger.
const SIZE_CLASSES: usize = 41;

/// Per-comm counters, logged at close when NCCL_TCPXR_STATS=1.
#[derive(Debug)]
pub struct Stats {
    pub opened: std::time::Instant,
    pub messages: u64,
    pub bytes: u64,
    pub inline_messages: u64,
    /// Messages by size class: which sizes NCCL's pipeline sends, which the inline, idle and
    /// chunk limits are set against.
    pub by_size: [u64; SIZE_CLASSES],
    /// Messages posted, and the sum and most of the others then not yet reported done: how deep
    /// NCCL keeps the comm's pipeline.
    pub posts: u64,
    pub out_at_post_sum: u64,
    pub out_at_post_max: usize,
    /// Messages the spread rule looked at, those it cut, and the moving comms it counted.
    pub spread_looks: u64,
    pub spread_cuts: u64,
    pub moving_sum: u64,
    pub moving_max: usize,
}

impl Stats {
    pub fn new() -> Self {
        Stats {
            opened: std::time::Instant::now(),
            messages: 0,
            bytes: 0,
            inline_messages: 0,
            by_size: [0; SIZE_CLASSES],
            posts: 0,
            out_at_post_sum: 0,
            out_at_post_max: 0,
            spread_looks: 0,
            spread_cuts: 0,
            moving_sum: 0,
            moving_max: 0,
        }
    }

    /// A message done: its size as it moved.
    pub fn count(&mut self, size: usize, inline: bool) {
        self.messages += 1;
        self.bytes += size as u64;
        self.inline_messages += inline as u64;
        let class = (usize::BITS - size.saturating_sub(1).leading_zeros()) as usize;
        self.by_size[class.min(SIZE_CLASSES - 1)] += 1;
    }

    /// A message posted while `outstanding` others were not yet reported done.
    pub fn posted(&mut self, outstanding: usize) {
        self.posts += 1;
        self.out_at_post_sum += outstanding as u64;
        self.out_at_post_max = self.out_at_post_max.max(outstanding);
    }

    /// The spread rule looked at a message with `moving` comms counted, and cut it or not.
    pub fn spread(&mut self, moving: usize, cut: bool) {
        self.spread_looks += 1;
        self.spread_cuts += cut as u64;
        self.moving_sum += moving as u64;
        self.moving_max = self.moving_max.max(moving);
    }

    /// "; sizes up to 128 B: 2, up to 1 MiB: 5" for the size classes that saw a message.
    fn sizes_text(&self) -> String {
        let label = |class: usize| match class {
            c if c >= 30 => format!("{} GiB", 1u64 << (c - 30)),
            c if c >= 20 => format!("{} MiB", 1u64 << (c - 20)),
            c if c >= 10 => format!("{} KiB", 1u64 << (c - 10)),
            c => format!("{} B", 1u64 << c),
        };
        let seen: Vec<String> = (0..SIZE_CLASSES)
            .filter(|&c| self.by_size[c] > 0)
            .map(|c| match c {
                c if c == SIZE_CLASSES - 1 => format!("over {}: {}", label(c - 1), self.by_size[c]),
                c => format!("up to {}: {}", label(c), self.by_size[c]),
            })
            .collect();
        match seen.is_empty() {
            true => String::new(),
            false => format!("; sizes {}", seen.join(", ")),
        }
    }

    /// Logs [`Stats::lines`] at INFO.
    pub fn report(&self, what: &str, stripes: &StripeCounts) {
        for line in self.lines(what, stripes, self.opened.elapsed().as_secs_f64()) {
            log::info!("{line}");
        }
    }

    /// The totals and window stalls, then a line per stripe: its bytes, chunks, I/O busy time over `secs`, how many
    /// chunks were already queued on it when each was posted, its hand-offs to the I/O pool with
    /// their average wait for a worker, its waits for the receiver's grant, how often its window
    /// grew, the bytes it demoted as they landed in bounce memory, and its chunks' average time
    /// from post to done and from done to NCCL's thread seeing it.
    pub fn lines(&self, what: &str, stripes: &StripeCounts, secs: f64) -> Vec<String> {
        let per = (0..stripes.bytes.len()).map(|i| {
            let mb = stripes.bytes[i] as f64 / 1e6;
            let busy = match stripes.io_nanos.get(i).copied().flatten() {
                Some(ns) => format!(" {:.0}% busy", 100.0 * ns as f64 / 1e9 / secs.max(1e-9)),
                None => String::new(),
            };
            let queued = match (stripes.queued_sum.get(i), stripes.queued_max.get(i)) {
                (Some(&sum), Some(&max)) if stripes.chunks[i] > 0 => {
                    format!(
                        ", queued ahead avg {:.1} max {max}",
                        sum as f64 / stripes.chunks[i] as f64
                    )
                }
                _ => String::new(),
            };
            let handoffs = match stripes.handoffs.get(i).copied().flatten() {
                Some((n, ns)) if n > 0 => {
                    format!(", {n} hand-offs waited avg {:.1} us", ns as f64 / n as f64 / 1e3)
                }
                _ => String::new(),
            };
            let grants = match stripes.grant_waits.get(i).copied().flatten() {
                Some((n, ns)) if n > 0 => {
                    format!(", {n} grant waits avg {:.1} us", ns as f64 / n as f64 / 1e3)
                }
                _ => String::new(),
            };
            let growth = match stripes.window_growth.get(i).copied().flatten() {
                Some((n, largest)) if n > 0 => {
                    format!(", window grew {n} times to at most {} KiB", largest >> 10)
                }
                _ => String::new(),
            };
            let times = match stripes.times.get(i).copied().flatten() {
                Some(t) if t.chunks > 0 => {
                    let us = |ns: u64| ns as f64 / t.chunks as f64 / 1e3;
                    format!(
                        ", done avg {:.1} us after its post and seen by NCCL's thread {:.1} us later",
                        us(t.post_to_done_nanos),
                        us(t.done_to_seen_nanos)
                    )
                }
                _ => String::new(),
            };
            let demoted = match stripes.demoted.get(i).copied().flatten() {
                Some(b) if b > 0 => format!(", {:.1} MB demoted from the reader's caches", b as f64 / 1e6),
                _ => String::new(),
            };
            format!(
                "stats {what} s{i}: {mb:.1} MB in {} chunks{busy}{queued}{handoffs}{grants}{growth}{demoted}{times}",
                stripes.chunks[i]
            )
        });
        let depth = match self.posts {
            0 => String::new(),
            n => format!(
                "; others out at a post avg {:.1} max {}",
                self.out_at_post_sum as f64 / n as f64,
                self.out_at_post_max
            ),
        };
        let depth = match self.spread_looks {
            0 => depth,
            n => format!(
                "{depth}; spread cut {} of {n}, moving comms avg {:.1} max {}",
                self.spread_cuts,
                self.moving_sum as f64 / n as f64,
                self.moving_max
            ),
        };
        let totals = format!(
            "stats {what}: {} messages ({} inline), {:.1} MB in {secs:.2} s; window stalls {}; {} stripes{}{depth}",
            self.messages,
            self.inline_messages,
            self.bytes as f64 / 1e6,
            stripes.stalls,
            stripes.bytes.len(),
            self.sizes_text()
        );
        std::iter::once(totals).chain(per).collect()
    }
}

impl Default for Stats {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::ChunkTimes;

    #[test]
    fn the_lines_give_each_stripes_share_and_where_its_chunks_spent_their_time() {
        let mut stats = Stats::new();
        stats.count(1 << 20, false);
        stats.count(100, true);
        stats.posted(0);
        stats.posted(3);
        let stripes = StripeCounts {
            chunks: vec![4, 0],
            bytes: vec![1 << 20, 0],
            io_nanos: vec![Some(500_000_000), None],
            queued_sum: vec![2, 0],
            queued_max: vec![1, 0],
            handoffs: vec![Some((4, 8_000)), None],
            grant_waits: vec![Some((2, 50_000)), Some((0, 0))],
            window_growth: vec![Some((3, 1 << 20)), None],
            demoted: vec![Some(1 << 20), Some(0)],
            times: vec![
                Some(ChunkTimes {
                    chunks: 4,
                    post_to_done_nanos: 100_000,
                    done_to_seen_nanos: 12_000,
                }),
                Some(ChunkTimes::default()),
            ],
            stalls: 3,
        };
        assert_eq!(
            stats.lines("send", &stripes, 2.0),
            [
                "stats send: 2 messages (1 inline), 1.0 MB in 2.00 s; window stalls 3; 2 stripes; sizes up to 128 B: 1, \
                 up to 1 MiB: 1; others out at a post avg 1.5 max 3",
                "stats send s0: 1.0 MB in 4 chunks 25% busy, queued ahead avg 0.5 max 1, 4 hand-offs waited avg \
                 2.0 us, 2 grant waits avg 25.0 us, window grew 3 times to at most 1024 KiB, 1.0 MB demoted from \
                 the reader's caches, done avg 25.0 us \
                 after its post and seen by NCCL's thread 3.0 us later",
                "stats send s1: 0.0 MB in 0 chunks",
            ]
        );
    }

    #[test]
    fn a_message_counts_in_the_smallest_power_of_two_that_holds_it() {
        let mut stats = Stats::new();
        for size in [0, 1, 2, 3, 64, 65, 128 << 10, (128 << 10) + 1, 1 << 40, usize::MAX] {
            stats.count(size, false);
        }
        assert_eq!(
            stats.sizes_text(),
            "; sizes up to 1 B: 2, up to 2 B: 1, up to 4 B: 1, up to 64 B: 1, up to 128 B: 1, up to 128 KiB: 1, \
             up to 256 KiB: 1, over 512 GiB: 2"
        );
        assert_eq!(Stats::new().sizes_text(), "", "no message, no sizes");
    }

    /// ncclTests/parse.py reads this ending (`_SPREAD`) into the runner's counters line: a change
    /// here is a change there.
    #[test]
    fn the_spread_rule_counts_end_the_send_line_only_once_it_looked_at_a_message() {
        let mut stats = Stats::new();
        stats.spread(2, true);
        stats.spread(4, false);
        stats.spread(3, true);
        let none = StripeCounts::default();
        assert_eq!(
            stats.lines("send", &none, 1.0)[0],
            "stats send: 0 messages (0 inline), 0.0 MB in 1.00 s; window stalls 0; 0 stripes; spread cut 2 of 3, \
             moving comms avg 3.0 max 4"
        );
        assert!(!Stats::new().lines("send", &none, 1.0)[0].contains("spread"));
    }
}
