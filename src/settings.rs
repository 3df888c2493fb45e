//! Every "auto" rule of tcpxr's own settings in one place: the host facts the rules read (once per
//! process, [`host`]), the rules as data with their reasons ([`POOL_RULES`] and the functions
//! beside it), and the value each setting takes with where it came from (set by environment,
//! default, auto: reason, or capped: reason), which plugin logs as "effective settings" blocks
//! (target `tcpxr::init`): one at init, and one when the first connection fixes the I/O pool.
//!
//! The evidence behind each auto value is in docs/BENCHMARKS.md#defaults.
//!
//! **The pool rules** ([`POOL_RULES`]: NCCL_TCPXR_HANDOFF_BYTES, NCCL_TCPXR_INLINE_IDLE_BYTES,
//! NCCL_TCPXR_IDLE_CHUNK_BYTES, NCCL_TCPXR_SPREAD_PIECE_BYTES, NCCL_TCPXR_IO_SPIN_US) decide from who moves the process's stripes ([`Movers`]): the threads
//! built for it and the cores it has of its own, not from the cores the process may use. Eight
//! ranks on 16 cores may each use all 16, yet each gets one I/O thread and 2 cores' share: handing
//! every chunk to that one thread made all_reduce and sendrecv of 512 KiB-128 MiB 1.6-7x slower
//! than NCCL's thread copying itself, while four ranks (2 threads on 4 cores each) were 1.7-2.3x
//! faster handing off. The movers are known only when the first connection is made, once the
//! other ranks on the host have announced themselves, so these rules are resolved then.
//!
//! Not here, though listed in the block: the inner transport's choice (plugin's
//! `open_transport`: deciding means loading TCPX) and the NCCL variables tcpxr gives values
//! (nccl_settings.rs: NCCL's settings, not tcpxr's).
//!
//! This module uses only config and error, so that every layer may ask it: the socket transport
//! sizes its pool with [`pool_movers`] and resolves the rules it applies when its first
//! connection is made.
use crate::config::{self, Config};
use std::fmt;
use std::sync::OnceLock;

/// The cores a process needs of its own for its stripes to move in parallel: NCCL's threads keep
/// [`NCCL_CORES_PER_PROCESS`] busy, and two threads of the pool need two more.
pub const PARALLEL_CORES: usize = 4;

/// The threads that must move stripes for them to move in parallel.
pub const PARALLEL_THREADS: usize = 2;

/// I/O threads of an auto-sized pool at most. Bulk moves as fast as the pool copies (a rank's
/// ring is its threads' rate, run 206), so more threads pay at bulk while the band holds: 10
/// against 8 (4 spinners either way) took 12-14 % less time from 64 MiB for 2 ranks on 32 cores
/// (run 211, host buffers; run 212, GPU buffers: 4-19 % from 16 MiB) and 1-13 % from 16 MiB for
/// 4 ranks on 64 (run 181), with 256 KiB-8 MiB within 1.06x; 12 cost the 2-rank band up to 13 %
/// (run 211), and 14 for 4 ranks on 64 cores (each rank's 16 less NCCL's 2) cost their band 4-31 %
/// with bulk no faster and their ring at 512 KiB slower, though 10 leave cores idle (run 261).
pub const MAX_AUTO_IO_THREADS: usize = 10;

/// Cores each process keeps busy with NCCL's own threads while data moves: NCCL's proxy thread
/// and the application's thread waiting on the GPU both poll.
pub const NCCL_CORES_PER_PROCESS: usize = 2;

/// The point-to-point idle inline limit's floor (NCCL_TCPXR_INLINE_IDLE_P2P_BYTES auto).
pub const INLINE_IDLE_P2P_FLOOR: usize = 128 << 10;

/// The host as the rules see it, read once per process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Host {
    /// The cores this process may use (its CPU affinity and cgroup quota, as the standard library
    /// reads them), at least 1.
    pub cores: usize,
    /// The cores online on the host.
    pub online: usize,
}

impl Host {
    /// Whether the process is held to part of the host (CPU affinity, a cgroup quota): then it
    /// was given its share, and other processes are not counted.
    pub fn held(&self) -> bool {
        self.cores < self.online
    }
}

/// The host facts, read at the first call and kept.
pub fn host() -> Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    *HOST.get_or_init(|| Host {
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        online: online_cores(),
    })
}

fn online_cores() -> usize {
    // SAFETY: sysconf reads a system value and has no memory effects.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(0)
}

/// Where a setting's value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The user's value.
    Env,
    /// tcpxr's default (config's PARAMS).
    Default,
    /// An auto rule, and why it gave this value.
    Auto(String),
    /// The user's or default value, lowered to what something else allows, and why.
    Capped(String),
    /// The user's or default value, raised to what something else needs, and why.
    Raised(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Env => f.write_str("set by environment"),
            Source::Default => f.write_str("default"),
            Source::Auto(why) => write!(f, "auto: {why}"),
            Source::Capped(why) => write!(f, "capped: {why}"),
            Source::Raised(why) => write!(f, "raised: {why}"),
        }
    }
}

/// A resolved setting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value<T> {
    pub value: T,
    pub source: Source,
}

