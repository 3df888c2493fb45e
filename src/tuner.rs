//! The tuner tcpxr exports beside its net tables: which protocol and how many channels NCCL uses
//! for a collective over tcpxr's socket transport below bulk sizes.
//!
//! NCCL sizes its choice by the speed a net reports. For tcpxr's 400 Gb/s it runs all_reduce in
//! its LL protocol on 4 channels up to 1 MiB, and LL's many small messages cost tcpxr 2-4x Socket's
//! time there; Simple on at most 2 channels measured fastest from 32 KiB to 4 MiB (two ranks),
//! while NCCL's own choice (Simple, 4 channels) stays best from 4 MiB up. Reporting a lower speed
//! gives 2 channels for every size and costs 40 % at bulk, so the choice is made per collective
//! here instead. The measurements are in docs/BENCHMARKS.md#the-mid-band-128-kib---8-mib.
//!
//! With GPU buffers over the socket, NCCL's kernel reads every received page of a collective from
//! host memory at about 2.5 GB/s a channel, so there 4 channels cost more than they save from
//! shares of 4 MiB: such a process keeps NCCL's 8 from there ([`When::KernelUnpacksHostPages`]).
//!
//! The rules are one table, [`RULES`], on a communicator of two or more nodes: each row names the
//! collectives it covers, the range of sizes (each rank's share, `nBytes / nRanks`: the size of
//! each ring step's message, whatever the ranks; NCCL gives a tuner an all_gather's and a
//! reduce_scatter's whole buffer, so their share is one rank's piece; or, for broadcast and
//! reduce, the whole buffer), when it applies ([`When`]), what it decides, and why. The first
//! row that covers a collective decides, except that a row choosing Simple without a channel
//! count lets the later rows choose the channels. [`describe`] renders the table for the log line
//! at each communicator's init (and is the text for the docs).
//!
//! Over host buffers on the socket transport, the channels of every collective are further capped
//! by the process's I/O pool ([`POOL_CHANNELS`]): a pool of 2 threads moves bulk faster over 2
//! channels' connections than over 8. The pool is fixed at the first listen or connect, so the
//! cap applies from the collectives enqueued after it (the first ones of a communicator keep
//! NCCL's count).
//!
//! NCCL 2.22 and later (tuner v3-v6) show the tuner their cost table, and [`Tuner::choose`]
//! decides on it; NCCL 2.19-2.21 (v1, v2) show none and take one named choice instead, which
//! [`Tuner::pick`] makes from the same rows.
use crate::abi::{
    ncclFuncAllGather, ncclFuncAllReduce, ncclFuncBroadcast, ncclFuncReduce, ncclFuncReduceScatter, ncclFunc_t,
    NCCL_ALGO_PAT, NCCL_ALGO_RING, NCCL_ALGO_TREE, NCCL_PROTO_LL, NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE,
};
use crate::config::{self, Switch};
use crate::error::Result;
use crate::transport::TransportKind;
use std::ops::Range;
use std::sync::OnceLock;

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
}

/// When a rule applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Always,
    /// NCCL's kernel places this process's collective receives from host memory: GPU buffers over
    /// the socket transport, whose collective connections the copy engine does not place
    /// (`NCCL_TCPXR_GPU_COPY_BYTES`; see `plugin::kernel_unpacks_host_pages`).
    KernelUnpacksHostPages,
}

