//! The `log` facade routed to NCCL's logger.
//!
//! Every layer logs with the `log` macros. Once [`install`] has been given NCCL's logger, records go
//! to it, prefixed "NET/tcpxr ", always through the fixed format `"%s"` (a message is never a format
//! string), one call per line of the message: NCCL formats each call into a 1024-byte buffer with
//! its own prefix and drops the rest, which cut the settings blocks short after their fifth line
//! (run 192), so a line longer than [`NCCL_PIECE_BYTES`] goes in several calls too. Without an NCCL logger (the library used directly: the bench, the C API, tests) records
//! go to stderr through an `env_logger` filtered by `TCPXR_LOG` (default "warn"), or are appended
//! to the file `TCPXR_LOG_FILE` names (test processes: see testlog.rs).
//!
//! Targets with a meaning for NCCL's subsystem filter (`NCCL_DEBUG_SUBSYS`): `tcpxr::init` (INIT|NET)
//! and `tcpxr::env` (ENV|NET); every other INFO record is NET.
use crate::abi::{
    ncclDebugLogger_t, NCCL_ALL, NCCL_ENV, NCCL_INIT, NCCL_LOG_INFO, NCCL_LOG_TRACE, NCCL_LOG_WARN, NCCL_NET,
};
use ::log::{Level, LevelFilter, Log, Metadata, Record};
use std::ffi::{c_void, CString};
use std::fmt;
use std::os::raw::{c_char, c_int, c_ulong};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Once, OnceLock};

/// The function type inside `ncclDebugLogger_t`.
type LoggerFn = unsafe extern "C" fn(c_int, c_ulong, *const c_char, c_int, *const c_char, ...);

/// NCCL's logger as a raw pointer; null when none was given.
static NCCL_LOGGER: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static REGISTER: Once = Once::new();
static FALLBACK: OnceLock<env_logger::Logger> = OnceLock::new();
static LOGGER: NcclLog = NcclLog;

/// Routes `log` records to `logger` (NCCL's, from `init`), or to stderr when it is `None`.
/// May be called again by a later `init`; the newest logger wins.
pub fn install(logger: ncclDebugLogger_t) {
    let raw = logger.map_or(std::ptr::null_mut(), |f| f as *mut c_void);
    NCCL_LOGGER.store(raw, Ordering::Release);
    REGISTER.call_once(|| {
        // Already set means the embedding program chose its own logger: leave it and its level.
        if ::log::set_logger(&LOGGER).is_ok() {
            ::log::set_max_level(max_level());
        }
    });
}

/// Installs the logger without an NCCL function: records go to stderr, filtered by `TCPXR_LOG`.
/// Used by the bench and the C API. It does not forget an NCCL logger given earlier.
pub fn install_fallback() {
    REGISTER.call_once(|| {
        if ::log::set_logger(&LOGGER).is_ok() {
            ::log::set_max_level(max_level());
        }
    });
}

/// Info, or Trace when `NCCL_DEBUG=TRACE` or `TCPXR_LOG` asks for debug or trace records.
fn max_level() -> LevelFilter {
    let nccl_trace = std::env::var("NCCL_DEBUG").is_ok_and(|v| v.trim().eq_ignore_ascii_case("trace"));
    let ours = std::env::var("TCPXR_LOG").unwrap_or_default().to_ascii_lowercase();
    if nccl_trace || ours.contains("debug") || ours.contains("trace") {
        LevelFilter::Trace
    } else {
        LevelFilter::Info
    }
}

fn nccl_logger() -> Option<LoggerFn> {
    let raw = NCCL_LOGGER.load(Ordering::Acquire);
    if raw.is_null() {
        None
    } else {
        // SAFETY: every non-null value stored in NCCL_LOGGER came from a `LoggerFn` in `install`.
        Some(unsafe { std::mem::transmute::<*mut c_void, LoggerFn>(raw) })
    }
}