/// The source of a setting config read as a plain value: the environment's, or the default.
pub fn env_or_default(var: &str) -> Source {
    if config::env_value(var).is_some() {
        Source::Env
    } else {
        Source::Default
    }
}

/// Who moves a process's stripes, as the pool rules see it: the threads that do (the socket
/// transport's I/O pool; TCPX's own) and the cores the process has of its own (its share of the
/// host), with how they were found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Movers {
    pub threads: usize,
    pub cores: usize,
    pub why: String,
}

impl Movers {
    /// Whether stripes move in parallel: at least [`PARALLEL_THREADS`] threads move them, on at
    /// least [`PARALLEL_CORES`] cores of the process's own.
    pub fn parallel(&self) -> bool {
        self.threads >= PARALLEL_THREADS && self.cores >= PARALLEL_CORES
    }
}

impl fmt::Display for Movers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = if self.threads == 1 { "" } else { "s" };
        write!(
            f,
            "{} thread{s} on {} cores of its own ({})",
            self.threads, self.cores, self.why
        )
    }
}

/// A rule that decides an auto setting from whether stripes move in parallel
/// ([`Movers::parallel`]).
#[derive(Clone, Copy, Debug)]
pub struct PoolRule {
    /// The variable it resolves.
    pub var: &'static str,
    /// Its value when stripes move in parallel, and why.
    pub parallel: u64,
    pub why_parallel: &'static str,
    /// Its value otherwise, and why.
    pub few: u64,
    pub why_few: &'static str,
}

impl PoolRule {
    /// The user's value, or this rule's for `movers`.
    pub fn resolve(&self, setting: Option<u64>, movers: &Movers) -> Value<u64> {
        match (setting, movers.parallel()) {
            (Some(v), _) => Value {
                value: v,
                source: Source::Env,
            },
            (None, true) => Value {
                value: self.parallel,
                source: Source::Auto(format!("{movers}, in parallel: {}", self.why_parallel)),
            },
            (None, false) => Value {
                value: self.few,
                source: Source::Auto(format!(
                    "{movers}, short of {PARALLEL_THREADS} threads on {PARALLEL_CORES} cores of its own: {}",
                    self.why_few
                )),
            },
        }
    }

    /// [`PoolRule::resolve`] for a setting of bytes.
    pub fn resolve_bytes(&self, setting: Option<usize>, movers: &Movers) -> Value<usize> {
        let v = self.resolve(setting.map(|b| b as u64), movers);
        Value {
            // Every rule's value and every accepted setting is at most 1 GiB.
            value: v.value as usize,
            source: v.source,
        }
    }
}

/// NCCL_TCPXR_HANDOFF_BYTES: the backlog from which a stripe goes to the I/O pool.
pub const HANDOFF: PoolRule = PoolRule {
    var: "NCCL_TCPXR_HANDOFF_BYTES",
    parallel: 0,
    why_parallel: "every backlog to the pool, which copies stripes in parallel (measured at 4 connections on 32 \
                   cores: 512 KiB messages at 24.8 GB/s against 5.1 with NCCL's thread copying up to 512 KiB alone)",
    few: 512 << 10,
    why_few: "NCCL's thread copies up to 512 KiB itself, as a hand-off gains nothing without cores to copy in \
              parallel (measured on 2 cores: 3.5 GB/s against 2.0 handing every backlog off; 8 ranks on 16 cores, \
              one I/O thread each: all_reduce and sendrecv of 512 KiB-128 MiB 1.6-7x faster)",
};

/// NCCL_TCPXR_INLINE_IDLE_BYTES: the largest message sent inline on the control connection while
/// its comm has nothing else in flight.
pub const INLINE_IDLE: PoolRule = PoolRule {
    var: "NCCL_TCPXR_INLINE_IDLE_BYTES",
    parallel: 32 << 10,
    why_parallel: "an inline message is copied by NCCL's proxy thread alone on one socket while the pool could \
                   stripe it (measured on 32 cores: all_reduce of 2-8 MiB at 2.5-3.0 GB/s with 512 KiB against \
                   4.0-11.7 with 64 KiB; 32 KiB made all_gather and reduce_scatter of 256 KiB-1 MiB faster still)",
    few: 512 << 10,
    why_few: "up to one default chunk inline, as before the pool copied in parallel: the lower limits were \
              measured on a parallel pool only",
};

/// NCCL_TCPXR_IDLE_CHUNK_BYTES: the chunk size of a message striped while its comm is nearly idle.
pub const IDLE_CHUNK: PoolRule = PoolRule {
    var: "NCCL_TCPXR_IDLE_CHUNK_BYTES",
    parallel: 64 << 10,
    why_parallel: "a latency-bound message goes out over several stripes at once, each moved by its own I/O thread \
                   (measured on 32 cores: one 512 KiB message one way in 55-59 us in 64 KiB chunks against 88-102 \
                   in one 512 KiB chunk)",
    few: 0,
    why_few: "the comm's chunks: without threads to move them in parallel more chunks only cost more system calls",
};

