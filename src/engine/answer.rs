//! Answers the hellos that reach listen comms without waiting for NCCL's accept.
//!
//! NCCL 2.12, the oldest caller of the v5 table, sets up a ring's connections in one order on every
//! rank: each send side's connect, waited for to the end, then the receive sides' accepts. A
//! connect completes only when the peer's listener has answered its hello with the welcome (the
//! peer's stripe handles). Were the welcome sent only from accept, every rank would wait in its
//! connect for a peer waiting in its own. So a thread of this module answers each listen comm's
//! hello as it arrives; the connector then connects its stripes, which wait in the listeners'
//! backlogs until accept takes them. NCCL 2.13 and later call accept while connects are under
//! way, where this only answers sooner.
//!
//! One thread per process while a listen comm waits for its hello: it looks at them every 200 us
//! and stops when none waits. A listen comm that closes while the thread runs stops and joins it
//! if it was the last, so no thread of the library outlives its comms (NCCL may unload the
//! library right after). Each thread has a generation: a thread whose generation is not the
//! current one stops at its next look, so a close never waits on a thread that new listens keep
//! busy.
use super::setup::ListenState;
use std::sync::{Arc, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the thread sleeps between looks at the waiting listen comms.
const LOOK_EVERY: Duration = Duration::from_micros(200);

struct Shared {
    waiting: Vec<Weak<Mutex<ListenState>>>,
    /// The generation of the thread that should run (0: none should).
    current: u64,
    generations: u64,
    thread: Option<JoinHandle<()>>,
}

static SHARED: Mutex<Shared> = Mutex::new(Shared {
    waiting: Vec::new(),
    current: 0,
    generations: 0,
    thread: None,
});

fn shared() -> std::sync::MutexGuard<'static, Shared> {
    SHARED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Has the thread answer `listen`'s hello when it arrives, starting the thread if none runs.
pub(super) fn watch(listen: &Arc<Mutex<ListenState>>) {
    let old = {
        let mut s = shared();
        s.waiting.push(Arc::downgrade(listen));
        if s.current != 0 {
            return;
        }
        s.generations += 1;
        let generation = s.generations;
        s.current = generation;
        let old = s.thread.take();
        match std::thread::Builder::new()
            .name("tcpxr-answer".into())
            .spawn(move || run(generation))
        {
            Ok(t) => s.thread = Some(t),
            // Without the thread, accept answers the hello itself (enough for NCCL 2.13+).
            Err(e) => {
                s.current = 0;
                log::warn!("tcpxr cannot start its thread that answers connections before accept: {e}");
            }
        }
        old
    };
    // A thread of an earlier generation has been told to stop; it exits at its next look.
    if let Some(t) = old {
        let _ = t.join();
    }
}

/// A listen comm closes: when no other waits, the thread stops, and is joined here.
pub(super) fn forget(listen: &Arc<Mutex<ListenState>>) {
    let thread = {
        let mut s = shared();
        let gone = Arc::downgrade(listen);
        s.waiting.retain(|w| w.strong_count() > 0 && !w.ptr_eq(&gone));
        if !s.waiting.is_empty() {
            return;
        }
        s.current = 0;
        s.thread.take()
    };
    if let Some(t) = thread {
        let _ = t.join();
    }
}

fn run(generation: u64) {
    loop {
        std::thread::sleep(LOOK_EVERY);
        let waiting = {
            let mut s = shared();
            s.waiting.retain(|w| w.strong_count() > 0);
            if s.current != generation {
                return;
            }
            if s.waiting.is_empty() {
                s.current = 0;
                return;
            }
            s.waiting.clone()
        };
        let mut done = Vec::new();
        for w in &waiting {
            let Some(listen) = w.upgrade() else { continue };
            // A listen comm NCCL is accepting on right now answers its own hello.
            let Ok(mut st) = listen.try_lock() else { continue };
            if st.answer() {
                done.push(w.clone());
            }
        }
        if !done.is_empty() {
            shared().waiting.retain(|w| !done.iter().any(|d| d.ptr_eq(w)));
        }
    }
}
