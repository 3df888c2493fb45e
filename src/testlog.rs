//! tcpxr's log in test processes: where it goes, and what a test provokes in it, claimed and
//! asserted on.
//!
//! Outside NCCL tcpxr logs to stderr, or appends to the file `TCPXR_LOG_FILE` names (log.rs); set
//! and empty, stderr. Test processes log to a file of their own,
//! `target/<profile>/test-logs/<test binary>.<pid>.log`: the library's unit tests always, the
//! integration tests through `tests/common`, which before main picks the file
//! ([`capture_file_for_tests`]), names it in `TCPXR_LOG_FILE` (so the library the tests dlopen,
//! the TCPX emulator and the peer processes they start write there as well) and captures it
//! ([`capture_to`]).
//!
//! A test that provokes a WARN claims its line with [`expect`], which waits for it and fails the
//! test when it never comes; [`claim_all`] takes every line of a kind so far, [`allow`] lines whose
//! number varies. When the process exits it prints to stderr every WARN or error line that no test
//! claimed, with the file's name: a passing run is quiet, and a WARN nobody asked for still shows.
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The variable naming the file tcpxr's log goes to outside NCCL (empty: stderr).
pub const FILE_VAR: &str = "TCPXR_LOG_FILE";

/// How long [`expect`] waits for a line (it may come from another thread or process).
const WAIT: Duration = Duration::from_secs(10);

/// This process's capture: its file, and the lines tests have claimed.
struct Capture {
    path: PathBuf,
    claims: Mutex<Claims>,
}

#[derive(Default)]
struct Claims {
    /// Line numbers (from 0) claimed by [`expect`] or [`claim_all`].
    lines: HashSet<usize>,
    /// Text that claims every line containing it, now and later.
    allowed: Vec<String>,
}

static CAPTURE: OnceLock<Capture> = OnceLock::new();

/// Where the fallback logger writes: the capture file (the library's unit tests always have one),
/// else the file `TCPXR_LOG_FILE` names; None: stderr. A file that cannot be opened is stderr too.
pub(crate) fn file() -> Option<std::fs::File> {
    #[cfg(test)]
    start_for_unit_tests();
    let path = match CAPTURE.get() {
        Some(c) => c.path.clone(),
        None => PathBuf::from(std::env::var_os(FILE_VAR).filter(|p| !p.is_empty())?),
    };
    std::fs::OpenOptions::new().create(true).append(true).open(path).ok()
}

/// `target/<profile>/test-logs/<this executable>.<pid>.log` (test executables live in
/// `target/<profile>/deps`).
fn default_path() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    let name = exe
        .file_name()
        .map_or("tcpxr".into(), |n| n.to_string_lossy().into_owned());
    let profile = exe.parent().and_then(Path::parent).unwrap_or(Path::new("."));
    profile
        .join("test-logs")
        .join(format!("{name}.{}.log", std::process::id()))
}

/// Makes `path`'s folder and clears out the files earlier runs of this executable left there (those
/// of processes that are gone).
fn prepare(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let _ = std::fs::create_dir_all(dir);
    let name = name.to_string_lossy();
    let Some((exe, _)) = name.trim_end_matches(".log").rsplit_once('.') else {
        return;
    };
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let other = entry.file_name().to_string_lossy().into_owned();
        let pid = other
            .strip_prefix(exe)
            .and_then(|r| r.strip_prefix('.'))
            .and_then(|r| r.strip_suffix(".log"))
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The capture file a test process should use, as `tests/common` decides before main: the one
/// `TCPXR_LOG_FILE` names (a parent test's choice), none when it is set and empty (stderr), else
/// a fresh `target/<profile>/test-logs/<this executable>.<pid>.log`, which the caller names in
/// `TCPXR_LOG_FILE` (the library never writes the environment outside env.rs) so that the library
/// the tests dlopen, the TCPX emulator and the processes they start write there too. Returns the
/// file and whether it is fresh.
pub fn capture_file_for_tests() -> Option<(PathBuf, bool)> {
    match std::env::var_os(FILE_VAR) {
        Some(set) if set.is_empty() => None,
        Some(set) => Some((PathBuf::from(set), false)),
        None => {
            let path = default_path();
            prepare(&path);
            let _ = std::fs::remove_file(&path);
            Some((path, true))
        }
    }
}

/// Makes `path` (from [`capture_file_for_tests`]) this test process's capture file: the lines
/// [`expect`] and its kin claim, and those reported at exit.
pub fn capture_to(path: PathBuf) {
    start(path);
}

/// The library's own unit tests always capture (there is no constructor to start it in time, and
/// the file is theirs alone).
#[cfg(test)]
fn start_for_unit_tests() {
    if CAPTURE.get().is_none() {
        let path = default_path();
        prepare(&path);
        start(path);
    }
}

/// Makes `path` this process's capture file (the first call wins) and reports unclaimed WARN lines
/// at exit.
fn start(path: PathBuf) {
    let mut fresh = false;
    CAPTURE.get_or_init(|| {
        fresh = true;
        Capture {
            path,
            claims: Mutex::new(Claims::default()),
        }
    });
    if fresh {
        // SAFETY: atexit only records the function; `report_at_exit` takes no arguments, never
        // unwinds (it catches panics), and uses nothing that exit tears down before it runs.
        unsafe { libc::atexit(report_at_exit) };
    }
}

fn capture() -> &'static Capture {
    #[cfg(test)]
    start_for_unit_tests();
    CAPTURE
        .get()
        .expect("tcpxr's log is not captured in this process (tests/common's constructor, or TCPXR_LOG_FILE set empty)")
}