/// NCCL_TCPXR_IO_SPIN_US: how long an idle I/O thread looks for work before it sleeps.
pub const IO_SPIN: PoolRule = PoolRule {
    var: "NCCL_TCPXR_IO_SPIN_US",
    parallel: 200,
    why_parallel: "a hand-off while traffic flows skips a wake-up (measured up to 1.10x faster in the all_reduce \
                   band with one spinner)",
    few: 0,
    why_few: "a spinning thread would take one of few cores from NCCL's",
};

/// The spinners the auto rule gives a process whose own cores hold them (see [`io_spinners`]).
pub const ROOMY_SPINNERS: usize = 4;

/// NCCL_TCPXR_IO_SPIN_THREADS: the user's value, or [`ROOMY_SPINNERS`] where the process's own
/// cores hold its I/O threads, NCCL's busy ones and that many more, else 1. Four spinners took a
/// rank's hand-offs in about 2 us and made 4-rank all_reduce of 1-2 MiB 7-25 % faster on 16 cores a
/// rank with 8 I/O threads (runs 175, 176); where the I/O threads already fill the cores, spinners
/// take cores from the copying (two ranks with 8 I/O threads each on the same 16 cores, each
/// taking the 16 its affinity allowed as its own: sendrecv of 64-256 MiB 3-12 % slower with 4
/// than with 1, run 176c).
pub fn io_spinners(setting: Option<usize>, movers: &Movers) -> Value<usize> {
    if let Some(n) = setting {
        return Value {
            value: n,
            source: Source::Env,
        };
    }
    let need = movers.threads + NCCL_CORES_PER_PROCESS + ROOMY_SPINNERS;
    if movers.cores >= need {
        Value {
            value: ROOMY_SPINNERS,
            source: Source::Auto(format!(
                "{movers}: room for {ROOMY_SPINNERS} beside the I/O threads and NCCL's {NCCL_CORES_PER_PROCESS}, so a hand-off finds a spinner while a rank's four ring flows keep others busy"
            )),
        }
    } else {
        Value {
            value: 1,
            source: Source::Auto(format!(
                "{movers}: fewer than the {need} cores {ROOMY_SPINNERS} spinners need beside the I/O threads and NCCL's {NCCL_CORES_PER_PROCESS}, so one, as more would take cores from the copying"
            )),
        }
    }
}

/// The rules that decide from [`Movers::parallel`].
pub const POOL_RULES: [PoolRule; 5] = [HANDOFF, INLINE_IDLE, IDLE_CHUNK, SPREAD, IO_SPIN];

/// NCCL_TCPXR_INLINE_IDLE_P2P_BYTES: the user's value, or the larger of 128 KiB and the general
/// idle limit in effect (`inline_idle`). Point-to-point connections carry one message each way
/// with nothing else in flight (measured: sendrecv of 128 KiB in 76-83 us inline against 98-103
/// striped), and the all_reduce that keeps the general limit low does not run on them.
pub fn inline_idle_p2p(setting: Option<usize>, inline_idle: usize) -> Value<usize> {
    match setting {
        Some(v) => Value {
            value: v,
            source: Source::Env,
        },
        None => Value {
            value: inline_idle.max(INLINE_IDLE_P2P_FLOOR),
            source: Source::Auto(format!(
                "the larger of {} KiB and NCCL_TCPXR_INLINE_IDLE_BYTES ({inline_idle}): a point-to-point connection \
                 carries one message each way with nothing else in flight",
                INLINE_IDLE_P2P_FLOOR >> 10
            )),
        },
    }
}

/// NCCL_TCPXR_IO_THREADS as init resolves it: the user's count capped at the cores (said at INFO,
/// target `tcpxr::init`), or None for auto, which [`pool_movers`] sizes when the first connection
/// is made, once the other ranks on the host have announced themselves.
pub fn io_threads(setting: Option<usize>, host: Host) -> Value<Option<usize>> {
    let Some(wanted) = setting else {
        return Value {
            value: None,
            source: Source::Auto(format!(
                "sized at the first connection: this process's share of its {} cores among the tcpxr processes on \
                 the host, less {NCCL_CORES_PER_PROCESS} each for NCCL's threads when shared, 1 to \
                 {MAX_AUTO_IO_THREADS}",
                host.cores
            )),
        };
    };
    let threads = wanted.min(host.cores);
    if threads < wanted {
        log::info!(
            target: "tcpxr::init",
            "NCCL_TCPXR_IO_THREADS={wanted} capped at the {threads} cores this process may use"
        );
        return Value {
            value: Some(threads),
            source: Source::Capped(format!("{wanted} asked, {threads} cores this process may use")),
        };
    }
    Value {
        value: Some(threads),
        source: Source::Env,
    }
}

