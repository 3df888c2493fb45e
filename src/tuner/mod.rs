//! The tuner tcpxr exports beside its net tables: which protocol and how many channels NCCL uses
//! for a collective over tcpxr's socket transport below bulk sizes.
//!
//! NCCL sizes its choice by the speed a net reports. For tcpxr's 400 Gb/s it runs all_reduce in
//! its LL protocol on 4 channels up to 1 MiB, and LL's many small messages cost tcpxr 2-4x Socket's
//! time there; Simple on at most 2 channels measured fastest from 32 KiB to 4 MiB (two ranks),
//! while NCCL's own choice (Simple, 4 channels) stays best from 4 MiB up. Reporting a lower speed
//! alone gives 2 channels for every size and costs 40 % at bulk, so the choice is made per
//! collective here instead (a lower speed with tcpxr's 8 channels kept is another matter:
//! `nccl_settings::assumed_speed`). The measurements are in docs/BENCHMARKS.md#the-mid-band-128-kib---8-mib.
//!
//! With GPU buffers over the socket, NCCL's kernel reads every received page of a collective from
//! host memory at about 2.5 GB/s a channel, so there 4 channels cost more than they save from
//! shares of 4 MiB: such a process keeps NCCL's 8 from there ([`rules::When::KernelUnpacksHostPages`]).
//!
//! The rules are one table, [`rules::RULES`], on a communicator of two or more nodes: each row names the
//! collectives it covers, the range of sizes (each rank's share, `nBytes / nRanks`: the size of
//! each ring step's message, whatever the ranks; NCCL gives a tuner an all_gather's and a
//! reduce_scatter's whole buffer, so their share is one rank's piece; or, for broadcast and
//! reduce, the whole buffer), when it applies ([`rules::When`]), what it decides, and why. The first
//! row that covers a collective decides, except that a row choosing Simple without a channel
//! count lets the later rows choose the channels. [`describe`] renders the table for the log line
//! at each communicator's init (and is the text for the docs).
//!
//! Over host buffers on the socket transport, the channels of every collective are further capped
//! by the process's I/O pool ([`rules::POOL_CHANNELS`]): a pool of 2 threads moves bulk faster over 2
//! channels' connections than over 8. The pool is fixed at the first listen or connect, so the
//! cap applies from the collectives enqueued after it (the first ones of a communicator keep
//! NCCL's count).
//!
//! NCCL 2.22 and later (tuner v3-v6) show the tuner their cost table, and [`Tuner::choose`]
//! decides on it; NCCL 2.19-2.21 (v1, v2) show none and take one named choice instead, which
//! [`Tuner::pick`] makes from the same rows.
pub mod rules;
#[cfg(test)]
mod tests;

use crate::abi::{
    ncclFunc_t, NCCL_ALGO_PAT, NCCL_ALGO_RING, NCCL_ALGO_TREE, NCCL_PROTO_LL, NCCL_PROTO_LL128, NCCL_PROTO_SIMPLE,
};
use crate::config::{self, Switch};
use crate::transport::TransportKind;

pub use rules::describe;
use rules::{pool_channels, Decision, Rule, NCCL_OWN_CHANNELS, RULES};
use std::sync::OnceLock;

