//! The host's cores as the I/O pool's auto size sees them: how many this process may use, and how
//! many tcpxr processes share them.
//!
//! Every process that opens the socket transport binds an abstract Unix socket named
//! `tcpxr.<pid>` ([`announce`]). The kernel lists it in /proc/net/unix, readable by every user, for
//! as long as the process lives and drops it when the process exits, however it exits; a plugin
//! NCCL unloads and loads again finds its name still held by the earlier load and counts once.
//! Processes in another network namespace (another container) are not seen: they count as hosts
//! of their own, as before.
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::sync::OnceLock;

const NAME_PREFIX: &str = "tcpxr.";

/// This process's name, held until it exits (None: the name was taken, by an earlier load of the
/// plugin in this process, or cannot be bound here).
static NAME: OnceLock<Option<UnixDatagram>> = OnceLock::new();

/// I/O threads of an auto-sized pool at most (measured best for bulk on 32 cores).
pub const MAX_AUTO_IO_THREADS: usize = 8;

/// Cores each process keeps busy with NCCL's own threads while data moves: NCCL's proxy thread
/// and the application's thread waiting on the GPU both poll.
const NCCL_CORES_PER_PROCESS: usize = 2;

/// Says this process uses the socket transport. Called at init, well before any pool starts: the
/// other ranks of a job on this host have called it by the time the first connection is made.
pub fn announce() {
    NAME.get_or_init(|| {
        let addr = SocketAddr::from_abstract_name(format!("{NAME_PREFIX}{}", std::process::id())).ok()?;
        UnixDatagram::bind_addr(&addr).ok()
    });
}

/// The I/O threads of an auto-sized pool, and why, for the log. A process alone on its cores
/// takes up to 8; processes sharing the host's cores split them, each leaving 2 for NCCL's own
/// threads. Measured (docs/BENCHMARKS.md section 28): two ranks on 16 cores with 6 threads each
/// ran NCCL all_reduce of 256 MiB - 1 GiB 1.05-1.3x faster than with 8 (16 I/O threads and 4
/// polling ones on 16 cores), 5 and 7 in between or slower.
pub fn auto_io_threads() -> (usize, String) {
    let cores = usable_cores();
    // A process held to part of the host (CPU affinity, a cgroup quota) was given its share.
    let held = cores < online_cores();
    let processes = if held {
        1
    } else {
        processes(&std::fs::read_to_string("/proc/net/unix").unwrap_or_default())
    };
    let threads = share(cores, processes);
    let why = if held {
        format!("auto: {cores} cores this process may use")
    } else {
        let plural = if processes == 1 { "" } else { "es" };
        format!("auto: {cores} cores, {processes} tcpxr process{plural} on this host")
    };
    (threads, why)
}

/// The auto pool size for `cores` shared by `processes` tcpxr processes.
fn share(cores: usize, processes: usize) -> usize {
    if processes <= 1 {
        cores.clamp(1, MAX_AUTO_IO_THREADS)
    } else {
        (cores / processes)
            .saturating_sub(NCCL_CORES_PER_PROCESS)
            .clamp(1, MAX_AUTO_IO_THREADS)
    }
}

/// Processes whose name is in `table` (the text of /proc/net/unix), this one included.
fn processes(table: &str) -> usize {
    // Columns: Num RefCount Protocol Flags Type St Inode Path; an abstract path starts with '@'.
    let mut pids: Vec<&str> = table
        .lines()
        .filter_map(|line| {
            line.split_whitespace()
                .nth(7)?
                .strip_prefix('@')?
                .strip_prefix(NAME_PREFIX)
        })
        .filter(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids.len().max(1)
}

/// The cores this process may use (its CPU affinity and cgroup quota, as the standard library
/// reads them), at least 1.
pub fn usable_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn online_cores() -> usize {
    // SAFETY: sysconf reads a system value and has no memory effects.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_alone_takes_up_to_eight_threads() {
        assert_eq!(share(2, 1), 2);
        assert_eq!(share(16, 1), 8);
        assert_eq!(share(208, 1), 8);
        assert_eq!(share(1, 0), 1);
    }

    #[test]
    fn processes_sharing_the_cores_split_them_and_leave_two_each_for_nccl() {
        // Two ranks on one 16-core host: the measured best.
        assert_eq!(share(16, 2), 6);
        // Eight ranks on an A3 (208 vCPUs): 26 each, still the cap.
        assert_eq!(share(208, 8), 8);
        // More processes than cores: one thread each, never none.
        assert_eq!(share(2, 2), 1);
        assert_eq!(share(4, 16), 1);
    }

    #[test]
    fn counts_each_process_once_from_proc_net_unix() {
        let table = "\
Num       RefCount Protocol Flags    Type St Inode Path
0000000000000000: 00000002 00000000 00000000 0002 01 1001 @tcpxr.4242
0000000000000000: 00000002 00000000 00000000 0002 01 1002 @tcpxr.4242
0000000000000000: 00000002 00000000 00000000 0002 01 1003 @tcpxr.77
0000000000000000: 00000002 00000000 00000000 0002 01 1004 @tcpxr.
0000000000000000: 00000002 00000000 00000000 0002 01 1005 @tcpxr.12x
0000000000000000: 00000002 00000000 00000000 0002 01 1006 /run/tcpxr.99
0000000000000000: 00000002 00000000 00000000 0001 01 1007 @other.5
0000000000000000: 00000003 00000000 00000000 0001 03 1008
";
        assert_eq!(processes(table), 2);
        assert_eq!(processes(""), 1);
    }

    #[test]
    fn an_announced_process_finds_itself() {
        announce();
        announce();
        let table = std::fs::read_to_string("/proc/net/unix").unwrap();
        let me = format!("@{NAME_PREFIX}{}", std::process::id());
        assert_eq!(
            table
                .lines()
                .filter(|l| l.split_whitespace().nth(7) == Some(me.as_str()))
                .count(),
            1
        );
        assert!(processes(&table) >= 1);
    }
}
