//! How many tcpxr processes share the host's cores, for the I/O pool's auto size (the rule, and
//! the cores this process may use, are crate::settings's).
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

/// Says this process uses the socket transport. Called at init, well before any pool starts: the
/// other ranks of a job on this host have called it by the time the first connection is made.
pub fn announce() {
    NAME.get_or_init(|| {
        let addr = SocketAddr::from_abstract_name(format!("{NAME_PREFIX}{}", std::process::id())).ok()?;
        UnixDatagram::bind_addr(&addr).ok()
    });
}

/// The tcpxr processes on the host now, this one included: the names in /proc/net/unix.
pub fn processes() -> usize {
    named(&std::fs::read_to_string("/proc/net/unix").unwrap_or_default())
}

/// Processes whose name is in `table` (the text of /proc/net/unix), this one included.
fn named(table: &str) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(named(table), 2);
        assert_eq!(named(""), 1);
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
        assert!(named(&table) >= 1);
    }
}
