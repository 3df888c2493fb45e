//! Every `NCCL_TCPXR_*` setting in one typed table: read once, validated, logged.
//!
//! [`PARAMS`] is the single source of truth for names, defaults and accepted ranges: the parser
//! falls back to a row's `default` when the variable is unset, checks a number against the row's
//! `range` (a test holds it to the row's words), every error message quotes the row's `accepted`
//! text, [`global`] logs one line per row, and [`markdown_table`] renders it into the
//! tables of README.md and docs/CONFIG.md (the tests below fail when either document differs).
//!
//! Conventions for values: surrounding whitespace is ignored and an empty value means unset.
//! Integers are plain decimal; byte sizes also take a binary `K`, `M` or `G` suffix (`512K`).
use crate::abi::ncclResult_t;
use crate::error::{Error, Result};
use std::fmt;
use std::sync::OnceLock;
mod docs;
mod params;
pub use docs::{generated_block, markdown_table, DocLength, TABLE_BEGIN, TABLE_END};
use params::*;
pub use params::{param, Param, MAX_INLINE_BYTES, PARAMS, PLAUSIBLE_SOCKET_BUFFER};

/// Which inner transport to drive (`NCCL_TCPXR_TRANSPORT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Transport {
    /// tcpx if the TCPX library loads and finds devices, else socket.
    #[default]
    Auto,
    Tcpx,
    Socket,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Auto => "auto",
            Transport::Tcpx => "tcpx",
            Transport::Socket => "socket",
        }
    }

    fn parse(s: &str) -> Option<Transport> {
        [Transport::Auto, Transport::Tcpx, Transport::Socket]
            .into_iter()
            .find(|t| s.eq_ignore_ascii_case(t.as_str()))
    }
}

/// An on/off setting whose `auto` means "on over one inner transport" (`NCCL_TCPXR_GPU_BUFFERS`:
/// tcpx; `NCCL_TCPXR_TUNER`: socket).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Switch {
    #[default]
    Auto,
    Off,
    On,
}

impl Switch {
    pub fn as_str(self) -> &'static str {
        match self {
            Switch::Auto => "auto",
            Switch::Off => "0",
            Switch::On => "1",
        }
    }

    fn parse(s: &str) -> Option<Switch> {
        [Switch::Auto, Switch::Off, Switch::On]
            .into_iter()
            .find(|g| s.eq_ignore_ascii_case(g.as_str()))
    }

    /// Whether the setting is on over the inner transport `transport` (a
    /// [`crate::transport::TransportKind`]), `auto` being on over `auto_on` only. Generic so that
    /// the settings table depends on no layer above it.
    pub fn on_for<T: PartialEq>(self, transport: T, auto_on: T) -> bool {
        match self {
            Switch::Auto => transport == auto_on,
            Switch::Off => false,
            Switch::On => true,
        }
    }
}

impl fmt::Display for Switch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The effective settings. See [`PARAMS`] for what each one means and accepts.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub stripes: usize,
    pub chunk_bytes: usize,
    pub ifname: Option<String>,
    pub send_window: usize,
    pub recv_window: usize,
    pub inline_bytes: usize,
    /// NCCL_TCPXR_INLINE_IDLE_BYTES; None: auto (see the row's doc).
    pub inline_idle_bytes: Option<usize>,
    /// NCCL_TCPXR_INLINE_IDLE_P2P_BYTES; None: auto (see the row's doc).
    pub inline_idle_p2p_bytes: Option<usize>,
    /// NCCL_TCPXR_IDLE_CHUNK_BYTES; None: auto (see the row's doc); 0: off.
    pub idle_chunk_bytes: Option<usize>,
    /// NCCL_TCPXR_SPREAD_PIECE_BYTES; None: auto (see the row's doc); 0: off.
    pub spread_piece_bytes: Option<usize>,
    /// 0 = kernel autotuning.
    pub sndbuf: usize,
    /// 0 = kernel autotuning.
    pub rcvbuf: usize,
    /// A receiving socket stripe's window (transport/socket/grant.rs); 0 = none.
    pub unread_bytes: u64,
    /// The most that window grows to; 0 = it keeps its size.
    pub unread_max_bytes: u64,
    /// Socket transport I/O threads; None = auto (the process's share of the host's cores, at most 10:
    /// transport/socket/host.rs).
    pub io_threads: Option<usize>,
    /// NCCL_TCPXR_HANDOFF_BYTES; None: auto (see the row's doc).
    pub handoff_bytes: Option<usize>,
    /// NCCL_TCPXR_IO_SPIN_US; None: auto (see the row's doc).
    pub io_spin_us: Option<u64>,
    /// NCCL_TCPXR_IO_SPIN_THREADS; None: auto ([`crate::settings::io_spinners`]).
    pub io_spin_threads: Option<usize>,
    /// 0 = read `/sys/class/net/<if>/speed`.
    pub speed_mbps: u32,
    pub handshake_timeout_ms: u64,
    pub peer_timeout_ms: u64,
    pub transport: Transport,
    pub tcpx_lib: Option<String>,
    pub stats: bool,
    /// Offer NCCL the RMA table's devices (src/rma).
    pub rma: bool,
    /// Seconds without progress before a stall report; 0: off.
    pub stall_seconds: u64,
    /// Offer NCCL_PTR_CUDA (when a CUDA driver is present); auto: over tcpx.
    pub gpu_buffers: Switch,
    /// NCCL_TCPXR_GPU_COPY_BYTES: receives into GPU memory of at least this many bytes placed by
    /// the copy engine under device unpack over socket (engine/copy_in.rs); 0: none; None: auto
    /// ([`crate::settings::gpu_copy`]).
    pub gpu_copy_bytes: Option<usize>,
    /// NCCL_TCPXR_BOUNCE_DEMOTE: receives into bounce memory that the copy engine places leave
    /// the reading core's caches as they land (transport/socket/demote.rs).
    pub bounce_demote: bool,
    /// The tuner exported beside the net tables acts (tuner.rs); auto: over socket.
    pub tuner: Switch,
    /// Devices the IPv4 loopback interface stands for (socket transport).
    pub loopback_devices: usize,
    /// Rail and plane of each physical device, in device order; empty: undefined.
    pub rails: Vec<Rail>,
}