impl When {
    fn holds(self, kernel_unpacks_host_pages: bool) -> bool {
        match self {
            When::Always => true,
            When::KernelUnpacksHostPages => kernel_unpacks_host_pages,
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
const NCCL_OWN_CHANNELS: i32 = 4;

/// The tuner's rules, first match first (see the module's doc).
pub const RULES: [Rule; 7] = [
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
        range: (256 << 10)..(2 << 20),
        when: When::Always,
        decision: Decision::RingSimple(Some(2)),
        why: "2 channels win once their 64 KiB messages go to the I/O pool rather than inline",
    },
    Rule {
        funcs: Funcs::GatherScatter,
        size: Size::Share,
        range: (64 << 10)..(256 << 10),
        when: When::Always,
        decision: Decision::RingSimple(Some(1)),
        why: "where NCCL runs the ring in LL or PAT on 4 channels (measured: 128-256 KiB 1.1-1.4x faster on 1)",
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
    fn covers(&self, func: ncclFunc_t, n_bytes: usize, n_ranks: usize, kernel_unpacks_host_pages: bool) -> bool {
        let size = match self.size {
            Size::Share => n_bytes / n_ranks,
            Size::Bytes => n_bytes,
        };
        self.funcs.covers(func) && self.range.contains(&size) && self.when.holds(kernel_unpacks_host_pages)
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
        };
        let when = match self.when {
            When::Always => "",
            When::KernelUnpacksHostPages => {
                ", where NCCL's kernel places the process's collective receives from host memory (GPU buffers over \
                 the socket)"
            }
        };
        format!("{} with {size} {range}{when}: {decision}", self.funcs.name())
    }
}

/// Where docs/CONFIG.md holds [`markdown_rules`] (a test keeps it equal).
pub const RULES_BEGIN: &str = "<!-- tuner:begin: generated from src/tuner.rs RULES, do not edit -->";
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

/// The bytes per channel below which NCCL gives up a channel of this algorithm, or None where
/// the tuner leaves the count to NCCL. NCCL 2.28 (enqueue.cc, topoGetAlgoInfo) drops channels
/// while `nBytes < channels x threads x threshold`. The ring's at NCCL's most threads per channel
/// (device.h: LL and Simple 512, LL128 640) and its per-thread thresholds (comm.h: LL and LL128
/// 8 bytes, Simple 64; tuning.cc multiplies LL's by the ranks, the ring's only), so that NCCL
/// surely keeps as many channels as `nBytes` holds of these. PAT: none (NCCL sets no thread count
/// for PAT in that formula, so it keeps all its channels and only spreads a small collective over
/// fewer of them by its traffic, as it did over the 4 it built before).
///
/// The tree in LL and LL128: the same threads and thresholds, not multiplied by the ranks (an
/// all_reduce of 32 KiB on 4 ranks ran the tree's LL on all 8 channels tcpxr has NCCL build, 16
/// KiB on 4, 8 KiB on 2: run 283's TUNING log). The tree in Simple stays NCCL's: where NCCL picks
/// it over tcpxr has not been measured.
fn bytes_per_channel(algo: usize, proto: usize, n_ranks: usize) -> Option<usize> {
    match (algo, proto) {
        (NCCL_ALGO_RING, NCCL_PROTO_LL) => Some(512 * 8 * n_ranks),
        (NCCL_ALGO_RING | NCCL_ALGO_TREE, NCCL_PROTO_LL128) => Some(640 * 8),
        (NCCL_ALGO_RING, _) => Some(512 * 64),
        (NCCL_ALGO_TREE, NCCL_PROTO_LL) => Some(512 * 8),
        (NCCL_ALGO_PAT, _) => Some(0),
        _ => None,
    }
}

/// One communicator's tuner state (NCCL calls init once per communicator).
#[derive(Debug, Clone, PartialEq)]
pub struct Tuner {
    pub n_ranks: usize,
    /// Why the tuner leaves this communicator to NCCL; None: it acts.
    pub idle_because: Option<String>,
    /// Whether the channel count may be set (not when the user set NCCL's own channel bounds).
    pub set_channels: bool,
    /// Whether [`Tuner::pick`] may name an algorithm and protocol (not when the user set NCCL_ALGO
    /// or NCCL_PROTO, which NCCL does not check a named choice against).
    pub may_name: bool,
    /// The pool's cap on channels ([`POOL_CHANNELS`]; None inside: no cap), once known.
    pub pool_cap: OnceLock<Option<i32>>,
    /// [`Facts::kernel_unpacks_host_pages`].
    pub kernel_unpacks_host_pages: Option<bool>,
}

/// What a tuner that sees no cost table (v1, v2) tells NCCL: an algorithm and protocol (both or
/// neither; None: NCCL chooses) and a channel count (None: NCCL's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pick {
    pub algo_proto: Option<(usize, usize)>,
    pub channels: Option<i32>,
}

/// What tcpxr's process state says about a new communicator.
pub struct Facts {
    pub setting: Switch,
    /// The inner transport tcpxr runs, None before tcpxr's net init.
    pub transport: Option<TransportKind>,
    /// NCCL has assigned tcpxr's net to a communicator of this process (it asked for a device's
    /// properties); otherwise NCCL runs another net and only loaded tcpxr's library.
    pub assigned: bool,
    pub n_ranks: usize,
    pub n_nodes: usize,
    /// The user bounds NCCL's channel count (any of `nccl_settings::CHANNEL_BOUNDS`, set by the user rather
    /// than by tcpxr).
    pub user_channels: bool,
    /// The user set NCCL_ALGO or NCCL_PROTO (tcpxr's own NCCL_PROTO=Simple for GPU buffers is not
    /// the user's).
    pub user_algo_proto: bool,
    /// The I/O pool's threads for the channel cap, as `plugin::pool_threads_for_tuner` says it:
    /// Some(None) where no cap applies, None while not known yet.
    pub pool_threads: Option<Option<usize>>,
    /// Whether NCCL's kernel places collective receives from host memory ([`When`]); None: ask the
    /// plugin at each collective, since NCCL connects after the tuner's init and the answer
    /// comes with the first receive comm.
    pub kernel_unpacks_host_pages: Option<bool>,
}

impl Tuner {
    pub fn new(f: &Facts) -> Tuner {
        let idle_because = match f.transport {
            _ if f.setting == Switch::Off => Some("NCCL_TCPXR_TUNER=0".to_string()),
            None => Some("tcpxr's net is not initialised".to_string()),
            Some(t) if !f.setting.on_for(t, TransportKind::Socket) => Some(format!(
                "NCCL_TCPXR_TUNER=auto acts over the socket transport only (this is {t}); 1 acts over every transport"
            )),
            Some(_) if !f.assigned => Some("NCCL runs another net in this process".to_string()),
            Some(_) if f.n_nodes < 2 => Some("a single node uses no network".to_string()),
            Some(_) => None,
        };
        let pool_cap = OnceLock::new();
        if let Some(threads) = f.pool_threads {
            let _ = pool_cap.set(threads.and_then(pool_channels).map(|p| p.channels));
        }
        Tuner {
            n_ranks: f.n_ranks.max(1),
            idle_because,
            set_channels: !f.user_channels,
            may_name: !f.user_algo_proto,
            pool_cap,
            kernel_unpacks_host_pages: f.kernel_unpacks_host_pages,
        }
    }

