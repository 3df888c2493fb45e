//! What a newcomer runs first: the bench talks over loopback and leaves nothing in the directory
//! it runs in, and its soak checks every byte while resident memory, threads and descriptors stay
//! put.
mod common;
use std::process::{Output, Stdio};

/// The bench with the environment a user's shell gives it: no interface named.
fn bench(args: &[&str], dir: &std::path::Path) -> Output {
    bench_with(args, dir, &[])
}

/// The bench as [`bench`], with `env` set as well.
fn bench_with(args: &[&str], dir: &std::path::Path, env: &[(&str, &str)]) -> Output {
    common::bench_command()
        .args(args)
        .current_dir(dir)
        .env_remove("NCCL_TCPXR_IFNAME")
        .env_remove("NCCL_SOCKET_IFNAME")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run tcpxr-bench")
}

/// The bench's standard output, once it has exited 0 (else the test fails with both outputs).
fn bench_ok(args: &[&str], dir: &std::path::Path) -> String {
    bench_ok_with(args, dir, &[])
}

/// [`bench_ok`] with `env` set as well.
fn bench_ok_with(args: &[&str], dir: &std::path::Path, env: &[(&str, &str)]) -> String {
    let out = bench_with(args, dir, env);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{args:?}: {stdout}{stderr}");
    stdout.into_owned()
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
    let stdout = bench_ok(&["--sizes", "64K", "--stripes", "1", "--seconds", "0.05"], &dir);
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
    let stdout = bench_ok(
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

#[test]
fn the_ring_runs_a_process_per_rank_checks_the_bytes_and_reports_every_rank_beside_tcp() {
    let dir = empty_dir("ring");
    let stdout = bench_ok(&["ring", "--ranks", "3", "--size", "64K", "--seconds", "0.2"], &dir);
    // "   tcpxr     1     0.48    0.122    0.030    0.25       1.96        1"
    let rows = |path: &str| -> Vec<Vec<f64>> {
        stdout
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(path) && l.split_whitespace().count() == 8)
            .map(|l| {
                l.split_whitespace()
                    .skip(1)
                    .map(|w| w.parse().unwrap_or(f64::NAN))
                    .collect()
            })
            .collect()
    };
    let tcpxr = rows("tcpxr");
    assert_eq!(tcpxr.len(), 4, "three ranks and the ring:\n{stdout}");
    for (i, row) in tcpxr.iter().enumerate() {
        assert_eq!(row.len(), 7, "{row:?}\n{stdout}");
        if i < 3 {
            assert_eq!(row[0], i as f64, "{stdout}");
        } else {
            assert!(row[0].is_nan(), "the ring's row is \"all\":\n{stdout}");
        }
        // GB/s, seconds, CPU s, cores, GB/s per core: all measured.
        assert!(row[1..6].iter().all(|v| *v > 0.0), "{row:?}\n{stdout}");
    }
    let tcp: Vec<&str> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("tcp x") && l.split_whitespace().count() == 9)
        .collect();
    assert_eq!(tcp.len(), 4, "the plain TCP ring, three ranks and the ring:\n{stdout}");
    assert!(stdout.contains("tcpxr / tcp x"), "{stdout}");
    assert!(
        stdout.contains("verified: every rank's first round") && stdout.contains("byte for byte"),
        "{stdout}"
    );
    for column in ["tcpxr:", "tcp x", "GB/s/core:", "getrusage"] {
        assert!(
            stdout.contains(column),
            "how {column} was measured is not said:\n{stdout}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert!(left.is_empty(), "the bench left {left:?} behind");
    let _ = std::fs::remove_dir_all(&dir);
}

/// NCCL's shape at bulk: several channels, each its own connection; and the ceiling, the best of
/// several plain TCP rings.
#[test]
fn the_ring_over_several_channels_checks_every_channel_and_names_the_best_tcp_ring_its_ceiling() {
    let dir = empty_dir("ring-channels");
    let args = [
        "ring",
        "--ranks",
        "2",
        "--channels",
        "3",
        "--inflight",
        "2",
        "--size",
        "64K",
        "--seconds",
        "0.2",
        "--tcp-connections",
        "1,2",
    ];
    let stdout = bench_ok(&args, &dir);
    assert!(
        stdout.contains("3 channel(s) each way with 2 in flight on each"),
        "{stdout}"
    );
    assert!(
        stdout.contains("tcpxr (6 messages per rank)"),
        "every channel's first round is checked:\n{stdout}"
    );
    let gbps = |label: &str| -> f64 {
        let row = stdout
            .lines()
            .find(|l| {
                l.trim_start().starts_with(label) && l.split_whitespace().nth(label.split(' ').count()) == Some("all")
            })
            .unwrap_or_else(|| panic!("no {label:?} ring row:\n{stdout}"));
        row.split_whitespace()
            .nth(label.split(' ').count() + 1)
            .unwrap()
            .parse()
            .unwrap()
    };
    // The bench ranks the rings before rounding, so two rings that print the same GB/s may
    // either be named: the check is that the named one prints the best figure and quotes it.
    let best_gbps = gbps("tcp x1").max(gbps("tcp x2"));
    let ceiling = stdout
        .lines()
        .find_map(|l| l.strip_prefix("ceiling (the best plain TCP ring): "))
        .unwrap_or_else(|| panic!("no ceiling line:\n{stdout}"));
    let named = ["tcp x1", "tcp x2"]
        .into_iter()
        .find(|ring| ceiling.starts_with(&format!("{ring}, ")))
        .unwrap_or_else(|| panic!("the ceiling names no TCP ring:\n{stdout}"));
    assert_eq!(gbps(named), best_gbps, "the ceiling is the faster TCP ring:\n{stdout}");
    assert!(
        ceiling.starts_with(&format!("{named}, {best_gbps:.2} GB/s")),
        "the ceiling quotes its ring's GB/s:\n{stdout}"
    );
    assert!(gbps("tcpxr") > 0.0, "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_ring_refuses_bad_options_with_a_message_and_exit_code_2() {
    let dir = std::env::temp_dir();
    for (args, named) in [
        (&["ring", "--ranks", "1"][..], "--ranks"),
        (&["ring", "--size", "0"], "--size"),
        (&["ring", "--inflight", "0"], "--inflight"),
        (&["ring", "--seconds", "0"], "--seconds"),
        (&["ring", "--size", "1G", "--inflight", "2"], "--inflight"),
        (&["ring", "--channels", "0"], "--channels"),
        (&["ring", "--channels", "33"], "--channels"),
        (&["ring", "--size", "64M", "--channels", "4"], "--channels"),
        (&["ring", "--tcp-connections", "4,0"], "--tcp-connections"),
        (&["ring", "--tcp-connections", ""], "--tcp-connections"),
        (&["ring", "--bogus"], "--bogus"),
        (&["ring", "--no-baseline=1"], "--no-baseline"),
    ] {
        let out = bench(args, &dir);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(named) && out.stdout.is_empty(), "{args:?}: {err}");
    }
}

/// `latency --ahead 8`: with eight receives posted on each side, as NCCL's proxy posts them, the
/// ping-pong completes, inline (8 B) and striped (256 KiB) alike: each receive is reported done
/// once its own message is in, whatever the receives behind it still wait for.
#[test]
fn latency_with_receives_posted_ahead_completes_every_round_trip() {
    for (size, bytes) in [("8", 8), ("256K", 256 << 10)] {
        let dir = empty_dir(&format!("latency-ahead-{size}"));
        let stdout = bench_ok(&["latency", "--ahead", "8", "--size", size, "--iters", "200"], &dir);
        assert!(
            stdout.lines().any(|l| l
                .trim_start()
                .starts_with(&format!("tcpxr: one-way latency, {bytes} B messages, 200 round trips"))),
            "{stdout}"
        );
    }
}

/// A message larger than the sockets' buffers hold: the bench's last sends and receives are
/// tested together, so neither side's send waits on a receive that only its peer's test would
/// move (with 256 KiB buffers each side's last 16 MiB send waited for the other's until the
/// peer timeout, 5 s, and the bench failed with ncclRemoteError).
#[test]
fn latency_of_messages_larger_than_the_socket_buffers_ends_without_waiting_on_the_peer() {
    let dir = empty_dir("latency-small-buffers");
    let stdout = bench_ok_with(
        &["latency", "--size", "16M", "--iters", "2", "--ahead", "2"],
        &dir,
        &[
            ("NCCL_TCPXR_SOCKET_SNDBUF", "256K"),
            ("NCCL_TCPXR_SOCKET_RCVBUF", "256K"),
            ("NCCL_TCPXR_PEER_TIMEOUT_MS", "2000"),
        ],
    );
    assert!(
        stdout.contains("tcpxr: one-way latency, 16777216 B messages, 2 round trips"),
        "{stdout}"
    );
}

/// `latency --rma`: the net's ping-pong, plain TCP's and a put with a strong signal each way
/// through the RMA table, whose bytes the bench checks landed (it exits 1 if not); each line
/// names its path and gives a median no smaller than its minimum. At 4 KiB and at 16 MiB, more
/// than a socket buffer takes at once (the plain-TCP baseline once gave up there).
#[test]
fn latency_with_rma_reports_the_rma_ping_pong_beside_the_net_and_tcp() {
    for (size, bytes, iters) in [("4K", 4096, 300), ("16M", 16 << 20, 4)] {
        let dir = empty_dir(&format!("latency-rma-{size}"));
        let stdout = bench_ok(
            &["latency", "--rma", "--size", size, "--iters", &iters.to_string()],
            &dir,
        );
        for path in ["tcpxr", "plain TCP", "tcpxr RMA"] {
            let line = stdout
                .lines()
                .find(|l| {
                    l.trim_start().starts_with(&format!(
                        "{path}: one-way latency, {bytes} B messages, {iters} round trips"
                    ))
                })
                .unwrap_or_else(|| panic!("no {path} line:\n{stdout}"));
            let num = |key: &str| -> f64 {
                let at = line.find(key).unwrap_or_else(|| panic!("{key} in {line}")) + key.len();
                line[at..].split_whitespace().next().unwrap().parse().unwrap()
            };
            let (median, min) = (num("median "), num("min "));
            assert!(min > 0.0 && median >= min, "{line}");
        }
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "the bench wrote into its directory"
        );
    }
}