fn fallback() -> &'static env_logger::Logger {
    FALLBACK.get_or_init(|| {
        let spec = std::env::var("TCPXR_LOG")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| "warn".to_owned());
        let target = match crate::testlog::file() {
            Some(f) => env_logger::Target::Pipe(Box::new(f)),
            None => env_logger::Target::Stderr,
        };
        env_logger::Builder::new().parse_filters(&spec).target(target).build()
    })
}

/// NCCL's level and subsystem flags for a record.
fn nccl_level_and_flags(level: Level, target: &str) -> (c_int, c_ulong) {
    match level {
        Level::Error | Level::Warn => (NCCL_LOG_WARN, NCCL_ALL),
        Level::Info => match target {
            "tcpxr::init" => (NCCL_LOG_INFO, NCCL_INIT | NCCL_NET),
            "tcpxr::env" => (NCCL_LOG_INFO, NCCL_ENV | NCCL_NET),
            _ => (NCCL_LOG_INFO, NCCL_NET),
        },
        Level::Debug | Level::Trace => (NCCL_LOG_TRACE, NCCL_NET),
    }
}

/// The most of a message one call to NCCL's logger carries: its buffer is 1024 bytes, less
/// NCCL's prefix (`"host:pid:tid [dev] NCCL INFO "`, longer with a long host name) and "NET/tcpxr ".
const NCCL_PIECE_BYTES: usize = 800;

/// The message as NCCL's logger calls take it: one C string per line, each "NET/tcpxr " + the
/// line, a line longer than [`NCCL_PIECE_BYTES`] in several (the later ones marked "(cont.)"), cut
/// at character boundaries; an interior NUL becomes the two characters `\0`.
fn nccl_messages(args: fmt::Arguments<'_>) -> Vec<CString> {
    let text = args.to_string().replace('\0', "\\0");
    let mut out = Vec::new();
    for line in text.split('\n') {
        let mut rest = line;
        let mut first = true;
        loop {
            let mut cut = rest.len().min(NCCL_PIECE_BYTES);
            while !rest.is_char_boundary(cut) {
                cut -= 1;
            }
            let (piece, tail) = rest.split_at(cut);
            let mark = if first { "" } else { "(cont.) " };
            out.push(CString::new(format!("NET/tcpxr {mark}{piece}")).unwrap_or_default());
            (rest, first) = (tail, false);
            if rest.is_empty() {
                break;
            }
        }
    }
    out
}

/// Where a record came from, as NCCL prints it beside TRACE lines.
fn nccl_origin(record: &Record<'_>) -> CString {
    let origin = record.module_path().or(record.file()).unwrap_or("tcpxr");
    CString::new(origin.replace('\0', "")).unwrap_or_default()
}

struct NcclLog;

