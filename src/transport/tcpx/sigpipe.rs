//! SIGPIPE around calls into TCPX, which sends on its sockets without MSG_NOSIGNAL: a send on a
//! connection its peer reset raises SIGPIPE on the sending thread, whose default action ends the
//! process (Python ignores it; a C++ program such as nccl-tests does not). tcpxr never changes the
//! process's signal dispositions; it blocks SIGPIPE in the mask of the threads that call TCPX. A
//! SIGPIPE raised on a thread that blocks it stays pending on that thread instead of ending the
//! process, the send fails with EPIPE, and TCPX reports the error; threads inherit their creator's
//! mask, so the threads TCPX starts during a call made with SIGPIPE blocked block it too.
//!
//! Who sends, in TCPX's source (3.1.9; net_tcpx.cc, connect.cc, ctrl_sock.h, rx_rule_client.cc):
//! * connect and accept start a thread each that connects and sends the connection state; accept's
//!   thread also sends flow-steering rules to the RxDM over a Unix socket;
//! * closeRecv sends the RxDM the rules to delete from the calling thread (its failure ignored);
//!   init may register the process with the RxDM from the calling thread;
//! * test sends the control messages of the active send request from the calling thread (kept and
//!   sent again at every test after a failed send, so the test after a reset sends on a reset
//!   socket: EPIPE, and SIGPIPE), and starts the comm's helper threads, which send the payload, at
//!   the first chunk each gets (enqueueTask): any test may do either.
//!
//! So two guards:
//! * [`Scoped`], around the control-path calls (init, connect, accept, closes): SIGPIPE blocked for
//!   the call, a SIGPIPE the call raised on this thread taken (sigtimedwait) before the thread's
//!   mask is put back as it was. Three or four syscalls, off the data path; the threads TCPX starts
//!   inside keep SIGPIPE blocked for their lives.
//! * [`hold_for_data_path`], before every data-path call (isend, irecv, test, irecvConsumed): the
//!   first one on a thread blocks SIGPIPE in that thread for the rest of its life, and the calls
//!   after it cost a thread-local read, no syscall; TCPX's helper threads, started inside test,
//!   inherit it. NCCL makes these calls from its proxy thread, whose own sockets send with
//!   MSG_NOSIGNAL, so for it the block changes nothing but TCPX's SIGPIPE. A SIGPIPE left pending
//!   there is taken when a data-path call fails ([`after_data_path_failure`]): every failed send of
//!   the calling thread makes TCPX's call fail, and the pending signal would otherwise end the
//!   process the day something unblocked it. A thread that blocked SIGPIPE before tcpxr saw it keeps
//!   its mask and its pending signals untouched (they may be its own, for sigwait).
use std::cell::Cell;

/// Whether this thread blocks SIGPIPE for the data path, and whose block it is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    /// No data-path call on this thread yet.
    No,
    /// tcpxr blocked it ([`hold_for_data_path`]).
    Ours,
    /// The thread blocked it before tcpxr looked.
    Theirs,
}

thread_local! {
    static HELD: Cell<Held> = const { Cell::new(Held::No) };
}

fn sigpipe_only() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set it is given; sigaddset adds a valid signal to it.
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        set
    }
}

/// Blocks SIGPIPE in this thread; true when it was not blocked before (the block is ours).
fn block() -> bool {
    let set = sigpipe_only();
    // SAFETY: an all-zero sigset_t is a valid (empty) set for pthread_sigmask to overwrite.
    let mut old = unsafe { std::mem::zeroed::<libc::sigset_t>() };
    // SAFETY: both sets are valid; pthread_sigmask changes only the calling thread's mask.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old) };
    // SAFETY: `old` was written by pthread_sigmask.
    unsafe { libc::sigismember(&old, libc::SIGPIPE) != 1 }
}

fn unblock() {
    let set = sigpipe_only();
    // SAFETY: a valid set; only the calling thread's mask changes.
    unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
}

/// Takes a SIGPIPE pending on this thread (raised by a send of TCPX's while tcpxr blocked it), so
/// that unblocking it never delivers it.
fn take_pending() {
    // SAFETY: an all-zero sigset_t is a valid set for sigpending to overwrite.
    let mut pending = unsafe { std::mem::zeroed::<libc::sigset_t>() };
    // SAFETY: `pending` is a valid set; sigpending only writes it.
    if unsafe { libc::sigpending(&mut pending) } != 0 || unsafe { libc::sigismember(&pending, libc::SIGPIPE) } != 1 {
        return;
    }
    let set = sigpipe_only();
    let now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid set and timeout; with a zero timeout sigtimedwait returns at once, taking the
    // pending SIGPIPE (its siginfo is not wanted).
    unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &now) };
}

