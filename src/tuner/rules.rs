//! The tuner's rules as data: which collectives, sizes and processes each row covers, what it
//! decides and why ([`RULES`]), the I/O pool's caps ([`POOL_CHANNELS`]), and their text for the
//! init log line and docs/CONFIG.md. The decisions are applied in `tuner/mod.rs`.
use crate::abi::{
    ncclFuncAllGather, ncclFuncAllReduce, ncclFuncBroadcast, ncclFuncReduce, ncclFuncReduceScatter, ncclFunc_t,
    NCCL_ALGO_RING, NCCL_ALGO_TREE,
};
use std::ops::Range;

/// The collectives a rule covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Funcs {
    AllReduce,
    /// all_gather and reduce_scatter.
    GatherScatter,
    /// broadcast and reduce.
    Rooted,
    /// Every collective NCCL runs on the ring, in PAT, or in the tree's LL and LL128.
    Any,
}

impl Funcs {
    fn covers(self, func: ncclFunc_t) -> bool {
        match self {
            Funcs::AllReduce => func == ncclFuncAllReduce,
            Funcs::GatherScatter => func == ncclFuncAllGather || func == ncclFuncReduceScatter,
            Funcs::Rooted => func == ncclFuncBroadcast || func == ncclFuncReduce,
            Funcs::Any => true,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Funcs::AllReduce => "all_reduce",
            Funcs::GatherScatter => "all_gather and reduce_scatter",
            Funcs::Rooted => "broadcast and reduce",
            Funcs::Any => "any collective on the ring, in PAT or in the tree's LL",
        }
    }
}

/// What a rule's range counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// Each rank's share, `nBytes / nRanks`.
    Share,
    /// The whole buffer, `nBytes`.
    Bytes,
}

/// What a rule decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// The ring in Simple where NCCL's own cheapest choice is the ring or PAT in another protocol
    /// (and Simple is usable), on this many channels unless the user bounds them; None: the
    /// later rows choose the channels.
    RingSimple(Option<i32>),
    /// At most the channels NCCL builds for tcpxr's device by itself ([`NCCL_OWN_CHANNELS`]),
    /// where NCCL would keep at least that many of the 8 tcpxr has it build; a smaller count NCCL
    /// chooses by itself (small messages) stands.
    OwnChannels,
    /// NCCL's own count over the 8 channels tcpxr has it build (the later rows' cap lifted).
    BuiltChannels,
    /// Algorithm `to`'s LL where NCCL's own choice is algorithm `from`'s LL (and `to`'s LL is
    /// usable); the later rows choose the channels. NCCL's algorithm indices, ring or tree.
    Ll { from: usize, to: usize },
}

/// When a rule applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Always,
    /// NCCL's kernel places this process's collective receives from host memory: GPU buffers over
    /// the socket transport, whose collective connections the copy engine does not place
    /// (`NCCL_TCPXR_GPU_COPY_BYTES`; see `plugin::kernel_unpacks_host_pages`).
    KernelUnpacksHostPages,
    /// On a communicator of this many ranks, inclusive (where the row was measured).
    Ranks(usize, usize),
}

impl When {
    fn holds(self, n_ranks: usize, kernel_unpacks_host_pages: bool) -> bool {
        match self {
            When::Always => true,
            When::KernelUnpacksHostPages => kernel_unpacks_host_pages,
            When::Ranks(least, most) => (least..=most).contains(&n_ranks),
        }
    }
}

/// One row of the tuner's table.
#[derive(Clone, Debug)]
pub struct Rule {
    pub funcs: Funcs,
    pub size: Size,
    pub range: Range<usize>,
    pub when: When,
    pub decision: Decision,
    /// Why, in one line.
    pub why: &'static str,
}

/// The channels NCCL builds for tcpxr's device by itself, kept below bulk shares.
pub(super) const NCCL_OWN_CHANNELS: i32 = 4;

