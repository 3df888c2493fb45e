//! tcpxr processes on one host share its cores: each names itself in /proc/net/unix for as long as
//! it lives, and an auto-sized I/O pool that starts beside another tcpxr process takes its share
//! of the cores (each process leaving 2 for NCCL's own threads) instead of up to 8 threads each.
mod common;
use common::*;
use std::time::{Duration, Instant};

/// The tcpxr processes /proc/net/unix lists now.
fn tcpxr_processes() -> Vec<u32> {
    let table = std::fs::read_to_string("/proc/net/unix").unwrap();
    let mut pids: Vec<u32> = table
        .lines()
        .filter_map(|l| l.split_whitespace().nth(7)?.strip_prefix("@tcpxr.")?.parse().ok())
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

#[test]
fn a_pool_started_beside_another_tcpxr_process_takes_its_share_of_the_cores() {
    let net = v12();
    assert_eq!(net.init(), OK);
    // The peer process inits tcpxr before it prints its handle; the connect below starts this
    // process's pool with its first stripe.
    let (mut child, _out, s) = recv_peer(&net, "64K");
    let child_pid = child.id();
    let listed = tcpxr_processes();
    assert!(
        listed.contains(&std::process::id()),
        "this process is not listed: {listed:?}"
    );
    assert!(
        listed.contains(&child_pid),
        "the peer process {child_pid} is not listed: {listed:?}"
    );

    let cores = std::thread::available_parallelism().unwrap().get();
    // SAFETY: sysconf reads a system value and has no memory effects.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) } as usize;
    let expected = if cores < online {
        cores.min(8) // held to part of the host: that part is its share
    } else {
        (cores / listed.len()).saturating_sub(2).clamp(1, 8)
    };
    // Each thread names itself once it runs: wait for them, then let any extra one show up too.
    let start = Instant::now();
    while threads_named("tcpxr-io") < expected && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        threads_named("tcpxr-io"),
        expected,
        "{cores} of {online} cores, tcpxr processes {listed:?}"
    );

    // The peer goes first: closed under it, its receive would fail (an error it would print).
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(net.close_send(s), OK);
    // The kernel drops a process's name when it exits, however it exits.
    let start = Instant::now();
    while tcpxr_processes().contains(&child_pid) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "the killed peer is still listed"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