/// One device's place in the cluster's network (NCCL_TCPXR_RAILS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rail {
    pub rail: i16,
    pub plane: Option<i16>,
}

impl fmt::Display for Rail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.plane {
            Some(plane) => write!(f, "{}:{plane}", self.rail),
            None => write!(f, "{}", self.rail),
        }
    }
}

/// NCCL_TCPXR_RAILS: `rail[:plane]`, comma-separated, each 0-32767.
fn parse_rails(spec: &str) -> Option<Vec<Rail>> {
    let id = |s: &str| {
        s.trim()
            .parse::<u16>()
            .ok()
            .filter(|&n| n <= i16::MAX as u16)
            .map(|n| n as i16)
    };
    spec.split(',')
        .map(|entry| match entry.split_once(':') {
            Some((rail, plane)) => Some(Rail {
                rail: id(rail)?,
                plane: Some(id(plane)?),
            }),
            None => Some(Rail {
                rail: id(entry)?,
                plane: None,
            }),
        })
        .collect()
}

/// Reads values through a lookup function; unset or empty falls back to the row's default.
struct Reader<G> {
    get: G,
}

impl<G: Fn(&str) -> Option<String>> Reader<G> {
    /// The trimmed value, or the default when unset or empty; `None` when both are empty.
    fn value(&self, p: &Param) -> Option<String> {
        let set = (self.get)(p.name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty());
        set.or_else(|| Some(p.default.to_owned()).filter(|d| !d.is_empty()))
    }

    /// The value as a number in the row's range.
    fn uint(&self, p: &Param) -> Result<u64> {
        let r = p
            .range
            .ok_or_else(|| Error::internal(format!("{}: read as a number, but its row has no range", p.name)))?;
        let v = self.value(p).unwrap_or_default();
        let n = parse_uint(&v, r.bytes).ok_or_else(|| invalid(p, &v))?;
        let in_range = (r.zero && n == 0) || (r.lo..=r.hi).contains(&n);
        if in_range && n % r.multiple == 0 {
            Ok(n)
        } else {
            Err(invalid(p, &v))
        }
    }

    fn usize(&self, p: &Param) -> Result<usize> {
        let n = self.uint(p)?;
        usize::try_from(n).map_err(|_| invalid(p, &n.to_string()))
    }

    /// Whether the value is "auto" (any case).
    fn is_auto(&self, p: &Param) -> bool {
        self.value(p).is_some_and(|v| v.eq_ignore_ascii_case("auto"))
    }

    /// None for "auto", else the value in `r`.
    fn auto_uint(&self, p: &Param) -> Result<Option<u64>> {
        if self.is_auto(p) {
            return Ok(None);
        }
        self.uint(p).map(Some)
    }

    fn auto_usize(&self, p: &Param) -> Result<Option<usize>> {
        if self.is_auto(p) {
            return Ok(None);
        }
        self.usize(p).map(Some)
    }
}

/// A setting whose value may be "auto" (None), as the table and the log write it.
fn or_auto<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "auto".to_string(), T::to_string)
}

fn invalid(p: &Param, value: &str) -> Error {
    Error::new(
        ncclResult_t::ncclInvalidArgument,
        format!("{}={} is invalid: accepted {}", p.name, value, p.accepted),
    )
}