/// Who moves the socket transport's stripes: its I/O pool of `setting` threads (NCCL_TCPXR_IO_THREADS
/// as [`io_threads`] resolved it; None: auto, [`share`]). A process held to part of the host
/// ([`Host::held`]) has the cores it may use; otherwise the host's cores are split among the
/// tcpxr processes on it, `processes()`, this one included (asked only then). Auto: a process
/// alone takes up to [`MAX_AUTO_IO_THREADS`] threads; processes sharing the host's cores split
/// them, each leaving 2 for NCCL's own threads (measured: two ranks on 16 cores with 6 threads
/// each ran all_reduce of 256 MiB - 1 GiB 1.05-1.3x faster than with 8, 5 and 7 in between or
/// slower), up to the same cap.
pub fn pool_movers(setting: Option<usize>, host: Host, processes: impl FnOnce() -> usize) -> Movers {
    let (processes, whose) = if host.held() {
        (1, format!("{} cores this process may use", host.cores))
    } else {
        let n = processes().max(1);
        let plural = if n == 1 { "" } else { "es" };
        (
            n,
            format!("{} cores, {n} tcpxr process{plural} on this host", host.cores),
        )
    };
    let (threads, why) = match setting {
        Some(n) => (n, format!("NCCL_TCPXR_IO_THREADS; {whose}")),
        None => (share(host.cores, processes), whose),
    };
    Movers {
        threads,
        cores: (host.cores / processes).max(1),
        why,
    }
}

/// Who moves TCPX's stripes: TCPX moves each comm on threads of its own, so the rules see the
/// cores this process may use as both its threads and its cores.
pub fn tcpx_movers(host: Host) -> Movers {
    Movers {
        threads: host.cores,
        cores: host.cores,
        why: format!(
            "TCPX's own threads, counted as the {} cores this process may use",
            host.cores
        ),
    }
}

/// The auto pool size for `cores` shared by `processes` tcpxr processes.
pub fn share(cores: usize, processes: usize) -> usize {
    if processes <= 1 {
        cores.clamp(1, MAX_AUTO_IO_THREADS)
    } else {
        (cores / processes)
            .saturating_sub(NCCL_CORES_PER_PROCESS)
            .clamp(1, MAX_AUTO_IO_THREADS)
    }
}

/// `value` of `var` capped to what the `transport` transport takes (`limit`, its
/// `Transport::limits`), saying so at INFO when it was.
pub fn capped(var: &str, value: usize, limit: usize, transport: &dyn fmt::Display) -> Value<usize> {
    if value > limit {
        log::info!(
            target: "tcpxr::init",
            "{var}={value} is more than the {transport} transport takes; using {limit}"
        );
        return Value {
            value: limit,
            source: Source::Capped(format!("{value} is more than the {transport} transport takes")),
        };
    }
    Value {
        value,
        source: env_or_default(var),
    }
}

/// The chunk size where the chunks of a receive stay held until NCCL consumes it (NCCL's device
/// unpack over tcpx: TCPX keeps the pages NCCL's kernel reads from, each chunk a slot of its
/// stripe's receive window). Every chunk one stripe carries of a receive must fit in that window
/// at once, or the receive waits for a chunk the window cannot take until the receive itself is
/// consumed, and never completes. A receive is at most `largest_receive` bytes, dealt round-robin
/// over at least `stripes` stripes, so chunks of at least largest_receive / (stripes x window)
/// keep every receive within the windows; a larger chunk stands (the defaults, 512 KiB x 4
/// stripes x 16 slots, hold 32 MiB).
pub fn chunk_for_held_receives(
    chunk: Value<usize>,
    stripes: usize,
    recv_window: usize,
    largest_receive: usize,
) -> Value<usize> {
    let slots = stripes.max(1) * recv_window.max(1);
    let needed = largest_receive.div_ceil(slots).next_multiple_of(4096);
    if chunk.value >= needed {
        return chunk;
    }
    let why = format!(
        "over tcpx a receive with NCCL's device unpack holds its chunks until it is consumed: a \
         {largest_receive}-byte receive over {stripes} stripe(s) of {recv_window} receive slots \
         needs chunks of at least {needed} bytes, not {}",
        chunk.value
    );
    // A WARN: only a chunk size, window or stripe count set well below the defaults comes here.
    log::warn!(target: "tcpxr::init", "NCCL_TCPXR_CHUNK_BYTES raised to {needed}: {why}");
    Value {
        value: needed,
        source: Source::Raised(why),
    }
}

/// The largest inline payload a receive comm accepts (announced in its listen handle), and why.
/// Inline payloads bound for GPU memory land in pinned slots of this size, one per request, so a
/// receiver that offers GPU buffers keeps them at the always-inline size. With NCCL's device unpack
/// over tcpx every payload goes through TCPX's pool, the one base NCCL's kernel reads from, so
/// nothing travels inline. Otherwise either kind of sender (point-to-point or not) may connect to
/// a listen: the larger idle limit.
pub fn inline_accept(
    config: &Config,
    gpu_buffers: bool,
    device_unpack_over_tcpx: bool,
    inline_idle: usize,
    inline_idle_p2p: usize,
) -> Value<usize> {
    let (value, why) = match (gpu_buffers, device_unpack_over_tcpx) {
        (_, true) => (
            0,
            "NCCL's device unpack over tcpx: every payload goes through TCPX's pool",
        ),
        (true, false) => (
            config.inline_bytes,
            "GPU buffers offered: inline payloads land in pinned slots of NCCL_TCPXR_INLINE_BYTES",
        ),
        (false, false) => (
            config.inline_bytes.max(inline_idle).max(inline_idle_p2p),
            "the largest of NCCL_TCPXR_INLINE_BYTES and both idle limits: either kind of sender may connect",
        ),
    };
    Value {
        value,
        source: Source::Auto(why.into()),
    }
}