/// The tuner's rules, first match first (see the module's doc).
pub const RULES: [Rule; 9] = [
    Rule {
        funcs: Funcs::AllReduce,
        size: Size::Share,
        range: (16 << 10)..(256 << 10),
        when: When::Always,
        decision: Decision::RingSimple(Some(1)),
        why: "NCCL's one proxy thread moves every small message: one channel halves the connections it serves and \
              doubles the messages' size (measured: 64-256 KiB 1.1-1.3x faster than on 2 channels, 32 KiB 81-94 us \
              against 110-122); a share of 8 KiB stays in NCCL's LL, which beat Simple there",
    },
    Rule {
        funcs: Funcs::AllReduce,
        size: Size::Share,
        range: 0..(2 << 10),
        when: When::Ranks(3, 4),
        decision: Decision::Ll {
            from: NCCL_ALGO_RING,
            to: NCCL_ALGO_TREE,
        },
        why: "with lo reported at 10 Gb/s NCCL's model runs these in the ring's LL, at 400 Gb/s in the tree's LL, \
              which was faster: 4 ranks on one H200, 2 KiB 52-58 us against 62-77 and 4 KiB 63-65 against 64-81 \
              (run 333, each of 3 passes); 3 ranks there, 2 KiB 45-49 against 48-53, 4 KiB level (run 333); 4 ranks \
              one per GPU, 2 KiB 52 against 64 and 4 KiB 63 against 68 (run 323)",
    },
    Rule {
        funcs: Funcs::AllReduce,
        size: Size::Share,
        range: (2 << 10)..(16 << 10),
        when: When::Ranks(3, 4),
        decision: Decision::Ll {
            from: NCCL_ALGO_TREE,
            to: NCCL_ALGO_RING,
        },
        why: "NCCL runs the tree's LL there, spread over 2-4 channels; in the ring (its LL on one channel, as \
              Socket's) 8-16 KiB took 78-97 us on 4 ranks one per GPU against the tree's 105-132 and Socket's \
              114-124, 8-32 KiB 62-117 on 3 ranks against 84-145; 32 KiB on 4 ranks took about as long as in the \
              tree (170 against 166 us), and the sizes the tree keeps no longer (run 309, steady state)",
    },
    Rule {
        funcs: Funcs::AllReduce,
        size: Size::Share,
        range: (256 << 10)..(2 << 20),
        when: When::Always,
        decision: Decision::RingSimple(Some(2)),
        why: "2 channels win once their 64 KiB messages go to the I/O pool rather than inline",
    },
    Rule {
        funcs: Funcs::GatherScatter,
        size: Size::Share,
        range: (16 << 10)..(256 << 10),
        when: When::Always,
        decision: Decision::RingSimple(Some(1)),
        why: "where NCCL runs the ring in LL or PAT on 4 channels (measured: 128-256 KiB 1.1-1.4x faster on 1; shares \
              of 16-32 KiB took 43-49 us against 50-65 on 2 ranks, 98-138 against 168-218 on 4, run 316)",
    },
    Rule {
        funcs: Funcs::GatherScatter,
        size: Size::Share,
        range: (256 << 10)..(1 << 20),
        when: When::Always,
        decision: Decision::RingSimple(Some(2)),
        why: "measured: 512 KiB - 1 MiB 1.5-1.8x faster on 2 channels than on NCCL's choice; from a 1 MiB share 4 \
              channels are as fast or faster",
    },
    Rule {
        funcs: Funcs::Rooted,
        size: Size::Bytes,
        range: (64 << 10)..(512 << 10),
        when: When::Always,
        decision: Decision::RingSimple(None),
        why: "where NCCL runs the ring in LL (measured: 1.2-2.8x faster, on a par with Socket's best); from 512 KiB \
              NCCL chooses Simple itself",
    },
    Rule {
        funcs: Funcs::Any,
        size: Size::Share,
        range: (4 << 20)..(32 << 20),
        when: When::KernelUnpacksHostPages,
        decision: Decision::BuiltChannels,
        why: "NCCL's kernel places received host pages at about 2.5 GB/s a channel: with GPU buffers all_reduce, \
              all_gather and reduce_scatter of 8-32 MiB on two ranks took 1.12-1.41x host buffers' time on 4 channels and \
              0.89-1.16x on 8; 4 MiB was 5-7 % slower on 8 (run 296)",
    },
    Rule {
        funcs: Funcs::Any,
        size: Size::Share,
        range: 0..(32 << 20),
        when: When::Always,
        decision: Decision::OwnChannels,
        why: "tcpxr has NCCL build 8 channels (nccl_settings), which pay only from shares of 32 MiB (measured: all_reduce \
              of 512 MiB-1 GiB 2-21 % faster, all_gather 8-27 %; all_gather and reduce_scatter of 64-256 KiB and 2-4 MiB 1.3-1.8x slower on 8; \
              all_reduce of 32 KiB on 4 ranks, the tree's LL, 185-205 us on 4 against 285-405 on 8, run 283)",
    },
];