/// Decimal digits, optionally (for byte sizes) followed by K, M or G (binary, any case).
fn parse_uint(s: &str, bytes: bool) -> Option<u64> {
    let (digits, shift) = match s.as_bytes().last() {
        Some(b'k' | b'K') if bytes => (&s[..s.len() - 1], 10),
        Some(b'm' | b'M') if bytes => (&s[..s.len() - 1], 20),
        Some(b'g' | b'G') if bytes => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    let digits = digits.trim_end();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(1u64 << shift)
}

/// NCCL_SOCKET_IFNAME syntax: optional `^` (exclude), optional `=` (exact), then a comma-separated
/// list with at least one non-empty name or prefix.
fn valid_ifname(spec: &str) -> bool {
    let rest = spec.strip_prefix('^').unwrap_or(spec);
    let rest = rest.strip_prefix('=').unwrap_or(rest);
    rest.split(',').any(|name| !name.trim().is_empty())
}

impl Config {
    /// Parses every setting through `get` (a variable name to its value, `None` when unset).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Config> {
        let r = Reader { get };
        let ifname = r.value(&IFNAME);
        if let Some(spec) = &ifname {
            if !valid_ifname(spec) {
                return Err(invalid(&IFNAME, spec));
            }
        }
        let transport = r.value(&TRANSPORT).unwrap_or_default();
        let transport = Transport::parse(&transport).ok_or_else(|| invalid(&TRANSPORT, &transport))?;
        let switch = |p: &Param| {
            let v = r.value(p).unwrap_or_else(|| "auto".into());
            Switch::parse(&v).ok_or_else(|| invalid(p, &v))
        };
        let gpu_buffers = switch(&GPU_BUFFERS)?;
        let tuner = switch(&TUNER)?;
        let io_threads = r.auto_usize(&IO_THREADS)?;
        let unread_bytes = r.uint(&UNREAD_BYTES)?;
        let unread_max_bytes = r.uint(&UNREAD_MAX_BYTES)?;
        if unread_max_bytes != 0 && (unread_bytes == 0 || unread_max_bytes < unread_bytes) {
            return Err(invalid(
                &UNREAD_MAX_BYTES,
                &r.value(&UNREAD_MAX_BYTES).unwrap_or_default(),
            ));
        }
        let speed = r.uint(&SPEED_MBPS)?;
        Ok(Config {
            stripes: r.usize(&STRIPES)?,
            chunk_bytes: r.usize(&CHUNK_BYTES)?,
            ifname,
            send_window: r.usize(&SEND_WINDOW)?,
            recv_window: r.usize(&RECV_WINDOW)?,
            inline_bytes: r.usize(&INLINE_BYTES)?,
            inline_idle_bytes: r.auto_usize(&INLINE_IDLE_BYTES)?,
            inline_idle_p2p_bytes: r.auto_usize(&INLINE_IDLE_P2P_BYTES)?,
            idle_chunk_bytes: r.auto_usize(&IDLE_CHUNK_BYTES)?,
            spread_piece_bytes: r.auto_usize(&SPREAD_PIECE_BYTES)?,
            sndbuf: r.usize(&SOCKET_SNDBUF)?,
            rcvbuf: r.usize(&SOCKET_RCVBUF)?,
            unread_bytes,
            unread_max_bytes,
            io_threads,
            handoff_bytes: r.auto_usize(&HANDOFF_BYTES)?,
            io_spin_us: r.auto_uint(&IO_SPIN_US)?,
            io_spin_threads: r.auto_usize(&IO_SPIN_THREADS)?,
            // The range check above keeps it far below u32::MAX.
            speed_mbps: speed as u32,
            handshake_timeout_ms: r.uint(&HANDSHAKE_TIMEOUT_MS)?,
            peer_timeout_ms: r.uint(&PEER_TIMEOUT_MS)?,
            transport,
            tcpx_lib: r.value(&TCPX_LIB),
            stats: r.uint(&STATS)? == 1,
            rma: r.uint(&RMA)? == 1,
            stall_seconds: r.uint(&STALL_SECONDS)?,
            gpu_buffers,
            gpu_copy_bytes: r.auto_usize(&GPU_COPY_BYTES)?,
            bounce_demote: r.uint(&BOUNCE_DEMOTE)? == 1,
            tuner,
            loopback_devices: r.usize(&LOOPBACK_DEVICES)?,
            rails: match r.value(&RAILS) {
                None => Vec::new(),
                Some(v) => parse_rails(&v).ok_or_else(|| invalid(&RAILS, &v))?,
            },
        })
    }

    /// Settings that are valid but almost certainly not what the user wants, each with the
    /// variable, the value and why; logged as WARNs when the configuration is read.
    ///
    /// Socket buffers below [`PLAUSIBLE_SOCKET_BUFFER`]: Linux doubles an SO_SNDBUF/SO_RCVBUF value
    /// (the other half is its bookkeeping) and, once it is set, stops autotuning that socket, so
    /// the buffer alone bounds the bytes a stripe has in flight to about that much per round
    /// trip; 4096 measured 0.01 GB/s. Autotuning (0) grows buffers to megabytes.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (p, v) in [(&SOCKET_SNDBUF, self.sndbuf), (&SOCKET_RCVBUF, self.rcvbuf)] {
            if v != 0 && v < PLAUSIBLE_SOCKET_BUFFER {
                out.push(format!(
                    "{}={v} is implausibly small: Linux doubles it to {} bytes and stops autotuning the \
                     socket, so each stripe keeps at most about that much in flight per round trip, far \
                     below line rate (4096 measured 0.01 GB/s); honoured as asked. Use 0 (autotuning, \
                     the default) or at least {PLAUSIBLE_SOCKET_BUFFER}.",
                    p.name,
                    2 * v
                ));
            }
        }
        out
    }

    /// Parses the process environment.
    pub fn from_env() -> Result<Config> {
        Config::from_lookup(env_value)
    }

    /// Every variable with its effective value, in [`PARAMS`] order. Values are written so that
    /// feeding them back to [`Config::from_lookup`] gives the same `Config` ("" = unset).
    pub fn describe(&self) -> Vec<(&'static str, String)> {
        // Destructured so that a new field does not compile until it is described here.
        let Config {
            stripes,
            chunk_bytes,
            ifname,
            send_window,
            recv_window,
            inline_bytes,
            inline_idle_bytes,
            inline_idle_p2p_bytes,
            idle_chunk_bytes,
            spread_piece_bytes,
            sndbuf,
            rcvbuf,
            unread_bytes,
            unread_max_bytes,
            io_threads,
            handoff_bytes,
            io_spin_us,
            io_spin_threads,
            speed_mbps,
            handshake_timeout_ms,
            peer_timeout_ms,
            transport,
            tcpx_lib,
            stats,
            rma,
            stall_seconds,
            gpu_buffers,
            gpu_copy_bytes,
            bounce_demote,
            tuner,
            loopback_devices,
            rails,
        } = self;
        vec![
            (STRIPES.name, stripes.to_string()),
            (CHUNK_BYTES.name, chunk_bytes.to_string()),
            (IFNAME.name, ifname.clone().unwrap_or_default()),
            (SEND_WINDOW.name, send_window.to_string()),
            (RECV_WINDOW.name, recv_window.to_string()),
            (INLINE_BYTES.name, inline_bytes.to_string()),
            (INLINE_IDLE_BYTES.name, or_auto(inline_idle_bytes)),
            (INLINE_IDLE_P2P_BYTES.name, or_auto(inline_idle_p2p_bytes)),
            (IDLE_CHUNK_BYTES.name, or_auto(idle_chunk_bytes)),
            (SPREAD_PIECE_BYTES.name, or_auto(spread_piece_bytes)),
            (SOCKET_SNDBUF.name, sndbuf.to_string()),
            (SOCKET_RCVBUF.name, rcvbuf.to_string()),
            (UNREAD_BYTES.name, unread_bytes.to_string()),
            (UNREAD_MAX_BYTES.name, unread_max_bytes.to_string()),
            (IO_THREADS.name, or_auto(io_threads)),
            (HANDOFF_BYTES.name, or_auto(handoff_bytes)),
            (IO_SPIN_US.name, or_auto(io_spin_us)),
            (IO_SPIN_THREADS.name, or_auto(io_spin_threads)),
            (SPEED_MBPS.name, speed_mbps.to_string()),
            (HANDSHAKE_TIMEOUT_MS.name, handshake_timeout_ms.to_string()),
            (PEER_TIMEOUT_MS.name, peer_timeout_ms.to_string()),
            (TRANSPORT.name, transport.to_string()),
            (TCPX_LIB.name, tcpx_lib.clone().unwrap_or_default()),
            (STATS.name, u8::from(*stats).to_string()),
            (STALL_SECONDS.name, stall_seconds.to_string()),
            (GPU_BUFFERS.name, gpu_buffers.as_str().to_string()),
            (GPU_COPY_BYTES.name, or_auto(gpu_copy_bytes)),
            (BOUNCE_DEMOTE.name, u8::from(*bounce_demote).to_string()),
            (TUNER.name, tuner.as_str().to_string()),
            (LOOPBACK_DEVICES.name, loopback_devices.to_string()),
            (
                RAILS.name,
                rails.iter().map(Rail::to_string).collect::<Vec<_>>().join(","),
            ),
            (RMA.name, u8::from(*rma).to_string()),
        ]
    }
}