/// The complete lines of the capture file so far (a line still being written is left out).
fn read_lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete.lines().map(str::to_owned).collect()
}

/// Claims the first `n` unclaimed lines that contain `text` (waiting up to 10 s for them to be
/// written) and returns them; panics, showing the unclaimed lines, when they do not come.
pub fn expect_n(text: &str, n: usize) -> Vec<String> {
    expect_n_of(&[text], n)
}

/// Claims the first unclaimed line that contains any one of `texts` (for a failure whose words
/// depend on where it was seen first) and returns it (see [`expect_n`]).
pub fn expect_any(texts: &[&str]) -> String {
    expect_n_of(texts, 1).remove(0)
}

fn expect_n_of(texts: &[&str], n: usize) -> Vec<String> {
    let text = texts.join("\" or \"");
    let c = capture();
    let start = Instant::now();
    loop {
        let lines = read_lines(&c.path);
        {
            let mut claims = c.claims.lock().unwrap_or_else(|e| e.into_inner());
            let found: Vec<usize> = (0..lines.len())
                .filter(|i| !claims.lines.contains(i) && texts.iter().any(|t| lines[*i].contains(t)))
                .take(n)
                .collect();
            if found.len() == n {
                claims.lines.extend(&found);
                return found.into_iter().map(|i| lines[i].clone()).collect();
            }
        }
        if start.elapsed() > WAIT {
            let claims = c.claims.lock().unwrap_or_else(|e| e.into_inner());
            let unclaimed: Vec<&str> = (0..lines.len())
                .filter(|i| !claims.lines.contains(i))
                .map(|i| lines[i].as_str())
                .collect();
            panic!(
                "expected {n} line(s) containing \"{text}\" in tcpxr's log ({}); its unclaimed lines:\n{}",
                c.path.display(),
                unclaimed.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Claims the first unclaimed line that contains `text` and returns it (see [`expect_n`]).
pub fn expect(text: &str) -> String {
    expect_n(text, 1).remove(0)
}

/// Claims every unclaimed line written so far that contains `text`; returns them (none is not an
/// error).
pub fn claim_all(text: &str) -> Vec<String> {
    let c = capture();
    let lines = read_lines(&c.path);
    let mut claims = c.claims.lock().unwrap_or_else(|e| e.into_inner());
    let found: Vec<usize> = (0..lines.len())
        .filter(|i| !claims.lines.contains(i) && lines[*i].contains(text))
        .collect();
    claims.lines.extend(&found);
    found.into_iter().map(|i| lines[i].clone()).collect()
}

/// Claims every line that contains `text`, those written so far and those to come: for WARNs a
/// test provokes a varying number of times.
pub fn allow(text: &str) {
    let c = capture();
    c.claims
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .allowed
        .push(text.to_owned());
}

/// Whether a log line is a warning or an error: env_logger's `[time WARN  target]` or
/// `[time ERROR target]` header, or the TCPX emulator's `[tcpx-emu WARN]`.
fn is_warning(line: &str) -> bool {
    line.strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .is_some_and(|(head, _)| head.contains(" WARN") || head.contains(" ERROR"))
}

/// The warnings in `lines` that are neither claimed nor allowed.
fn unclaimed_warnings(lines: &[String], claims: &Claims) -> Vec<String> {
    (0..lines.len())
        .filter(|i| !claims.lines.contains(i))
        .map(|i| &lines[i])
        .filter(|l| is_warning(l) && !claims.allowed.iter().any(|a| l.contains(a.as_str())))
        .cloned()
        .collect()
}

extern "C" fn report_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        let Some(c) = CAPTURE.get() else { return };
        let lines = read_lines(&c.path);
        let claims = c.claims.lock().unwrap_or_else(|e| e.into_inner());
        let left = unclaimed_warnings(&lines, &claims);
        if !left.is_empty() {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(
                err,
                "tcpxr log: {} WARN line(s) that no test expected ({}):",
                left.len(),
                c.path.display()
            );
            for l in left {
                let _ = writeln!(err, "  {l}");
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_told_from_other_lines() {
        assert!(is_warning(
            "[2026-11-27T01:13:35Z WARN  nccl_net_tcpxr::export::guard] test: x"
        ));
        assert!(is_warning("[2026-11-27T01:13:35Z ERROR tcpxr] x"));
        assert!(is_warning("[tcpx-emu WARN] NET/tcpx-emu : isend: mhandle is null"));
        assert!(!is_warning("[2026-11-27T01:13:35Z INFO  tcpxr::init] WARN in the text"));
        assert!(!is_warning("continuation of a record, WARN"));
    }

    #[test]
    fn only_unclaimed_and_unallowed_warnings_are_reported() {
        let lines: Vec<String> = [
            "[t WARN  a] claimed",
            "[t WARN  a] allowed: retrying",
            "[t INFO  a] not a warning",
            "[t WARN  a] nobody asked for this",
        ]
        .map(String::from)
        .to_vec();
        let claims = Claims {
            lines: HashSet::from([0]),
            allowed: vec!["retrying".into()],
        };
        assert_eq!(
            unclaimed_warnings(&lines, &claims),
            vec!["[t WARN  a] nobody asked for this".to_string()]
        );
    }

    #[test]
    fn a_provoked_warn_is_claimed_once() {
        let mark = format!("testlog self-check {:?}", std::thread::current().id());
        crate::log::install_fallback();
        log::warn!("{mark}: first");
        log::warn!("{mark}: second");
        assert!(expect(&mark).ends_with("first"));
        assert!(expect(&mark).ends_with("second"));
        assert!(claim_all(&mark).is_empty(), "each line is claimed once");
    }
}
