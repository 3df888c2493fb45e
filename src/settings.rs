//! Every "auto" rule of tcpxr's own settings in one place: the host facts the rules read (once per
//! process, [`host`]), the rules as data with their reasons ([`CORE_RULES`] and the functions
//! beside it), and the value each setting takes with where it came from (set by environment,
//! default, auto: reason, or capped: reason), which plugin's init logs as one "effective settings"
//! block (target `tcpxr::init`).
//!
//! The evidence behind each auto value is in docs/BENCHMARKS.md#defaults.
//!
//! **Known flaw (issue 34), kept on purpose:** three rules (NCCL_TCPXR_HANDOFF_BYTES,
//! NCCL_TCPXR_INLINE_IDLE_BYTES and NCCL_TCPXR_IO_SPIN_US, [`CORE_RULES`]) decide from whether
//! the process may use at least [`PARALLEL_POOL_CORES`] cores, not from the I/O pool actually
//! built. With 8 ranks on 16 cores each rank may use 16 cores, so its pool counts as parallel,
//! yet the pool's auto size ([`io_threads_auto`]) gives it 1 I/O thread: every chunk is handed to
//! that one thread. Deciding from the pool built is the likely fix, but changing a default waits
//! for a measurement (issue 31); until then these rules decide exactly as they always have.
//!
//! Not here, though listed in the block: the inner transport's choice (plugin's
//! `open_transport`: deciding means loading TCPX) and the NCCL variables tcpxr gives values
//! (nccl_settings.rs: NCCL's settings, not tcpxr's).
//!
//! This module uses only config and error, so that every layer may ask it: the socket transport
//! sizes its auto pool with [`io_threads_auto`] when the pool starts.
use crate::config::{self, Config};
use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

/// The cores from which the I/O pool counts as copying stripes in parallel (see the module's
/// known flaw).
pub const PARALLEL_POOL_CORES: usize = 8;

/// I/O threads of an auto-sized pool at most (measured best for bulk on 32 cores).
pub const MAX_AUTO_IO_THREADS: usize = 8;

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
    /// Whether the I/O pool counts as copying stripes in parallel.
    pub fn parallel_pool(&self) -> bool {
        self.cores >= PARALLEL_POOL_CORES
    }

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
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Env => f.write_str("set by environment"),
            Source::Default => f.write_str("default"),
            Source::Auto(why) => write!(f, "auto: {why}"),
            Source::Capped(why) => write!(f, "capped: {why}"),
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
fn env_or_default(var: &str) -> Source {
    if config::env_value(var).is_some() {
        Source::Env
    } else {
        Source::Default
    }
}

/// A rule that decides an auto setting from whether the I/O pool copies in parallel
/// ([`Host::parallel_pool`]).
#[derive(Clone, Copy, Debug)]
pub struct CoreRule {
    /// The variable it resolves.
    pub var: &'static str,
    /// Its value with a parallel pool, and why.
    pub parallel: u64,
    pub why_parallel: &'static str,
    /// Its value below, and why.
    pub few: u64,
    pub why_few: &'static str,
}

impl CoreRule {
    /// The user's value, or this rule's for `host`.
    pub fn resolve(&self, setting: Option<u64>, host: Host) -> Value<u64> {
        match (setting, host.parallel_pool()) {
            (Some(v), _) => Value {
                value: v,
                source: Source::Env,
            },
            (None, true) => Value {
                value: self.parallel,
                source: Source::Auto(format!(
                    "{} cores usable, at least {PARALLEL_POOL_CORES}: {}",
                    host.cores, self.why_parallel
                )),
            },
            (None, false) => Value {
                value: self.few,
                source: Source::Auto(format!(
                    "{} cores usable, fewer than {PARALLEL_POOL_CORES}: {}",
                    host.cores, self.why_few
                )),
            },
        }
    }
}

/// NCCL_TCPXR_HANDOFF_BYTES: the backlog from which a stripe goes to the I/O pool.
pub const HANDOFF: CoreRule = CoreRule {
    var: "NCCL_TCPXR_HANDOFF_BYTES",
    parallel: 0,
    why_parallel: "every backlog to the pool, which copies stripes in parallel (measured at 4 connections on 32 \
                   cores: 512 KiB messages at 24.8 GB/s against 5.1 with NCCL's thread copying up to 512 KiB alone)",
    few: 512 << 10,
    why_few: "NCCL's thread copies up to 512 KiB itself, as few cores gain little from a hand-off (measured on 2 \
              cores: 3.5 GB/s against 2.0 handing every backlog off)",
};

