//! The messages NCCL has posted on one comm and not yet seen complete, in posting order, each
//! named by one of the comm's request slots. The send and the receive side keep their own message
//! type in it; this is where slots are taken and given back and where finished messages retire.
use super::requests::{Kind, Requests};
use crate::error::{Error, Result};
use std::collections::VecDeque;
use std::ffi::c_void;

/// Where a posted message stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Not yet reported done: NCCL tests it.
    Live,
    /// Reported done, its request still named by NCCL until `irecvConsumed` (device unpack).
    Held,
    /// Reported (and released): its slot is free; it retires once older messages have.
    Done,
}

struct Entry<M> {
    msg: M,
    slot: u32,
    state: State,
    posted_at: std::time::Instant,
}

pub struct Posted<M> {
    entries: VecDeque<Entry<M>>,
    /// Sequence number of `entries[0]` and of the next message to be posted.
    front_seq: u64,
    next_seq: u64,
    /// The message each request slot names, by sequence number.
    slot_seq: Vec<u64>,
    requests: Requests,
    kind: Kind,
    /// Messages ever reported done (held or released), kept as a count because the stall watch
    /// asks on every progress pass.
    reported: u64,
}

impl<M> Posted<M> {
    pub fn new(max_requests: usize, kind: Kind) -> Self {
        Posted {
            entries: VecDeque::with_capacity(max_requests),
            front_seq: 0,
            next_seq: 0,
            slot_seq: vec![0; max_requests],
            requests: Requests::new(max_requests, kind),
            kind,
            reported: 0,
        }
    }

    /// Points the request handles at their comm once it has its final address.
    pub fn set_owner(&mut self, owner: *const c_void) {
        self.requests.set_owner(owner);
    }

    /// Sequence number of the oldest message not yet retired (the next one posted when none is).
    pub fn front_seq(&self) -> u64 {
        self.front_seq
    }

    /// Sequence number the next posted message gets.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Posts a message; returns NCCL's request handle for it, or None when every slot is in use.
    pub fn post(&mut self, msg: M) -> Option<*mut c_void> {
        let slot = self.requests.take()?;
        self.slot_seq[slot as usize] = self.next_seq;
        self.next_seq += 1;
        self.entries.push_back(Entry {
            msg,
            slot,
            state: State::Live,
            posted_at: std::time::Instant::now(),
        });
        Some(self.requests.ptr(slot))
    }

    /// Messages holding a request slot: posted and not yet reported done, or reported and held.
    pub fn outstanding(&self) -> usize {
        self.requests.in_use()
    }

    /// How long each message not yet reported done has been posted, oldest first (stall report).
    pub fn waiting(&self) -> Vec<std::time::Duration> {
        self.entries
            .iter()
            .filter(|e| e.state == State::Live)
            .map(|e| e.posted_at.elapsed())
            .collect()
    }

    /// Messages posted and not yet reported done.
    pub fn live(&self) -> usize {
        (self.next_seq - self.reported) as usize
    }

    /// Messages reported done so far (grows with every completion).
    pub fn reported(&self) -> u64 {
        self.reported
    }

    /// Messages posted and not yet retired: not reported, held, or reported behind an older one.
    pub fn unretired(&self) -> usize {
        self.entries.len()
    }

    /// How many request slots there are.
    pub fn capacity(&self) -> usize {
        self.slot_seq.len()
    }

    /// The request slot naming message `seq`, which must be posted and not retired.
    pub fn slot_of(&self, seq: u64) -> u32 {
        self.entries[(seq - self.front_seq) as usize].slot
    }

    /// The message with sequence number `seq`, which must be posted and not retired.
    pub fn get_mut(&mut self, seq: u64) -> &mut M {
        &mut self.entries[(seq - self.front_seq) as usize].msg
    }

    /// The sequence number of request `slot`'s message, or an error when NCCL tests a request that
    /// is not outstanding (already reported done, or never handed out).
    pub fn seq_of(&self, slot: u32) -> Result<u64> {
        self.seq_in(slot, State::Live).ok_or_else(|| {
            let what = if self.kind == Kind::Send { "send" } else { "receive" };
            Error::internal(format!("test on a {what} request that is not outstanding"))
        })
    }