    /// The rows covering a collective `func` of `n_bytes` in this process, in table order.
    fn rows(&self, func: ncclFunc_t, n_bytes: usize) -> impl Iterator<Item = &'static Rule> {
        let unpacks = self
            .kernel_unpacks_host_pages
            .unwrap_or_else(crate::plugin::kernel_unpacks_host_pages);
        let n_ranks = self.n_ranks;
        RULES.iter().filter(move |r| r.covers(func, n_bytes, n_ranks, unpacks))
    }

    /// The pool's cap on channels: known at init, or learnt from the plugin once its pool is
    /// fixed (logged then); None while unknown or where none applies.
    fn pool_cap(&self) -> Option<i32> {
        if let Some(cap) = self.pool_cap.get() {
            return *cap;
        }
        let threads = crate::plugin::pool_threads_for_tuner()?;
        let rule = threads.and_then(pool_channels);
        if self.pool_cap.set(rule.map(|p| p.channels)).is_ok() {
            if let (Some(t), Some(p)) = (threads, rule) {
                log::info!(
                    target: "tcpxr::tuner",
                    "tuner: the I/O pool has {t} threads: collectives on at most {} channels ({})",
                    p.channels,
                    p.why
                );
            }
        }
        rule.map(|p| p.channels)
    }

    /// From tcpxr's configuration and process state, for NCCL's init of a communicator.
    pub fn open(n_ranks: usize, n_nodes: usize) -> Result<Tuner> {
        let config = config::global()?;
        let plugin = crate::plugin::get().ok();
        // A bound tcpxr set itself (nccl_settings::defaults) is not the user's.
        let users = |k: &&str| {
            std::env::var_os(k).is_some_and(|v| !v.is_empty())
                && !plugin.as_ref().is_some_and(|p| p.nccl_set.contains(k))
        };
        Ok(Tuner::new(&Facts {
            setting: config.tuner,
            transport: plugin.as_ref().map(|p| p.transport.kind()),
            assigned: crate::plugin::assigned(),
            n_ranks,
            n_nodes,
            user_channels: crate::nccl_settings::CHANNEL_BOUNDS.iter().any(users),
            user_algo_proto: ["NCCL_ALGO", "NCCL_PROTO"].iter().any(users),
            pool_threads: crate::plugin::pool_threads_for_tuner(),
            kernel_unpacks_host_pages: None,
        }))
    }

    /// NCCL's `getCollInfo`: may lower the ring's Simple cost in `costs` (`n_proto` columns per
    /// algorithm row, negative entries unusable) and returns the channel count to use, if any.
    pub fn choose(&self, func: ncclFunc_t, n_bytes: usize, costs: &mut [f32], n_proto: usize) -> Option<i32> {
        if self.idle_because.is_some() || n_proto <= NCCL_PROTO_SIMPLE {
            return None;
        }
        let ring_simple = ring_simple_at(n_proto);
        if ring_simple >= costs.len() {
            return None;
        }
        let cap = self.pool_cap();
        // `n` channels, or fewer by the pool's cap, where NCCL's choice keeps at least that many.
        let at_most = |n: Option<i32>, costs: &[f32]| {
            let n = capped(n, cap)?;
            let nccls = cheapest(costs)?;
            let (algo, proto) = (nccls / n_proto, nccls % n_proto);
            let keeps = bytes_per_channel(algo, proto, self.n_ranks).is_some_and(|per| n_bytes >= n as usize * per);
            (self.set_channels && keeps).then_some(n)
        };
        for rule in self.rows(func, n_bytes) {
            match rule.decision {
                Decision::RingSimple(channels) => {
                    prefer_ring_simple(costs, n_proto);
                    if let Some(n) = channels {
                        let few = self.set_channels && cheapest(costs) == Some(ring_simple);
                        return few.then(|| capped(Some(n), cap)).flatten();
                    }
                }
                Decision::OwnChannels => return at_most(Some(NCCL_OWN_CHANNELS), costs),
                Decision::BuiltChannels => break,
            }
        }
        at_most(None, costs)
    }
}