/// The idle inline limits a connection's sender uses, resolved with the pool rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlineIdle {
    pub general: Value<usize>,
    pub p2p: Value<usize>,
}

/// NCCL_TCPXR_INLINE_IDLE_BYTES and NCCL_TCPXR_INLINE_IDLE_P2P_BYTES for `movers`.
pub fn inline_idle(config: &Config, movers: &Movers) -> InlineIdle {
    let general = INLINE_IDLE.resolve_bytes(config.inline_idle_bytes, movers);
    let p2p = inline_idle_p2p(config.inline_idle_p2p_bytes, general.value);
    InlineIdle { general, p2p }
}

/// A setting in effect for the connections NCCL's hints name point-to-point and for the others
/// (NCCL_TCPXR_IDLE_CHUNK_BYTES, NCCL_TCPXR_GPU_COPY_BYTES).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    pub general: Value<usize>,
    pub p2p: Value<usize>,
}

impl Split {
    /// The user's value, on every connection.
    fn set(value: usize) -> Split {
        let set = Value {
            value,
            source: Source::Env,
        };
        Split {
            general: set.clone(),
            p2p: set,
        }
    }
}

/// NCCL_TCPXR_GPU_COPY_BYTES: the user's value on every connection; else copies from 64 KiB on
/// point-to-point connections and none on the others. NCCL runs point-to-point transfers on 2
/// channels a peer, and its unpack kernel reading host memory places about 2.5 GB/s a channel:
/// GPU buffers' sendrecv of 8-512 MiB took 2.08-3.56x host buffers' time with records alone,
/// 0.96-1.35x with copies (run 237, 4x H200, 2 and 4 ranks, medians of two). A collective's 8
/// channels unpack about as fast as host buffers move (all_reduce 0.94-1.27x their time with
/// records), and copies made it slower (1.27-1.45x), so a collective's connections keep the
/// kernel.
pub fn gpu_copy(config: &Config) -> Split {
    if let Some(v) = config.gpu_copy_bytes {
        return Split::set(v);
    }
    Split {
        general: Value {
            value: 0,
            source: Source::Auto(
                "a collective's connection: its 8 channels' unpack kernels keep up with the wire (all_reduce slower \
                 with copies, run 237)"
                    .into(),
            ),
        },
        p2p: Value {
            value: 64 << 10,
            source: Source::Auto(
                "a point-to-point connection: 2 channels a peer, whose unpack kernels read host memory at about \
                 2.5 GB/s a channel (sendrecv 2-3x faster with copies, run 237)"
                    .into(),
            ),
        },
    }
}

/// NCCL_TCPXR_IDLE_CHUNK_BYTES for `movers`: the user's value on every connection; else the pool
/// rule's on point-to-point connections and 0 on the others (a collective's ring keeps several
/// channels' messages in flight at once, which the stripes already move in parallel: all_gather and
/// reduce_scatter of 2-4 MiB at 2 ranks took 5-15 % longer cut finer, run 191), and 0 everywhere over
/// tcpx (TCPX's 16 in-flight slots and its page pool were measured at the comm's chunk size only).
pub fn idle_chunk(config: &Config, movers: &Movers, over_tcpx: bool) -> Split {
    if let Some(v) = config.idle_chunk_bytes {
        return Split::set(v);
    }
    let off = |why: &str| Value {
        value: 0,
        source: Source::Auto(why.into()),
    };
    if over_tcpx {
        let why = "over tcpx: the comm's chunk size for every message";
        return Split {
            general: off(why),
            p2p: off(why),
        };
    }
    Split {
        general: off(
            "a collective's connection keeps the comm's chunks: its ring has several channels' messages in flight, \
             which the stripes already move in parallel (all_gather and reduce_scatter of 2-4 MiB 5-15 % slower cut \
             finer, two ranks)",
        ),
        p2p: IDLE_CHUNK.resolve_bytes(None, movers),
    }
}

/// NCCL_TCPXR_SPREAD_PIECE_BYTES: the smallest piece of a message spread over the stripes while few
/// connections of the process move data (engine/cut.rs).
pub const SPREAD: PoolRule = PoolRule {
    var: "NCCL_TCPXR_SPREAD_PIECE_BYTES",
    parallel: 64 << 10,
    why_parallel: "while the process's connections leave I/O threads idle, a message is spread over the idle ones \
                   (run 372, 4 ranks one per GPU: all_reduce of 1-8 MiB 3-10 % less time, 2 ranks: 1-4 MiB 4-13 %; \
                   64 KiB pieces beat 128 KiB)",
    few: 0,
    why_few: "the comm's chunks: without threads to move them in parallel more chunks only cost more system calls",
};

/// NCCL_TCPXR_SPREAD_PIECE_BYTES in effect: the user's value, [`SPREAD`]'s over the socket
/// transport, 0 over tcpx (TCPX's 16 in-flight slots and its page pool were measured at the
/// comm's chunk size only).
pub fn spread_piece(config: &Config, movers: &Movers, over_tcpx: bool) -> Value<usize> {
    match (config.spread_piece_bytes, over_tcpx) {
        (None, true) => Value {
            value: 0,
            source: Source::Auto("over tcpx: the comm's chunk size for every message".into()),
        },
        (setting, _) => SPREAD.resolve_bytes(setting, movers),
    }
}

