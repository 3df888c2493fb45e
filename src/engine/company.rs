//! Which of NCCL's thread's mid-sized messages go inline.
//!
//! A mid-sized message (a host message above NCCL_TCPXR_INLINE_BYTES, within the idle limit,
//! posted on a comm with at most one other message out: `send::goes_inline`'s `WhileIdle`) may go
//! inline, as one socket write from NCCL's thread. NCCL's proxy thread serves every connection of
//! its communicator and copies each inline payload itself, on both sides, and posts its next
//! message only after that copy; so two mid-sized messages the thread has out at once are never
//! both inline. Which one goes depends on the connection ([`Rule`]):
//! - a point-to-point one's: none while the thread's messages come in company. A sendrecv of
//!   256 KiB is a 128 KiB message on each of two channels, NCCL's whole transfer, and with the
//!   first inline the second's post waits for its copy. Once two were out at once, the thread's
//!   messages are striped until one travels alone from post to end, so that in steady state both
//!   of a pair are striped and the I/O pool moves their pieces at once. Runs 409-411 (one H200,
//!   ranks under MPS, NCCL 2.28.3, medians of 3-4 passes, against main): sendrecv of 256 KiB took
//!   0.77-0.80 of main's time at 2 ranks (0.73-0.84 in every pass) and 0.88-0.96 at 4, while a
//!   lone 128 KiB message stayed inline (docs/BENCHMARKS.md, "Sendrecv's pairs").
//! - a collective's: the first, unless another of the thread's is inline. Striping every message
//!   in company there too (run 409) moved all_reduce of 16 KiB-2 MiB no more than two libraries
//!   making the same choices did (runs 410-411).
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Which other messages of the thread keep a mid-sized message off the control connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Collectives' connections: another one inline.
    OneInline,
    /// Point-to-point connections: any other out, or company beside the last one to finish.
    Alone,
}

/// One thread's mid-sized messages.
#[derive(Default)]
struct Mids {
    /// Posted and not yet done.
    out: AtomicUsize,
    /// Of those, inline.
    inline_out: AtomicUsize,
    /// Posted in all, so a message can tell whether another followed it.
    posted: AtomicU64,
    /// The last mid-sized message to finish had company: one was out beside it.
    company: AtomicBool,
}

thread_local! {
    // Shared with the messages, which may be finished or dropped on another thread (a close).
    static MIDS: Arc<Mids> = Arc::default();
}

/// A mid-sized message out, from its post until it is done or dropped.
pub(crate) struct MidSized {
    mids: Arc<Mids>,
    /// The thread's count of posts, this one included, when it was posted.
    nth: u64,
    /// No other mid-sized message of the thread was out when it was posted.
    alone: bool,
    /// Whether it goes inline, decided at its post.
    inline: bool,
}

impl MidSized {
    /// Counts a mid-sized message out on the calling thread and decides, under `rule`, whether
    /// it goes inline.
    pub(crate) fn post(rule: Rule) -> MidSized {
        let mids = MIDS.with(Arc::clone);
        let others = mids.out.fetch_add(1, Ordering::AcqRel);
        let nth = mids.posted.fetch_add(1, Ordering::AcqRel) + 1;
        let alone = others == 0;
        if !alone {
            mids.company.store(true, Ordering::Release);
        }
        let inline = match rule {
            Rule::OneInline => mids.inline_out.load(Ordering::Acquire) == 0,
            Rule::Alone => alone && !mids.company.load(Ordering::Acquire),
        };
        if inline {
            mids.inline_out.fetch_add(1, Ordering::AcqRel);
        }
        MidSized {
            mids,
            nth,
            alone,
            inline,
        }
    }

    /// Whether it goes inline, as decided when it was posted.
    pub(crate) fn inline(&self) -> bool {
        self.inline
    }
}

impl Drop for MidSized {
    fn drop(&mut self) {
        let m = &self.mids;
        m.out.fetch_sub(1, Ordering::AcqRel);
        if self.inline {
            m.inline_out.fetch_sub(1, Ordering::AcqRel);
        }
        // Alone from its post to its end: none was out when it was posted, none posted since.
        if self.alone && m.posted.load(Ordering::Acquire) == self.nth {
            m.company.store(false, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{MidSized, Rule};

    #[test]
    fn lone_messages_go_inline_one_after_another() {
        for _ in 0..3 {
            let m = MidSized::post(Rule::Alone);
            assert!(m.inline());
        }
    }

    #[test]
    fn a_pair_is_company_until_a_message_travels_alone() {
        // The first of the first pair goes inline: nothing was out and nothing was company yet.
        let a = MidSized::post(Rule::Alone);
        let b = MidSized::post(Rule::Alone);
        assert!(a.inline() && !b.inline(), "the second is company");
        drop(a);
        drop(b);
        // Steady state: the thread's pairs stay striped whole.
        for _ in 0..3 {
            let a = MidSized::post(Rule::Alone);
            assert!(!a.inline(), "the last message to finish had company");
            let b = MidSized::post(Rule::Alone);
            assert!(!b.inline());
            drop(b);
            drop(a);
        }
        // One message alone from post to end (striped, after the company) clears it.
        let lone = MidSized::post(Rule::Alone);
        assert!(!lone.inline());
        drop(lone);
        assert!(MidSized::post(Rule::Alone).inline());
    }

    #[test]
    fn each_thread_keeps_its_own_company() {
        let a = MidSized::post(Rule::Alone);
        let other = std::thread::spawn(|| MidSized::post(Rule::Alone).inline())
            .join()
            .unwrap();
        assert!(other, "another communicator's proxy thread is alone");
        assert!(a.inline());
        // Dropped on another thread (a comm closed there), it still counts for its own.
        std::thread::spawn(move || drop(a)).join().unwrap();
        assert!(MidSized::post(Rule::Alone).inline());
    }

    #[test]
    fn on_a_collectives_connection_one_inline_at_a_time() {
        let a = MidSized::post(Rule::OneInline);
        let b = MidSized::post(Rule::OneInline);
        assert!(
            a.inline() && !b.inline(),
            "the thread would copy the two one after the other"
        );
        drop(a);
        // The first is done: the next goes inline though the second is still out.
        let c = MidSized::post(Rule::OneInline);
        assert!(c.inline());
        // That company still counts for a point-to-point connection on the same thread.
        drop(c);
        assert!(!MidSized::post(Rule::Alone).inline());
        drop(b);
    }
}