impl Tuner {
    /// NCCL's `getCollInfo` of v1 and v2, which show no cost table: the rows of [`RULES`] as
    /// [`choose`](Self::choose) walks them, each decided the nearest way such a tuner can say it.
    ///
    /// - A row that chooses the ring in Simple names it. v2 cannot ask for it only where NCCL's own
    ///   choice is the ring or PAT in another protocol, as v3+ do: where NCCL would have run the
    ///   tree, the ring runs. With the row's channel count, as v3+ give it. Where the user set
    ///   NCCL_ALGO or NCCL_PROTO nothing is named (NCCL takes a named choice without checking it
    ///   against them), and a row's channel count is left to NCCL too, since v3+ give it only
    ///   where the choice lands on the ring's Simple.
    /// - The below-bulk row caps the channels at [`NCCL_OWN_CHANNELS`] where NCCL keeps that many:
    ///   under the named ring's Simple by Simple's threshold; otherwise whichever protocol of the
    ///   ring NCCL picks (the largest of their thresholds, since v2 does not see NCCL's choice). NCCL
    ///   applies the count to the algorithm it picks, the tree in Simple included, which v3+ leave
    ///   alone (they cap only the tree's LL and LL128).
    /// - Every count, and bulk's (which no row covers), is capped by the pool's
    ///   ([`POOL_CHANNELS`]) where NCCL keeps that many, as [`choose`](Self::choose) does.
    pub fn pick(&self, func: ncclFunc_t, n_bytes: usize) -> Pick {
        let mut pick = Pick::default();
        if self.idle_because.is_some() {
            return pick;
        }
        let cap = self.pool_cap();
        // `n` channels, or fewer by the pool's cap, where NCCL keeps at least that many: under
        // the named ring's Simple by Simple's threshold; otherwise whichever protocol of the ring
        // NCCL picks (the largest of their thresholds).
        let at_most = |n: Option<i32>, pick: &Pick| {
            let n = capped(n, cap)?;
            let per_channel = match pick.algo_proto {
                Some((algo, proto)) => bytes_per_channel(algo, proto, self.n_ranks),
                None => [NCCL_PROTO_LL, NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE]
                    .into_iter()
                    .filter_map(|p| bytes_per_channel(NCCL_ALGO_RING, p, self.n_ranks))
                    .max(),
            };
            let keeps = per_channel.is_some_and(|per| n_bytes >= n as usize * per);
            (self.set_channels && keeps).then_some(n)
        };
        for rule in self.rows(func, n_bytes) {
            match rule.decision {
                Decision::RingSimple(channels) => {
                    if self.may_name {
                        pick.algo_proto = Some((NCCL_ALGO_RING, NCCL_PROTO_SIMPLE));
                    }
                    if let Some(n) = channels {
                        pick.channels = (self.set_channels && self.may_name)
                            .then_some(n)
                            .and_then(|n| capped(Some(n), cap));
                        return pick;
                    }
                }
                Decision::OwnChannels => {
                    pick.channels = at_most(Some(NCCL_OWN_CHANNELS), &pick);
                    return pick;
                }
                Decision::BuiltChannels => break,
            }
        }
        pick.channels = at_most(None, &pick);
        pick
    }
}

/// A row's channel count `n` (None: the row sets none) lowered to the pool's `cap`, or the cap
/// alone; None: neither sets a count.
fn capped(n: Option<i32>, cap: Option<i32>) -> Option<i32> {
    match (n, cap) {
        (Some(n), Some(c)) => Some(n.min(c)),
        (n, c) => n.or(c),
    }
}

/// The ring's Simple entry in NCCL's cost table of `n_proto` columns per algorithm.
fn ring_simple_at(n_proto: usize) -> usize {
    NCCL_ALGO_RING * n_proto + NCCL_PROTO_SIMPLE
}

/// Makes the ring in Simple NCCL's choice where NCCL's own is another protocol on the ring or PAT
/// and Simple is usable (not disabled by NCCL_PROTO or unsupported).
fn prefer_ring_simple(costs: &mut [f32], n_proto: usize) {
    let ring_simple = ring_simple_at(n_proto);
    let nccls = cheapest(costs);
    let ring_or_pat = nccls.is_some_and(|c| matches!(c / n_proto, NCCL_ALGO_RING | NCCL_ALGO_PAT));
    if ring_or_pat && nccls != Some(ring_simple) && costs[ring_simple] >= 0.0 {
        // Below every other usable cost, so NCCL's own choice (the cheapest) lands on it.
        costs[ring_simple] = 0.0;
    }
}

