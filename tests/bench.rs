//! What a newcomer runs first: the bench talks over loopback and leaves nothing in the directory
//! it runs in, and its soak checks every byte while resident memory, threads and descriptors stay
//! put.
mod common;
use std::process::{Output, Stdio};

/// The bench with the environment a user's shell gives it: no interface named.
fn bench(args: &[&str], dir: &std::path::Path) -> Output {
    common::bench_command()
        .args(args)
        .current_dir(dir)
        .env_remove("NCCL_TCPXR_IFNAME")
        .env_remove("NCCL_SOCKET_IFNAME")
        .stdin(Stdio::null())
        .output()
        .expect("run tcpxr-bench")
}

/// A fresh, empty directory for a bench run.
fn empty_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tcpxr-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_sweep_runs_over_loopback_says_how_it_measured_and_writes_nothing_unasked() {
    let dir = empty_dir("sweep");
    let out = bench(&["--sizes", "64K", "--stripes", "1", "--seconds", "0.05"], &dir);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("over NCCL_TCPXR_IFNAME=lo, which the bench sets"),
        "{stdout}"
    );
    for column in ["tcpxr xN:", "tcp x1:"] {
        assert!(
            stdout.contains(column),
            "how {column} was measured is not said:\n{stdout}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "the bench left {left:?} behind");
    let _ = std::fs::remove_dir_all(&dir);
    // An interface the user names is left alone.
    let named = common::bench_command()
        .args(["--sizes", "4K", "--stripes", "1", "--seconds", "0.02", "--no-baseline"])
        .env_remove("NCCL_TCPXR_IFNAME")
        .env("NCCL_SOCKET_IFNAME", "lo")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&named.stdout);
    assert!(
        named.status.success() && text.contains("over NCCL_SOCKET_IFNAME=lo;"),
        "{text}"
    );
}

#[test]
fn a_short_soak_verifies_every_message_and_keeps_threads_and_descriptors_flat() {
    let dir = empty_dir("soak");
    let out = bench(
        &[
            "soak",
            "--pairs",
            "3",
            "--inflight",
            "3",
            "--max-size",
            "2M",
            "--seconds",
            "3",
            "--report",
            "1",
        ],
        &dir,
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    let samples: Vec<&str> = stdout.lines().filter(|l| l.contains(" messages, ")).collect();
    assert!(samples.len() >= 3, "a sample a second:\n{stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("soak OK: ") && last.contains("every byte verified"),
        "{stdout}"
    );
    // "soak OK: 3 s, 1234 messages (...), ... threads 5 -> 5 (range 5-5), fds 50 -> 50 (...)"
    let words_after = |word: &str| -> Vec<u64> {
        let rest = last
            .split_once(word)
            .unwrap_or_else(|| panic!("no {word:?} in {last}"))
            .1;
        rest.split_whitespace().take(3).filter_map(|w| w.parse().ok()).collect()
    };
    let messages = words_after(" s, ")[0];
    assert!(messages > 30, "{last}");
    // Threads and descriptors, first sample -> last: they do not grow while traffic flows.
    for what in ["threads ", "fds "] {
        let v = words_after(what);
        assert!(v.len() == 2 && v[0] == v[1], "{what}{v:?}: {last}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_soak_refuses_bad_options_with_a_message_and_exit_code_2() {
    let dir = std::env::temp_dir();
    for (args, named) in [
        (&["soak", "--pairs", "0"][..], "--pairs"),
        (&["soak", "--max-size", "0"], "--max-size"),
        (&["soak", "--seconds", "-1"], "-1"),
        (&["soak", "--bogus"], "--bogus"),
    ] {
        let out = bench(args, &dir);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(named) && out.stdout.is_empty(), "{args:?}: {err}");
    }
}