/// The bytes per channel below which NCCL gives up a channel of this algorithm, or None where
/// the tuner leaves the count to NCCL. NCCL 2.28 (enqueue.cc, topoGetAlgoInfo) drops channels
/// while `nBytes < channels x threads x threshold`. The ring's at NCCL's most threads per channel
/// (device.h: LL and Simple 512, LL128 640) and its per-thread thresholds (comm.h: LL and LL128
/// 8 bytes, Simple 64; tuning.cc multiplies LL's by the ranks, the ring's only), so that NCCL
/// surely keeps as many channels as `nBytes` holds of these (where NCCL runs the ring's Simple on
/// 256 threads, as with host buffers over `lo` reported at 10 Gb/s, `nccl_settings::assumed_speed`,
/// it keeps them down to half these bytes: a cap then acts only from twice the bytes it could,
/// and below that NCCL's own count stands even where it exceeds the cap; never raised, not
/// measured). PAT: none (NCCL sets no thread count
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
    /// Whether [`Tuner::pick`] may name LL: not where tcpxr set NCCL_PROTO=Simple itself (GPU
    /// buffers, whose unpack ring only Simple reads), since NCCL would run a named LL regardless.
    pub may_name_ll: bool,
    /// The pool's cap on channels ([`rules::POOL_CHANNELS`]; None inside: no cap), once known.
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
    /// tcpxr set NCCL_PROTO itself (Simple, for GPU buffers).
    pub tcpxr_set_proto: bool,
    /// The I/O pool's threads for the channel cap, as `plugin::pool_threads_for_tuner` says it:
    /// Some(None) where no cap applies, None while not known yet.
    pub pool_threads: Option<Option<usize>>,
    /// Whether NCCL's kernel places collective receives from host memory ([`rules::When`]); None: ask the
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
            may_name_ll: !f.user_algo_proto && !f.tcpxr_set_proto,
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

    /// A tuner that leaves every choice to NCCL, saying `why` in its init line.
    fn idle(n_ranks: usize, why: String) -> Tuner {
        Tuner {
            n_ranks: n_ranks.max(1),
            idle_because: Some(why),
            set_channels: false,
            may_name: false,
            may_name_ll: false,
            pool_cap: OnceLock::new(),
            kernel_unpacks_host_pages: None,
        }
    }

    /// From tcpxr's configuration and process state, for NCCL's init of a communicator; idle,
    /// never an error, where the configuration was refused.
    pub fn open(n_ranks: usize, n_nodes: usize) -> Tuner {
        let plugin = crate::plugin::get().ok();
        let config = match config::global() {
            Ok(c) => c,
            // The net's init refused it, said why, and NCCL went on with another net; NCCL still
            // loads this tuner from the library it keeps open, and a tuner init that fails fails
            // the whole communicator. So the tuner stays out of NCCL's way instead.
            Err(e) => return Tuner::idle(n_ranks, format!("tcpxr's configuration was refused: {}", e.msg)),
        };
        // A bound tcpxr set itself (nccl_settings::defaults) is not the user's.
        let users = |k: &&str| {
            std::env::var_os(k).is_some_and(|v| !v.is_empty())
                && !plugin.as_ref().is_some_and(|p| p.nccl_set.contains(k))
        };
        Tuner::new(&Facts {
            setting: config.tuner,
            transport: plugin.as_ref().map(|p| p.transport.kind()),
            assigned: crate::plugin::assigned(),
            n_ranks,
            n_nodes,
            user_channels: crate::nccl_settings::CHANNEL_BOUNDS.iter().any(users),
            user_algo_proto: ["NCCL_ALGO", "NCCL_PROTO"].iter().any(users),
            tcpxr_set_proto: plugin.as_ref().is_some_and(|p| p.nccl_set.contains(&"NCCL_PROTO")),
            pool_threads: crate::plugin::pool_threads_for_tuner(),
            kernel_unpacks_host_pages: None,
        })
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
                        if self.set_channels && cheapest(costs) == Some(ring_simple) {
                            return capped(Some(n), cap);
                        }
                        // NCCL keeps another choice (the tree, or Simple disabled): the row's
                        // count is for the ring's Simple, but the pool's cap holds for any.
                        return at_most(None, costs);
                    }
                }
                Decision::OwnChannels => return at_most(Some(NCCL_OWN_CHANNELS), costs),
                Decision::BuiltChannels => break,
                Decision::Ll { from, to } => prefer_ll(costs, n_proto, from, to),
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
    /// - A row that trades one algorithm's LL for the other's names its LL (v2 does not see which
    ///   NCCL would run), not where tcpxr set NCCL_PROTO=Simple for GPU buffers.
    /// - The below-bulk row caps the channels at [`NCCL_OWN_CHANNELS`] where NCCL keeps that many:
    ///   under the named ring's Simple by Simple's threshold; otherwise whichever protocol of the
    ///   ring NCCL picks (the largest of their thresholds, since v2 does not see NCCL's choice). NCCL
    ///   applies the count to the algorithm it picks, the tree in Simple included, which v3+ leave
    ///   alone (they cap only the tree's LL and LL128).
    /// - Every count, and bulk's (which no row covers), is capped by the pool's
    ///   ([`rules::POOL_CHANNELS`]) where NCCL keeps that many, as [`choose`](Self::choose) does.
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
                Decision::Ll { to, .. } => {
                    if self.may_name_ll {
                        pick.algo_proto = Some((to, NCCL_PROTO_LL));
                    }
                }
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
    let nccls = cheapest(costs);
    let ring_or_pat = nccls.is_some_and(|c| matches!(c / n_proto, NCCL_ALGO_RING | NCCL_ALGO_PAT));
    if ring_or_pat && nccls != Some(ring_simple_at(n_proto)) {
        make_cheapest(costs, ring_simple_at(n_proto));
    }
}

/// Makes algorithm `to`'s LL NCCL's choice where NCCL's own is algorithm `from`'s LL and `to`'s
/// LL is usable.
fn prefer_ll(costs: &mut [f32], n_proto: usize, from: usize, to: usize) {
    if cheapest(costs) == Some(from * n_proto + NCCL_PROTO_LL) {
        make_cheapest(costs, to * n_proto + NCCL_PROTO_LL);
    }
}

/// Makes entry `at` NCCL's choice if it is usable (not negative: disabled or unsupported).
fn make_cheapest(costs: &mut [f32], at: usize) {
    if let Some(c) = costs.get_mut(at).filter(|c| **c >= 0.0) {
        // Below every other usable cost, so NCCL's own choice (the cheapest) lands on it.
        *c = 0.0;
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