/// SIGPIPE blocked in this thread for one control-path call into TCPX (see the module's
/// comment); dropping it takes a SIGPIPE the call raised here and puts the mask back.
pub struct Scoped {
    unblock: bool,
}

impl Scoped {
    pub fn new() -> Scoped {
        // A thread that holds it for the data path keeps holding it.
        let unblock = HELD.with(Cell::get) == Held::No && block();
        Scoped { unblock }
    }
}

impl Drop for Scoped {
    fn drop(&mut self) {
        if self.unblock {
            take_pending();
            unblock();
        } else if HELD.with(Cell::get) == Held::Ours {
            // closeRecv ignores a failed send to the RxDM: nothing else would take it.
            take_pending();
        }
    }
}

/// Before a data-path call into TCPX: the first on this thread blocks SIGPIPE here for good (see
/// the module's comment); later ones read a thread-local.
pub fn hold_for_data_path() {
    HELD.with(|h| {
        if h.get() == Held::No {
            h.set(if block() { Held::Ours } else { Held::Theirs });
        }
    });
}

/// After a data-path call into TCPX failed: takes the SIGPIPE its failed send may have left pending
/// on this thread, when the block is tcpxr's.
pub fn after_data_path_failure() {
    if HELD.with(Cell::get) == Held::Ours {
        take_pending();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocked_here() -> bool {
        // SAFETY: as in `block`, reading the mask only.
        let mut cur = unsafe { std::mem::zeroed::<libc::sigset_t>() };
        // SAFETY: a NULL new set only reads the calling thread's mask into `cur`.
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut cur) };
        // SAFETY: `cur` was written by pthread_sigmask.
        unsafe { libc::sigismember(&cur, libc::SIGPIPE) == 1 }
    }

    fn pending_here() -> bool {
        // SAFETY: as in `take_pending`.
        let mut pending = unsafe { std::mem::zeroed::<libc::sigset_t>() };
        // SAFETY: as in `take_pending`.
        unsafe { libc::sigpending(&mut pending) };
        // SAFETY: written by sigpending.
        unsafe { libc::sigismember(&pending, libc::SIGPIPE) == 1 }
    }

    fn raise_here() {
        // SAFETY: SIGPIPE directed at the calling thread, which blocks it (checked by callers).
        unsafe { libc::pthread_kill(libc::pthread_self(), libc::SIGPIPE) };
    }

    // Each runs on a fresh thread: the harness's threads keep their masks.
    #[test]
    fn a_scoped_guard_blocks_sigpipe_for_the_call_and_its_threads_and_takes_what_it_raised() {
        std::thread::spawn(|| {
            assert!(!blocked_here());
            {
                let _g = Scoped::new();
                assert!(blocked_here());
                raise_here();
                assert!(pending_here());
                // A thread started inside (as TCPX's connect and accept threads) keeps it blocked.
                assert!(std::thread::spawn(blocked_here).join().unwrap());
            }
            assert!(!pending_here(), "the SIGPIPE raised inside is still pending");
            assert!(!blocked_here(), "the mask is not back as it was");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_data_path_blocks_sigpipe_once_per_thread_and_a_failure_takes_what_it_raised() {
        std::thread::spawn(|| {
            hold_for_data_path();
            assert!(blocked_here());
            raise_here();
            after_data_path_failure();
            assert!(!pending_here());
            // A scoped guard on such a thread leaves the block in place.
            drop(Scoped::new());
            assert!(blocked_here());
            assert!(std::thread::spawn(blocked_here).join().unwrap());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_thread_that_blocked_sigpipe_itself_keeps_its_mask_and_its_pending_signal() {
        std::thread::spawn(|| {
            assert!(block());
            raise_here();
            drop(Scoped::new());
            hold_for_data_path();
            after_data_path_failure();
            assert!(blocked_here());
            assert!(pending_here(), "tcpxr took a SIGPIPE that was the thread's own");
            take_pending();
            unblock();
        })
        .join()
        .unwrap();
    }
}
