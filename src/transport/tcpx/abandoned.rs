//! Connects tcpxr abandoned while TCPX's connect was under way: TCPX's connect cannot be
//! cancelled, so each is called again at later sweeps until TCPX returns its comm (closed then)
//! or fails, and given up with one WARN past a deadline or at the last finalize.
use super::ffi::Lib;
use crate::transport::{InnerHandle, INNER_HANDLE_BYTES};
use std::time::{Duration, Instant};

/// How long an abandoned TCPX connect is called again before tcpxr gives up on it. TCPX's own
/// connect fails by itself against a host that answers nothing: each of its sockets is connected
/// with a refused connection retried for 20 s and a timed-out one 3 times (misc/socket_utils.cc),
/// each try up to the kernel's SYN timeout (about 2 minutes at Linux's default 6 SYN retries), so
/// about 6.5 minutes at most. What is still under way well past that never ends: a peer that took
/// the connection and then went silent leaves TCPX's connect thread in a receive without timeout
/// or keepalive. Ten minutes is past the first with room to spare.
const GIVE_UP_AFTER: Duration = Duration::from_secs(600);

/// How long the last finalize calls abandoned connects again before it gives up on the rest
/// ([`Transport::drain`]): nothing sweeps after it, and a finalize must not hang. A connect whose
/// peer is tearing down too ends at once (its listener is closed, or its accept answered).
///
/// [`Transport::drain`]: crate::transport::Transport::drain
pub(super) const FINAL_SWEEP: Duration = Duration::from_secs(2);

/// Set in a test's environment (milliseconds), replaces [`GIVE_UP_AFTER`], so a test can see an
/// abandoned connect given up. Never set in production.
pub const TEST_GIVE_UP_MS: &str = "TCPXR_TEST_TCPX_GIVE_UP_MS";

/// TCPX connects tcpxr dropped while TCPX's connect was under way (its device, and the handle
/// buffer TCPX keeps its state in). TCPX's connect cannot be cancelled: its thread goes on, and the
/// comm it makes (its sockets, and TCPX's memory) is freed only by closeSend once a connect call
/// has returned it. So each is called again at every sweep until TCPX returns the comm, which is
/// closed then, or fails (TCPX frees a failed connect's state itself), or until it has been under
/// way past the deadline ([`GIVE_UP_AFTER`]), or the last finalize ([`FINAL_SWEEP`]): then tcpxr
/// gives up on it with one WARN.
pub(super) struct Abandoned {
    list: std::sync::Mutex<Vec<AbandonedConnect>>,
    give_up_after: Duration,
    /// Numbers the abandoned connects, to name them in the log.
    count: std::sync::atomic::AtomicU64,
}

struct AbandonedConnect {
    number: u64,
    dev: usize,
    handle: Box<InnerHandle>,
    since: Instant,
}

impl Abandoned {
    pub(super) fn new() -> Abandoned {
        let test_ms = std::env::var(TEST_GIVE_UP_MS).ok().and_then(|v| v.trim().parse().ok());
        Abandoned {
            list: std::sync::Mutex::new(Vec::new()),
            give_up_after: test_ms.map_or(GIVE_UP_AFTER, Duration::from_millis),
            count: Default::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<AbandonedConnect>> {
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn push(&self, dev: usize, handle: Box<InnerHandle>) {
        let number = self.count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        log::info!("abandoned TCPX connect #{number} (device {dev}) left under way: called again at later sweeps");
        self.lock().push(AbandonedConnect {
            number,
            dev,
            handle,
            since: Instant::now(),
        });
    }

    /// Calls each abandoned connect once; those under way past the deadline, or all when
    /// `give_up_all`, are given up.
    pub(super) fn sweep(&self, lib: &Lib, give_up_all: bool) {
        self.lock().retain_mut(|c| match lib.connect(c.dev, &mut c.handle) {
            Ok(None) if give_up_all || c.since.elapsed() > self.give_up_after => {
                let when = if give_up_all {
                    "at the last finalize"
                } else {
                    "past its deadline"
                };
                c.give_up(when);
                false
            }
            Ok(None) => true,
            Ok(Some(comm)) => {
                match lib.close_send(comm) {
                    Ok(()) => log::info!(
                        "closed the TCPX comm of abandoned connect #{}, once TCPX returned it",
                        c.number
                    ),
                    Err(e) => log::warn!("closing the TCPX comm of abandoned connect #{}: {}", c.number, e.msg),
                }
                false
            }
            Err(e) => {
                log::info!("abandoned TCPX connect #{} ended: {}", c.number, e.msg);
                false
            }
        });
    }

    /// The last finalize: sweeps until the list is empty or [`FINAL_SWEEP`] has passed, then gives
    /// up on what is left. Nothing sweeps after it (NCCL unloads the plugin), so a comm TCPX
    /// returns later would never be closed.
    pub(super) fn drain(&self, lib: &Lib, within: Duration) {
        let start = Instant::now();
        loop {
            let last = start.elapsed() >= within;
            self.sweep(lib, last);
            if last || self.lock().is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl AbandonedConnect {
    /// Stops calling this connect. Its TCPX comm, if TCPX ever makes it, is leaked, with the
    /// thread and sockets TCPX keeps for it: TCPX hands a connect's comm out only through a
    /// connect call that returns it, and closeSend is the only way to free it, so nothing of it
    /// can be closed from here. The handle buffer is leaked too: TCPX keeps its connect state's
    /// address in it (connect_args), and though its 3.1.9 source gives its thread a copy of the
    /// handle, Google's binary builds are unverified; 128 bytes per give-up is the safe side.
    fn give_up(&mut self, when: &str) {
        log::warn!(
            "gave up on abandoned TCPX connect #{} (device {}) {when}, still under way after {:.1} s: \
             TCPX never returned its comm, which it may still make, with its thread and sockets: leaked",
            self.number,
            self.dev,
            self.since.elapsed().as_secs_f64()
        );
        std::mem::forget(std::mem::replace(&mut self.handle, Box::new([0; INNER_HANDLE_BYTES])));
    }
}