/// NCCL_TCPXR_INLINE_IDLE_BYTES: the largest message sent inline on the control connection while
/// its comm has nothing else in flight.
pub const INLINE_IDLE: CoreRule = CoreRule {
    var: "NCCL_TCPXR_INLINE_IDLE_BYTES",
    parallel: 32 << 10,
    why_parallel: "an inline message is copied by NCCL's proxy thread alone on one socket while the pool could \
                   stripe it (measured on 32 cores: all_reduce of 2-8 MiB at 2.5-3.0 GB/s with 512 KiB against \
                   4.0-11.7 with 64 KiB; 32 KiB made all_gather and reduce_scatter of 256 KiB-1 MiB faster still)",
    few: 512 << 10,
    why_few: "up to one default chunk inline, as before the pool copied in parallel: the lower limits were \
              measured on a parallel pool only",
};

/// NCCL_TCPXR_IO_SPIN_US: how long an idle I/O thread looks for work before it sleeps.
pub const IO_SPIN: CoreRule = CoreRule {
    var: "NCCL_TCPXR_IO_SPIN_US",
    parallel: 200,
    why_parallel: "a hand-off while traffic flows skips a wake-up (measured up to 1.10x faster in the all_reduce \
                   band with one spinner)",
    few: 0,
    why_few: "a spinning thread would take one of few cores from NCCL's",
};