/// A cap on every collective's channels for a process whose I/O pool has `threads` threads.
#[derive(Clone, Debug)]
pub struct PoolChannels {
    pub threads: Range<usize>,
    pub channels: i32,
    /// Why, in one line.
    pub why: &'static str,
}

/// The caps by pool size, first match; a pool of more threads (or none) is not capped, and NCCL
/// keeps the 8 channels tcpxr has it build for bulk. Each channel is two connections a rank
/// (a ring's send and receive) of `NCCL_TCPXR_STRIPES` sockets each, all moved by the pool.
pub const POOL_CHANNELS: [PoolChannels; 1] = [PoolChannels {
    threads: 2..3,
    channels: 2,
    why: "measured: four ranks on one 16-core H200 under MPS, 2 I/O threads each: all_reduce of 128-256 MiB \
          1.27-1.73x faster on 2 channels than on 8 and all_gather 1.16-1.52x, 1-64 MiB level or faster; two ranks \
          there (6 threads) on 4 channels were within the spread of 8 (0.85-1.16x), so larger pools keep 8; 3 threads \
          (three ranks there) gained at 128-256 MiB on 2 channels but lost up to 8 % at 16-64 MiB, so keep 8 too",
}];

/// The cap for a pool of `threads` threads, if any.
pub fn pool_channels(threads: usize) -> Option<&'static PoolChannels> {
    POOL_CHANNELS.iter().find(|r| r.threads.contains(&threads))
}