    /// The sequence number of the held message request `slot` names, or an error when it names
    /// none (never reported done, already consumed, or never handed out).
    pub fn held_seq_of(&self, slot: u32) -> Result<u64> {
        self.seq_in(slot, State::Held)
            .ok_or_else(|| Error::internal("irecvConsumed of a request that is not a completed, unconsumed receive"))
    }

    fn seq_in(&self, slot: u32, state: State) -> Option<u64> {
        let seq = *self.slot_seq.get(slot as usize)?;
        let i = seq.checked_sub(self.front_seq)?;
        let e = self.entries.get(i as usize)?;
        (e.slot == slot && e.state == state).then_some(seq)
    }

    /// The oldest message still held (reported, not yet released), if any.
    pub fn oldest_held(&self) -> Option<u64> {
        let i = self.entries.iter().position(|e| e.state == State::Held)?;
        Some(self.front_seq + i as u64)
    }

    /// Records that message `seq` was reported done: its slot is free again, and finished messages
    /// at the front retire (later messages keep their place until then).
    pub fn complete(&mut self, seq: u64) {
        self.hold(seq);
        self.release(seq);
    }

    /// Records that message `seq` was reported done while NCCL keeps naming its request (until
    /// `irecvConsumed`): the slot stays taken.
    pub fn hold(&mut self, seq: u64) {
        let e = &mut self.entries[(seq - self.front_seq) as usize];
        if e.state == State::Live {
            self.reported += 1;
        }
        e.state = State::Held;
    }

    /// Releases held message `seq`: its slot is free again and finished messages retire.
    pub fn release(&mut self, seq: u64) {
        let e = &mut self.entries[(seq - self.front_seq) as usize];
        e.state = State::Done;
        self.requests.give_back(e.slot);
        while self.entries.front().is_some_and(|e| e.state == State::Done) {
            self.entries.pop_front();
            self.front_seq += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_name_messages_until_reported_and_retire_in_order() {
        let mut p: Posted<&str> = Posted::new(2, Kind::Send);
        let a = p.post("a").unwrap();
        assert_eq!(p.outstanding(), 1);
        let b = p.post("b").unwrap();
        assert_eq!(p.outstanding(), 2);
        assert!(p.post("c").is_none(), "two slots, two messages");
        assert_ne!(a, b);
        assert_eq!((p.seq_of(0).unwrap(), p.seq_of(1).unwrap()), (0, 1));
        // The newer finishes first: its slot comes back, the older keeps its place.
        p.complete(1);
        assert_eq!(
            p.outstanding(),
            1,
            "reported, though not yet retired behind the older one"
        );
        assert!(p.seq_of(1).is_err());
        assert_eq!(*p.get_mut(0), "a");
        p.post("c").unwrap();
        assert_eq!(*p.get_mut(2), "c");
        p.complete(0);
        p.complete(2);
        assert!(p.seq_of(0).is_err());
        assert_eq!(p.next_seq(), 3);
        assert!(p.post("d").is_some() && p.post("e").is_some());
    }

    #[test]
    fn a_held_message_keeps_its_slot_and_is_named_for_consume_only() {
        let mut p: Posted<&str> = Posted::new(2, Kind::Recv);
        p.post("a").unwrap();
        p.post("b").unwrap();
        p.hold(0);
        assert!(p.seq_of(0).is_err(), "reported: NCCL must not test it again");
        assert_eq!(p.held_seq_of(0).unwrap(), 0);
        assert!(p.held_seq_of(1).is_err(), "not reported yet");
        assert!(p.post("c").is_none(), "the held message keeps its slot");
        assert_eq!((p.outstanding(), p.unretired(), p.oldest_held()), (2, 2, Some(0)));
        p.release(0);
        assert!(p.held_seq_of(0).is_err());
        assert_eq!((p.outstanding(), p.unretired(), p.oldest_held()), (1, 1, None));
        assert!(p.post("c").is_some());
    }
}