/// The rules that decide from [`Host::parallel_pool`] (the module's known flaw).
pub const CORE_RULES: [CoreRule; 3] = [HANDOFF, INLINE_IDLE, IO_SPIN];

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
/// target `tcpxr::init`), or None for auto, which the pool sizes when it starts
/// ([`io_threads_auto`]), once the other ranks on the host have announced themselves.
pub fn io_threads(setting: Option<usize>, host: Host) -> Value<Option<usize>> {
    let Some(wanted) = setting else {
        return Value {
            value: None,
            source: Source::Auto(format!(
                "sized when the pool starts: this process's share of its {} cores among the tcpxr processes on \
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

/// The I/O threads of an auto-sized pool, and why (for the log). A process alone on its cores
/// takes up to 8; processes sharing the host's cores split them, each leaving 2 for NCCL's own
/// threads (measured: two ranks on 16 cores with 6 threads each ran all_reduce of 256 MiB - 1 GiB
/// 1.05-1.3x faster than with 8, 5 and 7 in between or slower). `processes` counts the tcpxr
/// processes on the host, this one included; it is not asked when the process is held to part of
/// the host ([`Host::held`]).
pub fn io_threads_auto(host: Host, processes: impl FnOnce() -> usize) -> (usize, String) {
    if host.held() {
        let cores = host.cores;
        return (share(cores, 1), format!("auto: {cores} cores this process may use"));
    }
    let processes = processes();
    let plural = if processes == 1 { "" } else { "es" };
    (
        share(host.cores, processes),
        format!(
            "auto: {} cores, {processes} tcpxr process{plural} on this host",
            host.cores
        ),
    )
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

/// The settings init resolves before it opens the transport (the socket transport's options are
/// made from them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Early {
    pub io_threads: Value<Option<usize>>,
    pub io_spin: Value<Duration>,
    pub handoff_bytes: Value<usize>,
    pub inline_idle_bytes: Value<usize>,
    pub inline_idle_p2p_bytes: Value<usize>,
}

/// Resolves the settings that need no transport, from `config` and `host`.
pub fn early(config: &Config, host: Host) -> Early {
    let bytes = |v: Value<u64>| Value {
        value: v.value as usize,
        source: v.source,
    };
    let inline_idle_bytes = bytes(INLINE_IDLE.resolve(config.inline_idle_bytes.map(|v| v as u64), host));
    let inline_idle_p2p_bytes = inline_idle_p2p(config.inline_idle_p2p_bytes, inline_idle_bytes.value);
    let spin = IO_SPIN.resolve(config.io_spin_us, host);
    Early {
        io_threads: io_threads(config.io_threads, host),
        io_spin: Value {
            value: Duration::from_micros(spin.value),
            source: spin.source,
        },
        handoff_bytes: bytes(HANDOFF.resolve(config.handoff_bytes.map(|v| v as u64), host)),
        inline_idle_bytes,
        inline_idle_p2p_bytes,
    }
}

/// One line of the effective-settings block.
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
pub fn block(lines: &[Line]) -> String {
    let mut text = String::from("effective settings (resolved at init; the rules: src/settings.rs):");
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

    #[test]
    fn the_core_rules_switch_at_eight_usable_cores_and_keep_the_users_value() {
        let expect = [
            ("NCCL_TCPXR_HANDOFF_BYTES", 512 << 10, 0),
            ("NCCL_TCPXR_INLINE_IDLE_BYTES", 512 << 10, 32 << 10),
            ("NCCL_TCPXR_IO_SPIN_US", 0, 200),
        ];
        for (rule, (var, few, parallel)) in CORE_RULES.iter().zip(expect) {
            assert_eq!(rule.var, var);
            assert_eq!(rule.resolve(None, on(2)).value, few, "{var} on 2 cores");
            assert_eq!(rule.resolve(None, on(7)).value, few, "{var} on 7 cores");
            assert_eq!(rule.resolve(None, on(8)).value, parallel, "{var} on 8 cores");
            assert_eq!(rule.resolve(None, on(16)).value, parallel, "{var} on 16 cores");
            for cores in [2, 8, 16] {
                let user = rule.resolve(Some(12345), on(cores));
                assert_eq!(
                    user,
                    Value {
                        value: 12345,
                        source: Source::Env
                    },
                    "{var} set, {cores} cores"
                );
                assert!(matches!(rule.resolve(None, on(cores)).source, Source::Auto(_)));
            }
        }
    }

    #[test]
    fn the_p2p_idle_limit_is_at_least_128_kib_and_follows_a_larger_general_limit() {
        assert_eq!(inline_idle_p2p(None, 32 << 10).value, 128 << 10);
        assert_eq!(inline_idle_p2p(None, 512 << 10).value, 512 << 10);
        assert_eq!(inline_idle_p2p(Some(4096), 512 << 10).value, 4096);
        assert_eq!(inline_idle_p2p(Some(4096), 512 << 10).source, Source::Env);
    }

    #[test]
    fn early_resolves_every_auto_setting_from_the_cores() {
        let auto = Config::default();
        for (cores, handoff, idle, p2p, spin) in [
            (2, 512 << 10, 512 << 10, 512 << 10, 0),
            (8, 0, 32 << 10, 128 << 10, 200),
            (16, 0, 32 << 10, 128 << 10, 200),
        ] {
            let e = early(&auto, on(cores));
            assert_eq!(e.handoff_bytes.value, handoff, "{cores} cores");
            assert_eq!(e.inline_idle_bytes.value, idle, "{cores} cores");
            assert_eq!(e.inline_idle_p2p_bytes.value, p2p, "{cores} cores");
            assert_eq!(e.io_spin.value, Duration::from_micros(spin), "{cores} cores");
            assert_eq!(e.io_threads.value, None, "{cores} cores: sized when the pool starts");
        }
        let set = Config {
            handoff_bytes: Some(4096),
            inline_idle_bytes: Some(8192),
            inline_idle_p2p_bytes: Some(1024),
            io_spin_us: Some(7),
            io_threads: Some(3),
            ..Config::default()
        };
        for cores in [2, 8, 16] {
            let e = early(&set, on(cores));
            assert_eq!(
                (
                    e.handoff_bytes.value,
                    e.inline_idle_bytes.value,
                    e.inline_idle_p2p_bytes.value
                ),
                (4096, 8192, 1024)
            );
            assert_eq!(e.io_spin.value, Duration::from_micros(7));
            // The user's thread count, capped at the cores.
            assert_eq!(e.io_threads.value, Some(3.min(cores)), "{cores} cores");
            assert_eq!(e.io_threads.source == Source::Env, cores >= 3);
        }
    }

    #[test]
    fn a_process_alone_takes_up_to_eight_threads() {
        assert_eq!(share(2, 1), 2);
        assert_eq!(share(8, 1), 8);
        assert_eq!(share(16, 1), 8);
        assert_eq!(share(208, 1), 8);
        assert_eq!(share(1, 0), 1);
    }

    #[test]
    fn processes_sharing_the_cores_split_them_and_leave_two_each_for_nccl() {
        // Two ranks on one 16-core host: the measured best.
        assert_eq!(share(16, 2), 6);
        // Eight ranks on 16 cores: one thread each (the module's known flaw: their pools still
        // count as parallel).
        assert_eq!(share(16, 8), 1);
        // Eight ranks on an A3 (208 vCPUs): 26 each, still the cap.
        assert_eq!(share(208, 8), 8);
        // More processes than cores: one thread each, never none.
        assert_eq!(share(2, 2), 1);
        assert_eq!(share(4, 16), 1);
    }

    #[test]
    fn a_held_process_takes_its_cores_without_counting_the_others() {
        let held = Host { cores: 8, online: 16 };
        let (n, why) = io_threads_auto(held, || panic!("not asked when held"));
        assert_eq!((n, why.as_str()), (8, "auto: 8 cores this process may use"));
        let (n, why) = io_threads_auto(on(16), || 2);
        assert_eq!((n, why.as_str()), (6, "auto: 16 cores, 2 tcpxr processes on this host"));
        assert_eq!(
            io_threads_auto(on(2), || 1).1,
            "auto: 2 cores, 1 tcpxr process on this host"
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
        let text = block(&[
            Line::new("NCCL_TCPXR_IO_SPIN_US", 0, Source::Auto("why".into())),
            Line::new("NCCL_TCPXR_CHUNK_BYTES", 524288, Source::Default),
        ]);
        assert!(text.starts_with("effective settings"));
        assert!(text.contains("\n  NCCL_TCPXR_IO_SPIN_US = 0 (auto: why)"));
        assert!(text.contains("\n  NCCL_TCPXR_CHUNK_BYTES = 524288 (default)"));
    }
}