/// NCCL_TCPXR_BOUNCE_DEMOTE as it acts: on (set or by default) does nothing where the CPU has no
/// `cldemote` (transport/socket/demote.rs), so the line says off and why.
pub fn bounce_demote(on: bool, cpu_has_it: bool) -> Line {
    let var = "NCCL_TCPXR_BOUNCE_DEMOTE";
    match (on, cpu_has_it) {
        (true, true) => Line::new(var, "on", env_or_default(var)),
        (true, false) => Line::new(var, "off", Source::Capped("this CPU has no cldemote".into())),
        (false, _) => Line::new(var, "off", env_or_default(var)),
    }
}

/// A pool rule's line in init's block, before the first connection decides it: the user's value,
/// or "auto" with when it will be decided.
pub fn deferred(var: &str, setting: Option<u64>) -> Line {
    match setting {
        Some(v) => Line::new(var, v, Source::Env),
        None => Line::new(
            var,
            "auto",
            Source::Auto("decided from the I/O pool when the first connection is made (logged then)".into()),
        ),
    }
}

/// One line of the effective-settings block.
#[derive(Clone, Debug)]
pub struct Line {
    pub name: String,
    pub value: String,
    pub source: Source,
}

impl Line {
    pub fn new(name: impl Into<String>, value: impl fmt::Display, source: Source) -> Line {
        Line {
            name: name.into(),
            value: value.to_string(),
            source,
        }
    }
}