/// The index of the lowest usable (non-negative) cost, as NCCL picks it (the first on ties).
fn cheapest(costs: &[f32]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, &c) in costs.iter().enumerate() {
        if c >= 0.0 && best.is_none_or(|b| c < costs[b]) {
            best = Some(i);
        }
    }
    best
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

    const N_ALGO: usize = 7;
    const N_PROTO: usize = 3;

    fn facts() -> Facts {
        Facts {
            setting: Switch::Auto,
            transport: Some(TransportKind::Socket),
            assigned: true,
            n_ranks: 2,
            n_nodes: 2,
            user_channels: false,
            user_algo_proto: false,
            pool_threads: Some(None),
            kernel_unpacks_host_pages: Some(false),
        }
    }

    /// NCCL's table for tcpxr at a mid size: ring LL cheapest, ring Simple usable, the rest
    /// disabled except tree.
    fn table(ring_ll: f32, ring_simple: f32) -> Vec<f32> {
        let mut t = vec![-1.0; N_ALGO * N_PROTO];
        t[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_LL] = ring_ll;
        t[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE] = ring_simple;
        t[0] = 900.0; // tree LL
        t
    }

    /// `t`'s choice on `costs`, which it must leave as they were (it sets channels only).
    fn channels_only(t: &Tuner, func: ncclFunc_t, bytes: usize, mut costs: Vec<f32>) -> Option<i32> {
        let before = costs.clone();
        let channels = t.choose(func, bytes, &mut costs, N_PROTO);
        assert_eq!(costs, before, "{func} {bytes}: the costs changed");
        channels
    }

    #[test]
    fn mid_size_all_reduce_moves_from_ll_to_simple_on_two_channels() {
        let t = Tuner::new(&facts());
        assert_eq!(t.idle_because, None);
        let mut costs = table(40.0, 60.0);
        assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), Some(2));
        assert_eq!(cheapest(&costs), Some(NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE));
    }

    #[test]
    fn the_band_is_32_kib_to_4_mib_on_two_ranks_with_one_channel_below_512_kib() {
        let t = Tuner::new(&facts());
        for (bytes, channels) in [
            (32 << 10, 1),
            (64 << 10, 1),
            ((512 << 10) - 8, 1),
            (512 << 10, 2),
            (1 << 20, 2),
            ((4 << 20) - 8, 2),
        ] {
            let mut costs = table(20.0, 30.0);
            assert_eq!(
                t.choose(ncclFuncAllReduce, bytes, &mut costs, N_PROTO),
                Some(channels),
                "{bytes}"
            );
            assert_eq!(cheapest(&costs), Some(NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE));
        }
    }

    #[test]
    fn all_gather_and_reduce_scatter_of_64_kib_to_1_mib_shares_run_the_ring_in_simple_on_one_or_two_channels() {
        let t = Tuner::new(&facts());
        let (broadcast, ll, simple) = (ncclFuncBroadcast, NCCL_PROTO_LL, NCCL_PROTO_SIMPLE);
        // (collective, bytes over two ranks, NCCL's cheapest (algorithm, protocol), channels).
        for (func, bytes, (algo, proto), channels) in [
            (ncclFuncAllGather, 128 << 10, (NCCL_ALGO_RING, ll), Some(1)),
            (ncclFuncReduceScatter, (512 << 10) - 8, (NCCL_ALGO_RING, ll), Some(1)),
            (ncclFuncAllGather, 512 << 10, (NCCL_ALGO_PAT, simple), Some(2)),
            (ncclFuncReduceScatter, (2 << 20) - 8, (NCCL_ALGO_RING, simple), Some(2)),
        ] {
            let mut costs = vec![-1.0; N_ALGO * N_PROTO];
            costs[algo * N_PROTO + proto] = 10.0;
            costs[NCCL_ALGO_RING * N_PROTO + simple] = 30.0;
            assert_eq!(t.choose(func, bytes, &mut costs, N_PROTO), channels, "{func} {bytes}");
            assert_eq!(
                cheapest(&costs),
                Some(NCCL_ALGO_RING * N_PROTO + simple),
                "{func} {bytes}"
            );
        }
        // Outside the band (shares of 32 KiB and 1 MiB), and a broadcast: NCCL's protocol stays.
        for (func, bytes) in [
            (ncclFuncAllGather, (128 << 10) - 8),
            (ncclFuncReduceScatter, 2 << 20),
            (broadcast, 512 << 10),
        ] {
            let mut costs = table(10.0, 30.0);
            t.choose(func, bytes, &mut costs, N_PROTO);
            assert_eq!(cheapest(&costs), Some(NCCL_ALGO_RING * N_PROTO + ll), "{func} {bytes}");
        }
    }

    #[test]
    fn broadcast_and_reduce_of_64_to_512_kib_run_the_ring_in_simple_on_nccls_four_channels() {
        let t = Tuner::new(&facts());
        let (broadcast, reduce) = (ncclFuncBroadcast, ncclFuncReduce);
        let ring = |proto| NCCL_ALGO_RING * N_PROTO + proto;
        // (collective, bytes, channels): Simple made the cheapest, then the below-bulk rule (4
        // where NCCL's Simple keeps 4: from 4 x 32 KiB; below, NCCL's own count).
        for (func, bytes, channels) in [
            (broadcast, 64 << 10, None),
            (reduce, 128 << 10, Some(4)),
            (broadcast, (512 << 10) - 8, Some(4)),
        ] {
            let mut costs = table(10.0, 30.0);
            assert_eq!(t.choose(func, bytes, &mut costs, N_PROTO), channels, "{func} {bytes}");
            assert_eq!(cheapest(&costs), Some(ring(NCCL_PROTO_SIMPLE)), "{func} {bytes}");
        }
        // Outside: NCCL's protocol.
        for (func, bytes) in [(broadcast, (64 << 10) - 8), (reduce, 512 << 10)] {
            let mut costs = table(10.0, 30.0);
            t.choose(func, bytes, &mut costs, N_PROTO);
            assert_eq!(cheapest(&costs), Some(ring(NCCL_PROTO_LL)), "{func} {bytes}");
        }
    }

    #[test]
    fn below_bulk_the_ring_keeps_the_channels_nccl_chose_from_four() {
        let t = Tuner::new(&facts());
        let all_gather = ncclFuncAllGather;
        // (collective, bytes, NCCL's cheapest protocol on the ring, channels), two ranks.
        for (func, bytes, proto, channels) in [
            // all_reduce above the band, in NCCL's own protocol (its costs untouched).
            (ncclFuncAllReduce, 4 << 20, NCCL_PROTO_SIMPLE, Some(4)),
            (ncclFuncAllReduce, (64 << 20) - 8, NCCL_PROTO_SIMPLE, Some(4)),
            // From shares of 32 MiB: NCCL's 8.
            (ncclFuncAllReduce, 64 << 20, NCCL_PROTO_SIMPLE, None),
            (ncclFuncAllReduce, 1 << 30, NCCL_PROTO_SIMPLE, None),
            (all_gather, 64 << 20, NCCL_PROTO_SIMPLE, None),
            // Other collectives at any smaller size where NCCL would keep 4 or more.
            (all_gather, (64 << 20) - 8, NCCL_PROTO_SIMPLE, Some(4)),
            (all_gather, 2 << 20, NCCL_PROTO_SIMPLE, Some(4)),
            (all_gather, 32 << 10, NCCL_PROTO_LL, Some(4)),
            (all_gather, 20 << 10, NCCL_PROTO_LL128, Some(4)),
            // Where NCCL itself keeps fewer (LL: 8 KiB a channel on two ranks), its choice.
            (all_gather, (32 << 10) - 8, NCCL_PROTO_LL, None),
            (all_gather, 64 << 10, NCCL_PROTO_SIMPLE, None),
            (all_gather, 8, NCCL_PROTO_LL, None),
            (ncclFuncAllReduce, 8, NCCL_PROTO_LL, None),
        ] {
            let mut costs = vec![-1.0; N_ALGO * N_PROTO];
            costs[NCCL_ALGO_RING * N_PROTO + proto] = 10.0;
            costs[0] = 900.0; // tree LL
            assert_eq!(
                channels_only(&t, func, bytes, costs),
                channels,
                "{func} {bytes} {proto}"
            );
        }
        // PAT (NCCL spreads it by traffic itself): 4 at any size below bulk, none from it.
        for (bytes, channels) in [(1024, Some(4)), ((64 << 20) - 8, Some(4)), (64 << 20, None)] {
            let mut costs = vec![-1.0; N_ALGO * N_PROTO];
            costs[NCCL_ALGO_PAT * N_PROTO + NCCL_PROTO_SIMPLE] = 10.0;
            assert_eq!(
                t.choose(all_gather, bytes, &mut costs, N_PROTO),
                channels,
                "PAT {bytes}"
            );
        }
        // The tree in LL and LL128 (4 KiB and 5 KiB a channel at any rank count, NCCL's own
        // choice for a small all_reduce on 4 ranks): 4 where NCCL would keep more, its count below.
        let four = Tuner::new(&Facts { n_ranks: 4, ..facts() });
        for (proto, bytes, channels) in [
            (NCCL_PROTO_LL, 32 << 10, Some(4)),
            (NCCL_PROTO_LL, 16 << 10, Some(4)),
            (NCCL_PROTO_LL, (16 << 10) - 8, None),
            (NCCL_PROTO_LL, 8 << 10, None),
            (NCCL_PROTO_LL128, 20 << 10, Some(4)),
            (NCCL_PROTO_LL128, (20 << 10) - 8, None),
            // The tree in Simple: NCCL's choice at any size.
            (NCCL_PROTO_SIMPLE, 1 << 20, None),
        ] {
            let mut costs = table(40.0, 60.0);
            costs[NCCL_ALGO_TREE * N_PROTO + proto] = 10.0;
            assert_eq!(
                channels_only(&four, ncclFuncAllReduce, bytes, costs),
                channels,
                "tree {proto} {bytes}"
            );
        }
        // LL's threshold grows with the ranks: on 8, 128 KiB for 4 channels.
        let eight = Tuner::new(&Facts { n_ranks: 8, ..facts() });
        let mut costs = table(40.0, 60.0);
        assert_eq!(eight.choose(all_gather, (128 << 10) - 8, &mut costs, N_PROTO), None);
        assert_eq!(eight.choose(all_gather, 128 << 10, &mut costs, N_PROTO), Some(4));
    }

    #[test]
    fn where_nccls_kernel_unpacks_host_pages_shares_of_4_to_32_mib_keep_every_channel() {
        let t = Tuner::new(&Facts {
            kernel_unpacks_host_pages: Some(true),
            ..facts()
        });
        // (collective, bytes, channels), two ranks, NCCL's choice the ring in Simple.
        for (func, bytes, channels) in [
            (ncclFuncAllReduce, (8 << 20) - 8, Some(4)),
            (ncclFuncAllReduce, 8 << 20, None),
            (ncclFuncAllReduce, (64 << 20) - 8, None),
            (ncclFuncAllGather, 4 << 20, Some(4)),
            (ncclFuncAllGather, 8 << 20, None),
            (ncclFuncReduceScatter, 32 << 20, None),
            (ncclFuncAllReduce, 1 << 30, None),
        ] {
            let mut costs = vec![-1.0; N_ALGO * N_PROTO];
            costs[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE] = 10.0;
            assert_eq!(channels_only(&t, func, bytes, costs), channels, "{func} {bytes}");
            assert_eq!(t.pick(func, bytes).channels, channels, "v2: {func} {bytes}");
        }
        // The band's rows stand.
        let mut costs = table(40.0, 60.0);
        assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), Some(2));
        // On 4 ranks a 4 MiB share is 16 MiB.
        let four = Tuner::new(&Facts {
            n_ranks: 4,
            kernel_unpacks_host_pages: Some(true),
            ..facts()
        });
        let mut costs = table(40.0, 10.0);
        assert_eq!(four.choose(ncclFuncAllReduce, 8 << 20, &mut costs, N_PROTO), Some(4));
        assert_eq!(four.choose(ncclFuncAllReduce, 16 << 20, &mut costs, N_PROTO), None);
    }

    #[test]
    fn a_pool_of_few_threads_caps_every_collectives_channels() {
        assert_eq!(
            pool_channels(0).map(|p| p.channels),
            None,
            "NCCL's thread alone: unmeasured, no cap"
        );
        assert_eq!(pool_channels(1).map(|p| p.channels), None);
        assert_eq!(pool_channels(2).map(|p| p.channels), Some(2));
        assert_eq!(
            pool_channels(3).map(|p| p.channels),
            None,
            "measured: mixed, keeps 8 (run 253)"
        );
        assert_eq!(
            pool_channels(4).map(|p| p.channels),
            None,
            "measured within the spread of 8"
        );
        assert_eq!(pool_channels(7).map(|p| p.channels), None);
        assert_eq!(
            pool_channels(8).map(|p| p.channels),
            None,
            "a roomy pool keeps NCCL's 8 for bulk"
        );
        let with = |threads: Option<usize>| {
            Tuner::new(&Facts {
                pool_threads: Some(threads),
                ..facts()
            })
        };
        let simple_ring = |bytes: usize, t: &Tuner| {
            let mut costs = vec![-1.0; N_ALGO * N_PROTO];
            costs[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE] = 10.0;
            t.choose(ncclFuncAllReduce, bytes, &mut costs, N_PROTO)
        };
        // (pool threads, channels for: bulk all_reduce, below bulk, the band's 2-channel row).
        for (threads, bulk, below, band) in [
            (None, None, Some(4), Some(2)),
            (Some(10), None, Some(4), Some(2)),
            (Some(6), None, Some(4), Some(2)),
            (Some(2), Some(2), Some(2), Some(2)),
        ] {
            let t = with(threads);
            assert_eq!(simple_ring(1 << 30, &t), bulk, "bulk, {threads:?} threads");
            assert_eq!(simple_ring(8 << 20, &t), below, "below bulk, {threads:?} threads");
            let mut costs = table(40.0, 60.0);
            assert_eq!(
                t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO),
                band,
                "band, {threads:?}"
            );
        }
        // A cap never raises NCCL's own smaller count: an 8 B all_reduce in LL keeps it.
        let two = with(Some(2));
        let mut costs = vec![-1.0; N_ALGO * N_PROTO];
        costs[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_LL] = 10.0;
        assert_eq!(two.choose(ncclFuncAllReduce, 8, &mut costs, N_PROTO), None);
        // The band's one-channel row stays at 1.
        let mut costs = table(40.0, 60.0);
        assert_eq!(two.choose(ncclFuncAllReduce, 64 << 10, &mut costs, N_PROTO), Some(1));
        // The user's channel bounds stand above the cap.
        let bounded = Tuner::new(&Facts {
            user_channels: true,
            pool_threads: Some(Some(2)),
            ..facts()
        });
        assert_eq!(simple_ring(1 << 30, &bounded), None);
        // Tables without costs (v1, v2): the same caps.
        assert_eq!(two.pick(ncclFuncAllReduce, 1 << 30).channels, Some(2));
        assert_eq!(with(Some(6)).pick(ncclFuncAllReduce, 1 << 30).channels, None);
        assert_eq!(with(Some(10)).pick(ncclFuncAllReduce, 1 << 30).channels, None);
        assert_eq!(two.pick(ncclFuncAllGather, 8 << 20).channels, Some(2));
        assert_eq!(two.pick(ncclFuncAllReduce, 8).channels, None);
    }

    #[test]
    fn the_share_scales_with_ranks() {
        let t = Tuner::new(&Facts { n_ranks: 8, ..facts() });
        // 1 MiB over 8 ranks is a 128 KiB share: Simple, 1 channel; 8 MiB a 1 MiB share: 2 channels.
        // 64 KiB is an 8 KiB share: LL.
        let mut costs = table(40.0, 60.0);
        assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), Some(1));
        let mut costs = table(40.0, 60.0);
        assert_eq!(t.choose(ncclFuncAllReduce, 8 << 20, &mut costs, N_PROTO), Some(2));
        let mut costs = table(40.0, 60.0);
        assert_eq!(t.choose(ncclFuncAllReduce, 64 << 10, &mut costs, N_PROTO), None);
        assert_eq!(cheapest(&costs), Some(NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_LL));
    }

    #[test]
    fn disabled_protocols_and_nccls_other_choices_are_respected() {
        let t = Tuner::new(&facts());
        // NCCL_PROTO=LL: Simple is -1 and stays so.
        let mut costs = table(40.0, -1.0);
        assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), None);
        assert_eq!(costs[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE], -1.0);
        // Tree cheapest: NCCL's choice stands.
        let mut costs = table(40.0, 60.0);
        costs[0] = 10.0;
        assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), None);
        assert_eq!(cheapest(&costs), Some(0));
        // Simple already cheapest: only the channels.
        let mut costs = table(60.0, 40.0);
        assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), Some(2));
        assert_eq!(costs[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE], 40.0);
    }

    #[test]
    fn user_channel_bounds_keep_nccls_channel_count() {
        let t = Tuner::new(&Facts {
            user_channels: true,
            ..facts()
        });
        let mut costs = table(40.0, 60.0);
        assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), None);
        assert_eq!(cheapest(&costs), Some(NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE));
        assert_eq!(
            t.choose(ncclFuncAllGather, 4 << 20, &mut table(40.0, 60.0), N_PROTO),
            None
        );
    }

    #[test]
    fn idle_unless_tcpxr_is_the_net_of_a_multi_node_communicator_over_the_socket() {
        let idle = |f: Facts| Tuner::new(&f).idle_because;
        assert!(idle(Facts {
            setting: Switch::Off,
            ..facts()
        })
        .unwrap()
        .contains("NCCL_TCPXR_TUNER=0"));
        assert!(idle(Facts {
            transport: None,
            ..facts()
        })
        .is_some());
        assert!(idle(Facts {
            transport: Some(TransportKind::Tcpx),
            ..facts()
        })
        .unwrap()
        .contains("socket transport only"));
        assert_eq!(
            idle(Facts {
                transport: Some(TransportKind::Tcpx),
                setting: Switch::On,
                ..facts()
            }),
            None
        );
        assert!(idle(Facts {
            assigned: false,
            ..facts()
        })
        .unwrap()
        .contains("another net"));
        assert!(idle(Facts { n_nodes: 1, ..facts() }).unwrap().contains("single node"));
        // An idle tuner changes nothing.
        let t = Tuner::new(&Facts { n_nodes: 1, ..facts() });
        let mut costs = table(40.0, 60.0);
        assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), None);
        assert_eq!(costs, table(40.0, 60.0));
    }

    #[test]
    fn without_a_cost_table_the_rows_name_the_ring_in_simple_and_cap_channels_where_any_ring_protocol_keeps_four() {
        let t = Tuner::new(&facts());
        let simple = Some((NCCL_ALGO_RING, NCCL_PROTO_SIMPLE));
        let pick = |algo_proto, channels| Pick { algo_proto, channels };
        // (collective, bytes over two ranks, what v2 tells NCCL).
        for (func, bytes, want) in [
            // The all_reduce band: named, with its channels.
            (ncclFuncAllReduce, 32 << 10, pick(simple, Some(1))),
            (ncclFuncAllReduce, 256 << 10, pick(simple, Some(1))),
            (ncclFuncAllReduce, 1 << 20, pick(simple, Some(2))),
            (ncclFuncAllReduce, (4 << 20) - 8, pick(simple, Some(2))),
            // Below it NCCL's choice; above it and below bulk, 4 channels under NCCL's choice.
            (ncclFuncAllReduce, 16 << 10, Pick::default()),
            (ncclFuncAllReduce, 4 << 20, pick(None, Some(4))),
            (ncclFuncAllReduce, (64 << 20) - 8, pick(None, Some(4))),
            (ncclFuncAllReduce, 64 << 20, Pick::default()),
            // all_gather's band, and below it: 4 only from 4 x 32 KiB (Simple's threshold, the
            // ring's largest on two ranks).
            (ncclFuncAllGather, 128 << 10, pick(simple, Some(1))),
            (ncclFuncReduceScatter, 1 << 20, pick(simple, Some(2))),
            (ncclFuncAllGather, (128 << 10) - 8, Pick::default()),
            (ncclFuncAllGather, 64 << 10, Pick::default()),
            // broadcast and reduce: named, then the below-bulk row by Simple's threshold.
            (ncclFuncBroadcast, 64 << 10, pick(simple, None)),
            (ncclFuncReduce, 128 << 10, pick(simple, Some(4))),
            (ncclFuncBroadcast, 512 << 10, pick(None, Some(4))),
        ] {
            assert_eq!(t.pick(func, bytes), want, "{func} {bytes}");
        }
        // LL's threshold grows with the ranks: on 16, 256 KiB for 4 channels.
        let sixteen = Tuner::new(&Facts { n_ranks: 16, ..facts() });
        assert_eq!(sixteen.pick(ncclFuncAllGather, (256 << 10) - 8), Pick::default());
        assert_eq!(sixteen.pick(ncclFuncAllGather, 256 << 10), pick(None, Some(4)));
        // The user's NCCL_ALGO or NCCL_PROTO: nothing named, nor a named row's channels.
        let named_by_user = Tuner::new(&Facts {
            user_algo_proto: true,
            ..facts()
        });
        assert_eq!(named_by_user.pick(ncclFuncAllReduce, 1 << 20), Pick::default());
        assert_eq!(named_by_user.pick(ncclFuncBroadcast, 256 << 10), pick(None, Some(4)));
        // The user's channel bounds: named, NCCL's channels.
        let bounded = Tuner::new(&Facts {
            user_channels: true,
            ..facts()
        });
        assert_eq!(bounded.pick(ncclFuncAllReduce, 1 << 20), pick(simple, None));
        assert_eq!(bounded.pick(ncclFuncAllReduce, 4 << 20), Pick::default());
        // Idle: nothing.
        let idle = Tuner::new(&Facts { n_nodes: 1, ..facts() });
        assert_eq!(idle.pick(ncclFuncAllReduce, 1 << 20), Pick::default());
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