impl Default for Config {
    /// Every setting at its [`PARAMS`] default.
    fn default() -> Config {
        // The defaults are constants; `tests::defaults` proves they parse.
        Config::from_lookup(|_| None).expect("PARAMS defaults are valid")
    }
}

/// A variable's value, `None` when unset or empty.
pub(crate) fn env_value(name: &str) -> Option<String> {
    std::env::var_os(name)
        .map(|v| v.to_string_lossy().into_owned())
        .filter(|v| !v.trim().is_empty())
}

/// One line per variable: `NAME = value (default)` or `NAME = value (set by environment)`.
fn effective_lines(cfg: &Config, is_set: impl Fn(&str) -> bool) -> Vec<String> {
    cfg.describe()
        .into_iter()
        .map(|(name, value)| {
            let value = if value.is_empty() { "(unset)".to_owned() } else { value };
            let source = if is_set(name) { "set by environment" } else { "default" };
            format!("{name} = {value} ({source})")
        })
        .collect()
}

static GLOBAL: OnceLock<Result<Config>> = OnceLock::new();

/// The process-wide settings, parsed from the environment on the first call. The outcome is kept,
/// a failure included, so every later init sees the same answer. The first call logs each
/// effective value at INFO and each of [`Config::warnings`] as a WARN, with target `tcpxr::env`,
/// so install the logger ([`crate::log::install`]) before calling it. A failure is not logged
/// here: it is returned, and the exported function that called init logs it once, as it does every
/// error (logging it here too printed every configuration error twice).
pub fn global() -> Result<&'static Config> {
    let parsed = GLOBAL.get_or_init(|| {
        let parsed = Config::from_env();
        if let Ok(cfg) = &parsed {
            for line in effective_lines(cfg, |name| env_value(name).is_some()) {
                ::log::info!(target: "tcpxr::env", "{line}");
            }
            for warning in cfg.warnings() {
                ::log::warn!(target: "tcpxr::env", "{warning}");
            }
        }
        parsed
    });
    match parsed {
        Ok(cfg) => Ok(cfg),
        Err(e) => Err(e.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&str, &str)]) -> Result<Config> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(move |name| map.get(name).cloned())
    }

    fn one(name: &str, value: &str) -> Result<Config> {
        with(&[(name, value)])
    }

    /// `value` is rejected with a message naming the variable, the value and the accepted text.
    fn rejected(name: &str, value: &str, range_text: &str) {
        let err = one(name, value).expect_err(&format!("{name}={value} should be rejected"));
        assert_eq!(err.code, ncclResult_t::ncclInvalidArgument);
        assert!(err.msg.contains(name), "{}", err.msg);
        assert!(err.msg.contains(&format!("={}", value.trim())), "{}", err.msg);
        assert!(err.msg.contains(range_text), "{}", err.msg);
    }

    #[test]
    fn defaults() {
        let c = Config::default();
        assert_eq!(
            c,
            Config {
                stripes: 4,
                chunk_bytes: 524288,
                ifname: None,
                send_window: 12,
                recv_window: 16,
                inline_bytes: 16384,
                inline_idle_bytes: None,
                inline_idle_p2p_bytes: None,
                idle_chunk_bytes: None,
                spread_piece_bytes: None,
                sndbuf: 0,
                rcvbuf: 0,
                unread_bytes: 0,
                unread_max_bytes: 0,
                io_threads: None,
                handoff_bytes: None,
                io_spin_us: None,
                io_spin_threads: None,
                speed_mbps: 0,
                handshake_timeout_ms: 10000,
                peer_timeout_ms: 5000,
                transport: Transport::Auto,
                tcpx_lib: None,
                stats: false,
                rma: false,
                stall_seconds: 60,
                gpu_buffers: Switch::Auto,
                gpu_copy_bytes: None,
                bounce_demote: true,
                tuner: Switch::Auto,
                loopback_devices: 1,
                rails: Vec::new(),
            }
        );
        // Empty and blank values mean unset.
        let blank: Vec<(&str, &str)> = PARAMS.iter().map(|p| (p.name, "  ")).collect();
        assert_eq!(with(&blank).unwrap(), c);
        let empty: Vec<(&str, &str)> = PARAMS.iter().map(|p| (p.name, "")).collect();
        assert_eq!(with(&empty).unwrap(), c);
    }

    /// Every number-taking row's `accepted` text says what its range accepts (the bounds, 0 where it
    /// is accepted besides them, the multiple, the suffixes), so the words in an error message and
    /// the documents never drift from the parser's check.
    #[test]
    fn each_rows_accepted_text_matches_its_range() {
        let numeric: Vec<&Param> = PARAMS.iter().filter(|p| p.range.is_some()).collect();
        assert!(numeric.len() >= 20, "{} number-taking rows", numeric.len());
        for p in numeric {
            let (r, t) = (p.range.unwrap(), p.accepted);
            let bounds = if r.hi == r.lo + 1 {
                format!("{} or {}", r.lo, r.hi)
            } else {
                format!("{}-{}", r.lo, r.hi)
            };
            assert!(t.contains(&bounds), "{}: {t:?} does not say {bounds}", p.name);
            if r.zero {
                assert!(
                    t.starts_with("0 ") || t.contains(", 0 or "),
                    "{}: {t:?} does not say 0",
                    p.name
                );
            }
            if r.multiple > 1 {
                assert!(
                    t.contains(&format!("a multiple of {}", r.multiple)),
                    "{}: {t:?}",
                    p.name
                );
            }
            assert_eq!(r.bytes, t.contains("suffixes allowed"), "{}: {t:?}", p.name);
        }
    }

    /// Every number-taking row accepts its bounds (and 0 where its range says so) and refuses just
    /// outside them, with the row's accepted text.
    #[test]
    fn each_row_takes_its_bounds_and_refuses_beyond_them() {
        for p in PARAMS.iter().filter(|p| p.range.is_some()) {
            let r = p.range.unwrap();
            // UNREAD_MAX_BYTES may not be below UNREAD_BYTES: give it the smallest window beside it.
            let beside: &[(&str, &str)] = if p.name == UNREAD_MAX_BYTES.name {
                &[(UNREAD_BYTES.name, "16384")]
            } else {
                &[]
            };
            let take = |v: u64| {
                let mut vars = beside.to_vec();
                let v = v.to_string();
                vars.push((p.name, &v));
                with(&vars).map(|_| ()).map_err(|e| e.msg)
            };
            assert_eq!(take(r.lo), Ok(()), "{} at its lower bound", p.name);
            assert_eq!(take(r.hi), Ok(()), "{} at its upper bound", p.name);
            if r.zero {
                assert_eq!(take(0), Ok(()), "{}=0", p.name);
            }
            let err = take(r.hi + 1).expect_err(p.name);
            assert!(err.contains(p.accepted), "{err}");
            if r.lo > 0 && !(r.zero && r.lo == 1) {
                let err = take(r.lo - 1).expect_err(p.name);
                assert!(err.contains(p.accepted), "{err}");
            }
        }
    }

    #[test]
    fn error_message_format() {
        let err = one("NCCL_TCPXR_STRIPES", "0").unwrap_err();
        assert_eq!(err.msg, "NCCL_TCPXR_STRIPES=0 is invalid: accepted 1-16");
    }

    #[test]
    fn stripes_bounds() {
        assert_eq!(one("NCCL_TCPXR_STRIPES", "1").unwrap().stripes, 1);
        assert_eq!(one("NCCL_TCPXR_STRIPES", " 16 ").unwrap().stripes, 16);
        rejected("NCCL_TCPXR_STRIPES", "0", "1-16");
        rejected("NCCL_TCPXR_STRIPES", "17", "1-16");
        rejected("NCCL_TCPXR_STRIPES", "-1", "1-16");
        rejected("NCCL_TCPXR_STRIPES", "four", "1-16");
        // Suffixes are for byte sizes only.
        rejected("NCCL_TCPXR_STRIPES", "1K", "1-16");
    }

    #[test]
    fn chunk_bytes_bounds() {
        let n = "NCCL_TCPXR_CHUNK_BYTES";
        assert_eq!(one(n, "4096").unwrap().chunk_bytes, 4096);
        assert_eq!(one(n, "16777216").unwrap().chunk_bytes, 16 << 20);
        rejected(n, "0", "4096-16777216");
        rejected(n, "16781312", "4096-16777216"); // 16 MiB + 4096
        rejected(n, "17M", "4096-16777216");
    }

    #[test]
    fn chunk_bytes_multiple_of_4096() {
        let n = "NCCL_TCPXR_CHUNK_BYTES";
        rejected(n, "4097", "multiple of 4096");
        rejected(n, "1000000", "multiple of 4096");
        assert_eq!(one(n, "12K").unwrap().chunk_bytes, 12288);
        rejected(n, "6K", "multiple of 4096");
    }

    #[test]
    fn size_suffixes() {
        let n = "NCCL_TCPXR_CHUNK_BYTES";
        assert_eq!(one(n, "512K").unwrap().chunk_bytes, 512 << 10);
        assert_eq!(one(n, "512k").unwrap().chunk_bytes, 512 << 10);
        assert_eq!(one(n, "4M").unwrap().chunk_bytes, 4 << 20);
        assert_eq!(one(n, "16m").unwrap().chunk_bytes, 16 << 20);
        assert_eq!(one("NCCL_TCPXR_SOCKET_SNDBUF", "1G").unwrap().sndbuf, 1 << 30);
        assert_eq!(one("NCCL_TCPXR_INLINE_BYTES", "1M").unwrap().inline_bytes, 1 << 20);
        rejected(n, "K", "4096-16777216");
        rejected(n, "512KB", "4096-16777216");
        rejected(n, "0x1000", "4096-16777216");
        rejected(n, "99999999999999999999K", "4096-16777216");
    }

    #[test]
    fn ifname() {
        let n = "NCCL_TCPXR_IFNAME";
        for ok in ["eth", "eth0,eth1", "^docker,lo", "=eth0", "^=eth0,eth1"] {
            assert_eq!(one(n, ok).unwrap().ifname.as_deref(), Some(ok));
        }
        assert_eq!(one(n, " eth0 ").unwrap().ifname.as_deref(), Some("eth0"));
        for bad in ["^", "=", "^=", ",", "^ , "] {
            rejected(n, bad, "comma-separated");
        }
    }

    #[test]
    fn windows_bounds() {
        for n in ["NCCL_TCPXR_SEND_WINDOW", "NCCL_TCPXR_RECV_WINDOW"] {
            assert!(one(n, "1").is_ok());
            assert!(one(n, "64").is_ok());
            rejected(n, "0", "1-64");
            rejected(n, "65", "1-64");
        }
        let c = with(&[("NCCL_TCPXR_SEND_WINDOW", "3"), ("NCCL_TCPXR_RECV_WINDOW", "5")]).unwrap();
        assert_eq!((c.send_window, c.recv_window), (3, 5));
    }

    #[test]
    fn a_growing_window_needs_a_window_to_grow_from() {
        let c = with(&[
            ("NCCL_TCPXR_UNREAD_BYTES", "256K"),
            ("NCCL_TCPXR_UNREAD_MAX_BYTES", "4M"),
        ])
        .unwrap();
        assert_eq!((c.unread_bytes, c.unread_max_bytes), (256 << 10, 4 << 20));
        let n = "NCCL_TCPXR_UNREAD_MAX_BYTES";
        rejected(n, "4M", "not below a set NCCL_TCPXR_UNREAD_BYTES");
        let e = with(&[("NCCL_TCPXR_UNREAD_BYTES", "1M"), (n, "512K")]).unwrap_err();
        assert_eq!(
            e.msg,
            "NCCL_TCPXR_UNREAD_MAX_BYTES=512K is invalid: accepted 0 (no growth) or 16384-1073741824, not \
             below a set NCCL_TCPXR_UNREAD_BYTES (K/M/G suffixes allowed)"
        );
        rejected(n, "8K", "16384-1073741824");
    }

    #[test]
    fn inline_bytes_bounds() {
        let n = "NCCL_TCPXR_INLINE_BYTES";
        assert_eq!(one(n, "0").unwrap().inline_bytes, 0);
        assert_eq!(one(n, "1048576").unwrap().inline_bytes, 1 << 20);
        rejected(n, "1048577", "0-1048576");
        let n = "NCCL_TCPXR_INLINE_IDLE_BYTES";
        assert_eq!(one(n, "auto").unwrap().inline_idle_bytes, None);
        assert_eq!(one(n, "0").unwrap().inline_idle_bytes, Some(0));
        assert_eq!(one(n, "256K").unwrap().inline_idle_bytes, Some(256 << 10));
        assert_eq!(one(n, "1M").unwrap().inline_idle_bytes, Some(1 << 20));
        rejected(n, "1048577", "0-1048576");
        let n = "NCCL_TCPXR_INLINE_IDLE_P2P_BYTES";
        assert_eq!(one(n, "auto").unwrap().inline_idle_p2p_bytes, None);
        assert_eq!(one(n, "128K").unwrap().inline_idle_p2p_bytes, Some(128 << 10));
        rejected(n, "1048577", "auto or 0-1048576");
        rejected(n, "-1", "auto or 0-1048576");
        rejected(n, "-1", "0-1048576");
        let n = "NCCL_TCPXR_IDLE_CHUNK_BYTES";
        assert_eq!(one(n, "auto").unwrap().idle_chunk_bytes, None);
        assert_eq!(one(n, "0").unwrap().idle_chunk_bytes, Some(0));
        assert_eq!(one(n, "64K").unwrap().idle_chunk_bytes, Some(64 << 10));
        assert_eq!(one(n, "16M").unwrap().idle_chunk_bytes, Some(16 << 20));
        let n = "NCCL_TCPXR_SPREAD_PIECE_BYTES";
        assert_eq!(one(n, "auto").unwrap().spread_piece_bytes, None);
        assert_eq!(one(n, "0").unwrap().spread_piece_bytes, Some(0));
        assert_eq!(one(n, "128K").unwrap().spread_piece_bytes, Some(128 << 10));
        for n in ["NCCL_TCPXR_IDLE_CHUNK_BYTES", "NCCL_TCPXR_SPREAD_PIECE_BYTES"] {
            for bad in ["4095", "6000", "17M", "-1"] {
                rejected(n, bad, "auto, 0 or 4096-16777216, a multiple of 4096");
            }
        }
    }

    #[test]
    fn bounce_demote_is_on_unless_set_to_0_and_takes_nothing_but_0_or_1() {
        let n = "NCCL_TCPXR_BOUNCE_DEMOTE";
        assert!(with(&[]).unwrap().bounce_demote);
        assert!(!one(n, "0").unwrap().bounce_demote);
        assert!(one(n, "1").unwrap().bounce_demote);
        for bad in ["2", "yes", "-1"] {
            let e = one(n, bad).unwrap_err();
            assert!(e.msg.contains(n) && e.msg.contains("0 or 1"), "{bad}: {}", e.msg);
        }
    }

    #[test]
    fn gpu_copy_bytes_bounds() {
        let n = "NCCL_TCPXR_GPU_COPY_BYTES";
        assert_eq!(one(n, "auto").unwrap().gpu_copy_bytes, None);
        assert_eq!(one(n, "0").unwrap().gpu_copy_bytes, Some(0));
        assert_eq!(one(n, "256K").unwrap().gpu_copy_bytes, Some(256 << 10));
        assert_eq!(one(n, "4M").unwrap().gpu_copy_bytes, Some(4 << 20));
        for bad in ["4194305", "8M", "-1", "on"] {
            rejected(n, bad, "auto or 0-4194304");
        }
    }

    #[test]
    fn socket_buffer_bounds() {
        for n in ["NCCL_TCPXR_SOCKET_SNDBUF", "NCCL_TCPXR_SOCKET_RCVBUF"] {
            assert!(one(n, "0").is_ok());
            assert!(one(n, "4096").is_ok());
            assert!(one(n, "1073741824").is_ok());
            rejected(n, "1", "4096-1073741824");
            rejected(n, "4095", "4096-1073741824");
            rejected(n, "1073741825", "4096-1073741824");
        }
        let c = with(&[("NCCL_TCPXR_SOCKET_SNDBUF", "4M"), ("NCCL_TCPXR_SOCKET_RCVBUF", "8M")]).unwrap();
        assert_eq!((c.sndbuf, c.rcvbuf), (4 << 20, 8 << 20));
    }

    #[test]
    fn implausibly_small_socket_buffers_are_honoured_with_a_warning_naming_variable_value_and_why() {
        for n in ["NCCL_TCPXR_SOCKET_SNDBUF", "NCCL_TCPXR_SOCKET_RCVBUF"] {
            for (value, warned) in [
                ("0", false),
                ("4096", true),
                ("65535", true),
                ("64K", false),
                ("4M", false),
            ] {
                let c = one(n, value).unwrap();
                let w = c.warnings();
                assert_eq!(w.len(), usize::from(warned), "{n}={value}: {w:?}");
                if warned {
                    let v = parse_uint(value, true).unwrap();
                    assert!(w[0].starts_with(&format!("{n}={v} ")), "{w:?}");
                    assert!(
                        w[0].contains(&format!("doubles it to {}", 2 * v)) && w[0].contains("honoured"),
                        "{w:?}"
                    );
                }
            }
        }
        assert!(Config::default().warnings().is_empty());
        let both = with(&[("NCCL_TCPXR_SOCKET_SNDBUF", "4K"), ("NCCL_TCPXR_SOCKET_RCVBUF", "8K")]).unwrap();
        assert_eq!(both.warnings().len(), 2);
    }

    #[test]
    fn io_pool_bounds() {
        let n = "NCCL_TCPXR_IO_THREADS";
        assert_eq!(one(n, "auto").unwrap().io_threads, None);
        assert_eq!(one(n, " AUTO ").unwrap().io_threads, None);
        assert_eq!(one(n, "0").unwrap().io_threads, Some(0));
        assert_eq!(one(n, "1024").unwrap().io_threads, Some(1024));
        rejected(n, "1025", "auto or 0-1024");
        rejected(n, "-1", "auto or 0-1024");
        rejected(n, "many", "auto or 0-1024");
        rejected(n, "4K", "auto or 0-1024");
        let n = "NCCL_TCPXR_HANDOFF_BYTES";
        assert_eq!(one(n, "auto").unwrap().handoff_bytes, None);
        assert_eq!(one(n, "0").unwrap().handoff_bytes, Some(0));
        assert_eq!(one(n, "64K").unwrap().handoff_bytes, Some(64 << 10));
        assert_eq!(one(n, "1G").unwrap().handoff_bytes, Some(1 << 30));
        rejected(n, "1073741825", "auto or 0-1073741824");
        rejected(n, "-5", "auto or 0-1073741824");
        let n = "NCCL_TCPXR_IO_SPIN_US";
        assert_eq!(one(n, "auto").unwrap().io_spin_us, None);
        assert_eq!(one(n, "0").unwrap().io_spin_us, Some(0));
        assert_eq!(one(n, "100000").unwrap().io_spin_us, Some(100_000));
        rejected(n, "100001", "auto or 0-100000");
        rejected(n, "1ms", "auto or 0-100000");
        let n = "NCCL_TCPXR_IO_SPIN_THREADS";
        assert_eq!(one(n, "auto").unwrap().io_spin_threads, None);
        assert_eq!(one(n, "64").unwrap().io_spin_threads, Some(64));
        rejected(n, "0", "auto or 1-64");
        rejected(n, "65", "auto or 1-64");
    }

    #[test]
    fn speed_bounds() {
        let n = "NCCL_TCPXR_SPEED_MBPS";
        assert_eq!(one(n, "0").unwrap().speed_mbps, 0);
        assert_eq!(one(n, "1").unwrap().speed_mbps, 1);
        assert_eq!(one(n, "10000000").unwrap().speed_mbps, 10_000_000);
        rejected(n, "10000001", "1-10000000");
        rejected(n, "4294967296", "1-10000000");
        rejected(n, "100G", "1-10000000");
    }

    #[test]
    fn loopback_devices_and_rails() {
        let n = "NCCL_TCPXR_LOOPBACK_DEVICES";
        assert_eq!(one(n, "8").unwrap().loopback_devices, 8);
        rejected(n, "0", "1-8");
        rejected(n, "9", "1-8");
        let n = "NCCL_TCPXR_RAILS";
        let rail = |rail, plane| Rail { rail, plane };
        assert_eq!(
            one(n, " 0:3,1 ,7:0").unwrap().rails,
            [rail(0, Some(3)), rail(1, None), rail(7, Some(0))]
        );
        assert_eq!(one(n, "32767").unwrap().rails, [rail(32767, None)]);
        let accepted = "one rail[:plane] per device";
        rejected(n, "32768", accepted);
        rejected(n, "-1", accepted);
        rejected(n, "0,,1", accepted);
        rejected(n, "0:", accepted);
        rejected(n, "0:1:2", accepted);
        rejected(n, "eth0", accepted);
    }

    #[test]
    fn timeout_bounds() {
        let n = "NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS";
        assert_eq!(one(n, "100").unwrap().handshake_timeout_ms, 100);
        assert_eq!(one(n, "600000").unwrap().handshake_timeout_ms, 600_000);
        rejected(n, "99", "100-600000");
        rejected(n, "600001", "100-600000");
        let n = "NCCL_TCPXR_PEER_TIMEOUT_MS";
        assert_eq!(one(n, "500").unwrap().peer_timeout_ms, 500);
        assert_eq!(one(n, "600000").unwrap().peer_timeout_ms, 600_000);
        rejected(n, "499", "500-600000");
        rejected(n, "600001", "500-600000");
    }

    #[test]
    fn transport() {
        let n = "NCCL_TCPXR_TRANSPORT";
        for (s, t) in [
            ("auto", Transport::Auto),
            ("AUTO", Transport::Auto),
            ("tcpx", Transport::Tcpx),
            ("TcpX", Transport::Tcpx),
            ("socket", Transport::Socket),
            (" Socket ", Transport::Socket),
        ] {
            assert_eq!(one(n, s).unwrap().transport, t, "{s}");
        }
        rejected(n, "ib", "auto, tcpx or socket");
        rejected(n, "tcp", "auto, tcpx or socket");
    }

    #[test]
    fn switches_parse_and_auto_follows_the_transport() {
        for (n, field) in [
            (
                "NCCL_TCPXR_GPU_BUFFERS",
                (|c: &Config| c.gpu_buffers) as fn(&Config) -> Switch,
            ),
            ("NCCL_TCPXR_TUNER", |c: &Config| c.tuner),
        ] {
            for (s, g) in [
                ("auto", Switch::Auto),
                ("AUTO", Switch::Auto),
                ("0", Switch::Off),
                ("1", Switch::On),
            ] {
                assert_eq!(field(&one(n, s).unwrap()), g, "{n}={s}");
            }
            rejected(n, "2", "auto, 0 or 1");
            rejected(n, "yes", "auto, 0 or 1");
        }
        let (socket, tcpx) = (
            crate::transport::TransportKind::Socket,
            crate::transport::TransportKind::Tcpx,
        );
        assert!(Switch::Auto.on_for(tcpx, tcpx) && !Switch::Auto.on_for(socket, tcpx));
        assert!(Switch::On.on_for(socket, tcpx) && !Switch::Off.on_for(tcpx, tcpx));
    }

    #[test]
    fn tcpx_lib_and_stats() {
        let c = one("NCCL_TCPXR_TCPX_LIB", "/opt/tcpx/lib/libnccl-net.so").unwrap();
        assert_eq!(c.tcpx_lib.as_deref(), Some("/opt/tcpx/lib/libnccl-net.so"));
        let n = "NCCL_TCPXR_STATS";
        assert!(!one(n, "0").unwrap().stats);
        assert!(one(n, "1").unwrap().stats);
        rejected(n, "2", "0 or 1");
        rejected(n, "yes", "0 or 1");
    }

    #[test]
    fn every_field_has_a_row_and_every_row_a_field() {
        let described = Config::default().describe();
        assert_eq!(described.len(), PARAMS.len());
        for ((name, _), p) in described.iter().zip(PARAMS) {
            assert_eq!(*name, p.name);
        }
        for p in PARAMS {
            assert!(p.name.starts_with("NCCL_TCPXR_"), "{}", p.name);
            assert!(!p.accepted.is_empty() && !p.doc.is_empty(), "{}", p.name);
            assert_eq!(param(p.name), Some(p));
        }
        let mut names: Vec<_> = PARAMS.iter().map(|p| p.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), PARAMS.len(), "duplicate rows");
    }

    #[test]
    fn defaults_are_described_as_the_table_says() {
        for ((name, value), p) in Config::default().describe().iter().zip(PARAMS) {
            assert_eq!(value, p.default, "{name}");
        }
    }

    #[test]
    fn describe_round_trips() {
        let c = with(&[
            ("NCCL_TCPXR_STRIPES", "8"),
            ("NCCL_TCPXR_CHUNK_BYTES", "1M"),
            ("NCCL_TCPXR_IFNAME", "^lo,docker"),
            ("NCCL_TCPXR_INLINE_IDLE_P2P_BYTES", "256K"),
            ("NCCL_TCPXR_IDLE_CHUNK_BYTES", "128K"),
            ("NCCL_TCPXR_SPREAD_PIECE_BYTES", "64K"),
            ("NCCL_TCPXR_SOCKET_SNDBUF", "2M"),
            ("NCCL_TCPXR_IO_THREADS", "3"),
            ("NCCL_TCPXR_HANDOFF_BYTES", "1M"),
            ("NCCL_TCPXR_IO_SPIN_US", "50"),
            ("NCCL_TCPXR_IO_SPIN_THREADS", "3"),
            ("NCCL_TCPXR_TRANSPORT", "SOCKET"),
            ("NCCL_TCPXR_TCPX_LIB", "libnccl-net-tcpx.so"),
            ("NCCL_TCPXR_STATS", "1"),
            ("NCCL_TCPXR_GPU_BUFFERS", "1"),
            ("NCCL_TCPXR_GPU_COPY_BYTES", "1M"),
            ("NCCL_TCPXR_BOUNCE_DEMOTE", "0"),
            ("NCCL_TCPXR_LOOPBACK_DEVICES", "3"),
            ("NCCL_TCPXR_RAILS", "0:1, 2,32767:0"),
        ])
        .unwrap();
        let described = c.describe();
        let back: Vec<(&str, &str)> = described.iter().map(|(n, v)| (*n, v.as_str())).collect();
        assert_eq!(with(&back).unwrap(), c);
    }

    #[test]
    fn readme_and_config_doc_tables_are_generated_from_params() {
        for (file, length) in [("README.md", DocLength::Summary), ("docs/CONFIG.md", DocLength::Full)] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let fresh = markdown_table(length);
            let block = generated_block(&text)
                .unwrap_or_else(|| panic!("{file} has no block between {TABLE_BEGIN} and {TABLE_END}"));
            if block != fresh && std::env::var_os("TCPXR_UPDATE_DOCS").is_some() {
                // A developer's shortcut: write the fresh table into the document and pass.
                let start = block.as_ptr() as usize - text.as_ptr() as usize;
                let updated = format!("{}{fresh}{}", &text[..start], &text[start + block.len()..]);
                std::fs::write(&path, updated).expect("README.md or docs/CONFIG.md is writable");
                continue;
            }
            assert!(
                block == fresh,
                "{file}'s settings table differs from config::PARAMS; replace its block with the text below \\
                 (or run this test with TCPXR_UPDATE_DOCS=1 to write it):\n\
                 {TABLE_BEGIN}\n{fresh}{TABLE_END}\n"
            );
        }
    }

    #[test]
    fn summaries_are_one_short_sentence() {
        for p in PARAMS {
            let s = p.summary();
            assert!(s.ends_with('.') && s.len() <= 160, "{}: {s:?}", p.name);
            assert!(p.doc.starts_with(s), "{}", p.name);
        }
    }

    #[test]
    fn effective_lines_name_the_source() {
        let c = one("NCCL_TCPXR_STRIPES", "4").unwrap();
        let lines = effective_lines(&c, |n| n == "NCCL_TCPXR_STRIPES");
        assert_eq!(lines.len(), PARAMS.len());
        assert_eq!(lines[0], "NCCL_TCPXR_STRIPES = 4 (set by environment)");
        assert_eq!(lines[1], "NCCL_TCPXR_CHUNK_BYTES = 524288 (default)");
        assert_eq!(lines[2], "NCCL_TCPXR_IFNAME = (unset) (default)");
    }
}