/// The block init logs: a heading, then one `NAME = value (source)` line per setting.
pub fn block(heading: &str, lines: &[Line]) -> String {
    let mut text = format!("effective settings ({heading}; the rules: src/settings.rs):");
    for l in lines {
        text.push_str(&format!("\n  {} = {} ({})", l.name, l.value, l.source));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(cores: usize) -> Host {
        Host { cores, online: cores }
    }

    fn movers(threads: usize, cores: usize) -> Movers {
        Movers {
            threads,
            cores,
            why: "test".into(),
        }
    }

    #[test]
    fn bounce_demote_reads_off_with_the_reason_where_the_cpu_cannot_demote() {
        assert_eq!(bounce_demote(true, true).value, "on");
        assert_eq!(bounce_demote(false, true).value, "off");
        assert_eq!(bounce_demote(false, false).value, "off");
        let l = bounce_demote(true, false);
        assert_eq!(l.value, "off");
        assert_eq!(l.source, Source::Capped("this CPU has no cldemote".into()));
    }

    #[test]
    fn four_spinners_only_where_the_cores_hold_them_beside_the_io_threads_and_nccls() {
        // Four ranks on 64 cores: 10 I/O threads on 16 cores of each rank's own, 10 + 2 + 4.
        let four_ranks = pool_movers(None, on(64), || 4);
        assert_eq!((four_ranks.threads, four_ranks.cores), (10, 16));
        assert_eq!(io_spinners(None, &four_ranks).value, 4);
        // Two ranks on 16 cores (the one-GPU machine): 6 threads on 8 cores each.
        let one_gpu = pool_movers(None, on(16), || 2);
        assert_eq!((one_gpu.threads, one_gpu.cores), (6, 8));
        assert_eq!(io_spinners(None, &one_gpu).value, 1);
        // The boundary: threads + NCCL's 2 + 4 spinners.
        assert_eq!(io_spinners(None, &movers(8, 14)).value, 4);
        assert_eq!(io_spinners(None, &movers(8, 13)).value, 1);
        assert_eq!(io_spinners(None, &movers(1, 2)).value, 1);
        let set = io_spinners(Some(8), &movers(6, 8));
        assert_eq!((set.value, set.source), (8, Source::Env));
        assert!(
            matches!(io_spinners(None, &movers(8, 13)).source, Source::Auto(ref why) if why.contains("fewer than the 14 cores"))
        );
    }

    #[test]
    fn the_idle_chunk_is_the_pool_rules_on_p2p_connections_and_off_elsewhere_unless_set() {
        let c = Config::default();
        let roomy = idle_chunk(&c, &movers(8, 16), false);
        assert_eq!((roomy.p2p.value, roomy.general.value), (64 << 10, 0));
        assert_eq!(idle_chunk(&c, &movers(1, 2), false).p2p.value, 0);
        let tcpx = idle_chunk(&c, &movers(8, 16), true);
        assert_eq!((tcpx.p2p.value, tcpx.general.value), (0, 0));
        assert!(matches!(tcpx.p2p.source, Source::Auto(ref why) if why.contains("tcpx")));
        let set = Config {
            idle_chunk_bytes: Some(128 << 10),
            ..Config::default()
        };
        let set = idle_chunk(&set, &movers(1, 2), true);
        let env = Value {
            value: 128 << 10,
            source: Source::Env,
        };
        assert_eq!((set.p2p, set.general), (env.clone(), env));
    }

    #[test]
    fn gpu_copies_are_on_for_p2p_connections_and_off_elsewhere_unless_set() {
        let auto = gpu_copy(&Config::default());
        assert_eq!((auto.p2p.value, auto.general.value), (64 << 10, 0));
        assert!(matches!(auto.general.source, Source::Auto(ref why) if why.contains("collective")));
        for v in [0, 1 << 20] {
            let set = gpu_copy(&Config {
                gpu_copy_bytes: Some(v),
                ..Config::default()
            });
            let env = Value {
                value: v,
                source: Source::Env,
            };
            assert_eq!((set.p2p, set.general), (env.clone(), env));
        }
    }

    #[test]
    fn the_pool_rules_switch_at_two_threads_on_four_cores_of_its_own_and_keep_the_users_value() {
        let expect = [
            ("NCCL_TCPXR_HANDOFF_BYTES", 512 << 10, 0),
            ("NCCL_TCPXR_INLINE_IDLE_BYTES", 512 << 10, 32 << 10),
            ("NCCL_TCPXR_IDLE_CHUNK_BYTES", 0, 64 << 10),
            ("NCCL_TCPXR_SPREAD_PIECE_BYTES", 0, 64 << 10),
            ("NCCL_TCPXR_IO_SPIN_US", 0, 200),
        ];
        for (rule, (var, few, parallel)) in POOL_RULES.iter().zip(expect) {
            assert_eq!(rule.var, var);
            // One thread however many cores; two or more on fewer than 4 cores of its own.
            for (threads, cores) in [(1, 2), (1, 16), (2, 2), (2, 3), (8, 3)] {
                assert_eq!(
                    rule.resolve(None, &movers(threads, cores)).value,
                    few,
                    "{var}: {threads} threads on {cores} cores"
                );
            }
            for (threads, cores) in [(2, 4), (6, 8), (8, 16)] {
                assert_eq!(
                    rule.resolve(None, &movers(threads, cores)).value,
                    parallel,
                    "{var}: {threads} threads on {cores} cores"
                );
            }
            for (threads, cores) in [(1, 2), (8, 16)] {
                let m = movers(threads, cores);
                assert_eq!(
                    rule.resolve(Some(12345), &m),
                    Value {
                        value: 12345,
                        source: Source::Env
                    },
                    "{var} set"
                );
                assert!(matches!(rule.resolve(None, &m).source, Source::Auto(_)));
            }
        }
    }

    #[test]
    fn the_pool_the_ranks_of_a_host_build_decides_the_rules() {
        let host = on(16);
        // Measured on one 16-core host: 2 and 4 ranks move stripes in parallel, 8 do not (one
        // I/O thread each on 2 cores' share).
        for (ranks, threads, cores, parallel) in [(1, 10, 16, true), (2, 6, 8, true), (4, 2, 4, true), (8, 1, 2, false)]
        {
            let m = pool_movers(None, host, || ranks);
            assert_eq!(
                (m.threads, m.cores, m.parallel()),
                (threads, cores, parallel),
                "{ranks} ranks"
            );
        }
        // A process alone on 2 cores: 2 threads, but no cores beside NCCL's.
        assert!(!pool_movers(None, on(2), || 1).parallel());
        // The user's thread count with the host's share.
        let m = pool_movers(Some(3), host, || 4);
        assert_eq!((m.threads, m.cores, m.parallel()), (3, 4, true));
        assert!(
            m.why.starts_with("NCCL_TCPXR_IO_THREADS; 16 cores, 4 tcpxr processes"),
            "{}",
            m.why
        );
        // No pool: NCCL's thread moves every byte.
        assert!(!pool_movers(Some(0), host, || 1).parallel());
        // TCPX: the process's cores.
        assert!(tcpx_movers(on(208)).parallel());
        assert!(!tcpx_movers(on(2)).parallel());
    }

    #[test]
    fn the_p2p_idle_limit_is_at_least_128_kib_and_follows_a_larger_general_limit() {
        assert_eq!(inline_idle_p2p(None, 32 << 10).value, 128 << 10);
        assert_eq!(inline_idle_p2p(None, 512 << 10).value, 512 << 10);
        assert_eq!(inline_idle_p2p(Some(4096), 512 << 10).value, 4096);
        assert_eq!(inline_idle_p2p(Some(4096), 512 << 10).source, Source::Env);
    }

    #[test]
    fn the_inline_limits_follow_the_movers_unless_set() {
        let auto = Config::default();
        for (threads, cores, idle, p2p) in [(1, 2, 512 << 10, 512 << 10), (2, 4, 32 << 10, 128 << 10)] {
            let i = inline_idle(&auto, &movers(threads, cores));
            assert_eq!(
                (i.general.value, i.p2p.value),
                (idle, p2p),
                "{threads} threads on {cores} cores"
            );
        }
        let set = Config {
            inline_idle_bytes: Some(8192),
            inline_idle_p2p_bytes: Some(1024),
            ..Config::default()
        };
        for (threads, cores) in [(1, 2), (8, 16)] {
            let i = inline_idle(&set, &movers(threads, cores));
            assert_eq!((i.general.value, i.p2p.value), (8192, 1024));
            assert_eq!((i.general.source, i.p2p.source), (Source::Env, Source::Env));
        }
        assert_eq!(deferred("NCCL_TCPXR_IO_SPIN_US", Some(7)).value, "7");
        assert_eq!(deferred("NCCL_TCPXR_IO_SPIN_US", None).value, "auto");
    }

    #[test]
    fn init_caps_the_users_thread_count_at_the_cores() {
        for cores in [2, 8, 16] {
            let v = io_threads(Some(3), on(cores));
            assert_eq!(v.value, Some(3.min(cores)), "{cores} cores");
            assert_eq!(v.source == Source::Env, cores >= 3);
        }
        assert_eq!(io_threads(None, on(16)).value, None);
    }

    #[test]
    fn a_process_alone_takes_up_to_ten_threads() {
        assert_eq!(share(2, 1), 2);
        assert_eq!(share(8, 1), 8);
        assert_eq!(share(16, 1), 10);
        assert_eq!(share(208, 1), 10);
        assert_eq!(share(1, 0), 1);
    }

    #[test]
    fn processes_sharing_the_cores_split_them_and_leave_two_each_for_nccl() {
        // Two ranks on one 16-core host: the measured best.
        assert_eq!(share(16, 2), 6);
        // Eight ranks on 16 cores: one thread each, which the pool rules see.
        assert_eq!(share(16, 8), 1);
        // Two ranks on 32 cores and four on 64: 16 each, 14 less NCCL's, the cap (runs 181, 211).
        assert_eq!(share(32, 2), 10);
        assert_eq!(share(64, 4), 10);
        // Eight ranks on an A3 (208 vCPUs): 26 each, still the cap.
        assert_eq!(share(208, 8), 10);
        // More processes than cores: one thread each, never none.
        assert_eq!(share(2, 2), 1);
        assert_eq!(share(4, 16), 1);
    }

    #[test]
    fn a_held_process_takes_its_cores_without_counting_the_others() {
        let held = Host { cores: 8, online: 16 };
        let m = pool_movers(None, held, || panic!("not asked when held"));
        assert_eq!(
            (m.threads, m.cores, m.why.as_str()),
            (8, 8, "8 cores this process may use")
        );
        let m = pool_movers(None, on(16), || 2);
        assert_eq!(
            (m.threads, m.why.as_str()),
            (6, "16 cores, 2 tcpxr processes on this host")
        );
        assert_eq!(
            pool_movers(None, on(2), || 1).why,
            "2 cores, 1 tcpxr process on this host"
        );
    }

    #[test]
    fn capped_values_say_so_and_others_keep_their_source() {
        let c = capped("NCCL_TCPXR_TEST_UNSET_VARIABLE", 16 << 20, 4 << 20, &"tcpx");
        assert_eq!(c.value, 4 << 20);
        assert!(matches!(c.source, Source::Capped(_)));
        let c = capped("NCCL_TCPXR_TEST_UNSET_VARIABLE", 512 << 10, 4 << 20, &"tcpx");
        assert_eq!(
            c,
            Value {
                value: 512 << 10,
                source: Source::Default
            }
        );
    }

    #[test]
    fn held_receives_raise_a_chunk_too_small_for_the_windows_and_leave_others() {
        let default = |value| Value {
            value,
            source: Source::Default,
        };
        let four_mib = 4 << 20;
        // The defaults hold 32 MiB; 8 KiB chunks over 1 stripe of 16 slots hold 128 KiB.
        assert_eq!(
            chunk_for_held_receives(default(512 << 10), 4, 16, four_mib),
            default(512 << 10)
        );
        let raised = chunk_for_held_receives(default(8 << 10), 1, 16, four_mib);
        assert_eq!(raised.value, 256 << 10);
        assert!(matches!(&raised.source, Source::Raised(why) if why.contains("needs chunks of at least 262144")));
        // Rounded up to a page: 4 MiB over 3 x 5 slots is 279621.3 bytes a chunk.
        assert_eq!(chunk_for_held_receives(default(4096), 3, 5, four_mib).value, 69 * 4096);
        assert_eq!(chunk_for_held_receives(default(4096), 1, 1, four_mib).value, four_mib);
    }

    #[test]
    fn receivers_accept_inline_what_any_sender_may_send() {
        let c = Config::default();
        assert_eq!(inline_accept(&c, false, true, 32 << 10, 128 << 10).value, 0);
        assert_eq!(inline_accept(&c, true, true, 32 << 10, 128 << 10).value, 0);
        assert_eq!(
            inline_accept(&c, true, false, 32 << 10, 128 << 10).value,
            c.inline_bytes
        );
        assert_eq!(
            inline_accept(&c, false, false, 32 << 10, 128 << 10).value,
            c.inline_bytes.max(128 << 10)
        );
    }

    #[test]
    fn the_block_names_each_value_and_its_source() {
        let text = block(
            "resolved at init",
            &[
                Line::new("NCCL_TCPXR_IO_SPIN_US", 0, Source::Auto("why".into())),
                Line::new("NCCL_TCPXR_CHUNK_BYTES", 524288, Source::Default),
            ],
        );
        assert!(text.starts_with("effective settings (resolved at init;"));
        assert!(text.contains("\n  NCCL_TCPXR_IO_SPIN_US = 0 (auto: why)"));
        assert!(text.contains("\n  NCCL_TCPXR_CHUNK_BYTES = 524288 (default)"));
    }
}