/// `n` bytes as the docs write them: "512 KiB", "2 MiB", "0".
fn human(n: usize) -> String {
    match n {
        0 => "0".to_string(),
        n if n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

impl Rule {
    /// Whether this row covers a collective `func` of `n_bytes` over `n_ranks` ranks in a process
    /// where NCCL's kernel does (or does not) place collective receives from host memory.
    pub(super) fn covers(
        &self,
        func: ncclFunc_t,
        n_bytes: usize,
        n_ranks: usize,
        kernel_unpacks_host_pages: bool,
    ) -> bool {
        let size = match self.size {
            Size::Share => n_bytes / n_ranks,
            Size::Bytes => n_bytes,
        };
        self.funcs.covers(func) && self.range.contains(&size) && self.when.holds(n_ranks, kernel_unpacks_host_pages)
    }

    /// The row in one line, without its reason: "all_reduce with a per-rank share of 16 KiB to
    /// under 256 KiB: the ring in Simple on 1 channel".
    pub fn summary(&self) -> String {
        let size = match self.size {
            Size::Share => "a per-rank share",
            Size::Bytes => "a size",
        };
        let range = match self.range.start {
            0 => format!("below {}", human(self.range.end)),
            s => format!("of {} to under {}", human(s), human(self.range.end)),
        };
        let decision = match self.decision {
            Decision::RingSimple(Some(1)) => "the ring in Simple on 1 channel".to_string(),
            Decision::RingSimple(Some(n)) => format!("the ring in Simple on at most {n} channels"),
            Decision::RingSimple(None) => "the ring in Simple".to_string(),
            Decision::OwnChannels => format!(
                "at most the {NCCL_OWN_CHANNELS} channels NCCL builds for tcpxr's device by itself, where NCCL \
                 would keep that many (its own smaller counts for small messages stand)"
            ),
            Decision::BuiltChannels => "NCCL's own count of the 8 channels tcpxr has it build".to_string(),
            Decision::Ll { from, to } => {
                let name = |algo| if algo == NCCL_ALGO_TREE { "tree" } else { "ring" };
                format!("the {}'s LL where NCCL would run the {}'s LL", name(to), name(from))
            }
        };
        let when = match self.when {
            When::Always => String::new(),
            When::KernelUnpacksHostPages => ", where NCCL's kernel places the process's collective receives from host \
                                           memory (GPU buffers over the socket)"
                .to_string(),
            When::Ranks(least, most) => format!(" on {least}-{most} ranks"),
        };
        format!("{} with {size} {range}{when}: {decision}", self.funcs.name())
    }
}

/// Where docs/CONFIG.md holds [`markdown_rules`] (a test keeps it equal).
pub const RULES_BEGIN: &str = "<!-- tuner:begin: generated from src/tuner/rules.rs RULES, do not edit -->";
pub const RULES_END: &str = "<!-- tuner:end -->";

/// The rules for docs/CONFIG.md: one list item per row, in table order, with its reason.
pub fn markdown_rules() -> String {
    let rules = RULES.iter().map(|r| format!("- {} ({}).\n", r.summary(), r.why));
    let pools = POOL_CHANNELS
        .iter()
        .map(|p| format!("- {} ({}).\n", pool_summary(p), p.why));
    rules.chain(pools).collect()
}

/// A pool cap in one line: "every collective, host buffers over the socket transport, in a
/// process whose I/O pool has 2 threads: at most 2 channels".
fn pool_summary(p: &PoolChannels) -> String {
    let threads = match (p.threads.start, p.threads.end - 1) {
        (a, b) if a == b => format!("{a}"),
        (a, b) => format!("{a}-{b}"),
    };
    format!(
        "every collective, host buffers over the socket transport, in a process whose I/O pool has {threads} threads: at most {} channels",
        p.channels
    )
}

/// The rules as the log line and the docs say them: one summary per row, in table order, joined
/// by "; ". With `channels` false (the user bounds NCCL's channels) the channel counts are left
/// out of the rows that choose Simple and the channels row is dropped.
pub fn describe(channels: bool) -> String {
    let rows: Vec<String> = RULES
        .iter()
        .filter_map(|r| match (r.decision, channels) {
            (_, true) => Some(r.summary()),
            (Decision::OwnChannels | Decision::BuiltChannels, false) => None,
            (Decision::Ll { .. }, false) => Some(r.summary()),
            (Decision::RingSimple(_), false) => Some(
                Rule {
                    decision: Decision::RingSimple(None),
                    ..r.clone()
                }
                .summary(),
            ),
        })
        .collect();
    rows.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_doc_lists_the_rules_as_the_table_says_them() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/CONFIG.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let fresh = markdown_rules();
        let block = text
            .split_once(RULES_BEGIN)
            .and_then(|(_, rest)| rest.split_once(RULES_END))
            .map(|(block, _)| block.trim_start_matches('\n'))
            .unwrap_or_else(|| panic!("docs/CONFIG.md has no block between {RULES_BEGIN} and {RULES_END}"));
        assert!(
            block == fresh,
            "docs/CONFIG.md's tuner rules differ from tuner::RULES; replace its block with:\n{RULES_BEGIN}\n{fresh}{RULES_END}\n"
        );
        assert_eq!(fresh.lines().count(), RULES.len() + POOL_CHANNELS.len());
    }

    #[test]
    fn the_table_describes_itself_for_the_log_and_the_docs() {
        let text = describe(true);
        assert_eq!(text.matches("; ").count(), RULES.len() - 1, "{text}");
        assert!(
            text.starts_with(
                "all_reduce with a per-rank share of 16 KiB to under 256 KiB: the ring in Simple on 1 channel; "
            ),
            "{text}"
        );
        assert!(
            text.contains("broadcast and reduce with a size of 64 KiB to under 512 KiB: the ring in Simple;"),
            "{text}"
        );
        assert!(
            text.contains(
                "any collective on the ring, in PAT or in the tree's LL with a per-rank share below 32 MiB: at most the 4 channels"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "any collective on the ring, in PAT or in the tree's LL with a per-rank share of 4 MiB to under 32 MiB, \
                 where NCCL's kernel places"
            ),
            "{text}"
        );
        let bounded = describe(false);
        assert!(!bounded.contains("channel"), "{bounded}");
        assert_eq!(bounded.matches("; ").count(), RULES.len() - 3, "{bounded}");
        // Every row says why.
        assert!(RULES.iter().all(|r| !r.why.is_empty()));
    }
}