impl Log for NcclLog {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        match nccl_logger() {
            Some(_) => metadata.level() <= ::log::max_level(),
            None => fallback().enabled(metadata),
        }
    }

    fn log(&self, record: &Record<'_>) {
        let Some(logger) = nccl_logger() else {
            fallback().log(record);
            return;
        };
        let (level, flags) = nccl_level_and_flags(record.level(), record.target());
        let file = nccl_origin(record);
        let line = record.line().map_or(0, |l| c_int::try_from(l).unwrap_or(c_int::MAX));
        for message in nccl_messages(*record.args()) {
            // SAFETY: NCCL's logger is a printf-style function; the format is the literal "%s" and
            // its one vararg is a NUL-terminated string that, like `file`, outlives the call.
            unsafe { logger(level, flags, file.as_ptr(), line, c"%s".as_ptr(), message.as_ptr()) };
        }
    }

    fn flush(&self) {
        if nccl_logger().is_none() {
            fallback().flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_and_errors_go_to_every_subsystem() {
        assert_eq!(nccl_level_and_flags(Level::Error, "x"), (NCCL_LOG_WARN, NCCL_ALL));
        assert_eq!(
            nccl_level_and_flags(Level::Warn, "tcpxr::init"),
            (NCCL_LOG_WARN, NCCL_ALL)
        );
    }

    #[test]
    fn info_flags_follow_the_target() {
        assert_eq!(
            nccl_level_and_flags(Level::Info, "tcpxr::init"),
            (NCCL_LOG_INFO, NCCL_INIT | NCCL_NET)
        );
        assert_eq!(
            nccl_level_and_flags(Level::Info, "tcpxr::env"),
            (NCCL_LOG_INFO, NCCL_ENV | NCCL_NET)
        );
        assert_eq!(
            nccl_level_and_flags(Level::Info, "nccl_net_tcpxr::engine"),
            (NCCL_LOG_INFO, NCCL_NET)
        );
    }

    #[test]
    fn debug_and_trace_are_nccl_trace() {
        assert_eq!(
            nccl_level_and_flags(Level::Debug, "tcpxr::env"),
            (NCCL_LOG_TRACE, NCCL_NET)
        );
        assert_eq!(nccl_level_and_flags(Level::Trace, "x"), (NCCL_LOG_TRACE, NCCL_NET));
    }

    fn texts(messages: Vec<CString>) -> Vec<String> {
        messages.into_iter().map(|m| m.into_string().unwrap()).collect()
    }

    #[test]
    fn message_is_prefixed_and_percent_signs_survive() {
        let m = nccl_messages(format_args!("listening on {} (%s %d %n)", "10.0.0.1:5000"));
        assert_eq!(texts(m), ["NET/tcpxr listening on 10.0.0.1:5000 (%s %d %n)"]);
    }

    #[test]
    fn interior_nul_is_made_visible() {
        let bad = "a\0b";
        let m = nccl_messages(format_args!("{bad}%s"));
        assert_eq!(texts(m), ["NET/tcpxr a\\0b%s"]);
    }

    #[test]
    fn each_line_and_each_piece_of_a_long_line_is_its_own_call_that_fits_nccls_buffer() {
        let block = "effective settings:\n  A = 1 (default)\n  B = 2 (auto: why)";
        assert_eq!(
            texts(nccl_messages(format_args!("{block}"))),
            [
                "NET/tcpxr effective settings:",
                "NET/tcpxr   A = 1 (default)",
                "NET/tcpxr   B = 2 (auto: why)"
            ]
        );
        // 1,000 two-byte characters: cut at character boundaries, nothing lost, each piece small.
        let long = "é".repeat(1000);
        let pieces = texts(nccl_messages(format_args!("{long}")));
        assert_eq!(pieces.len(), 3);
        assert!(pieces
            .iter()
            .all(|p| p.len() <= "NET/tcpxr (cont.) ".len() + NCCL_PIECE_BYTES));
        assert!(pieces[1].starts_with("NET/tcpxr (cont.) é") && pieces[2].starts_with("NET/tcpxr (cont.) é"));
        let joined: String = pieces
            .iter()
            .map(|p| p.trim_start_matches("NET/tcpxr ").trim_start_matches("(cont.) "))
            .collect();
        assert_eq!(joined, long);
    }

    #[test]
    fn without_an_nccl_logger_records_go_to_the_fallback_through_tcpxrs_logger() {
        install_fallback();
        install_fallback();
        install(None);
        assert!(nccl_logger().is_none(), "install(None) leaves no NCCL logger");
        // tcpxr's logger is the one `log` hands records to, once, at the level it chose.
        let ours = &LOGGER as *const NcclLog as *const ();
        assert_eq!(::log::logger() as *const dyn Log as *const (), ours);
        assert_eq!(::log::max_level(), max_level());
        // With no NCCL logger, what passes is what the fallback's TCPXR_LOG filter lets through.
        for level in [Level::Error, Level::Warn, Level::Info, Level::Trace] {
            let m = Metadata::builder().level(level).target("tcpxr::env").build();
            assert_eq!(LOGGER.enabled(&m), fallback().enabled(&m), "{level}");
        }
    }
}
