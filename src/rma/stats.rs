//! A group's counters (NCCL_TCPXR_STATS=1), logged at INFO when NCCL closes the group: where the
//! time of a one-sided operation goes, split at the line between tcpxr and NCCL.
//!
//! * tcpxr's time: from the call that posts a request (iput, iputSignal, iget) until tcpxr marks it
//!   done (its bytes are in the socket, or landed, or its GPU copies have run);
//! * NCCL's time: from then until NCCL's `test` sees it done, which is how often NCCL's proxy
//!   tests;
//! * the longest gap between NCCL's calls into the group while work was outstanding: a proxy that
//!   calls rarely delays every landing and every signal, whatever tcpxr does;
//! * GPU staging (counted by stage.rs, whose GPU calls cost far more than a clock read): how long
//!   stream work (copies, signal kernels) took to be seen complete, and how often landing found
//!   every staging buffer in use.
//!
//! Off, the group holds none (`Option<Stats>`), and requests carry no times.
use super::stage::Stager;
use std::time::{Duration, Instant};

/// Count, sum and maximum of a duration.
#[derive(Default)]
pub struct Spread {
    n: u64,
    sum: Duration,
    max: Duration,
}

impl Spread {
    pub fn add(&mut self, d: Duration) {
        self.n += 1;
        self.sum += d;
        self.max = self.max.max(d);
    }

    /// "N, mean X us, max Y us" (or "none").
    fn show(&self) -> String {
        if self.n == 0 {
            return "none".into();
        }
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        format!(
            "{}, mean {:.1} us, max {:.1} us",
            self.n,
            us(self.sum) / self.n as f64,
            us(self.max)
        )
    }
}

#[derive(Default)]
pub struct Stats {
    puts: u64,
    gets: u64,
    signals_out: u64,
    bytes_out: u64,
    puts_in: u64,
    bytes_in: u64,
    signals_in: u64,
    /// Post until tcpxr marked the request done.
    tcpxr_time: Spread,
    /// Done until NCCL's test saw it.
    nccl_time: Spread,
    /// Between NCCL's calls into the group while requests or GPU work were outstanding.
    gaps: Spread,
    last_call: Option<Instant>,
}

impl Stats {
    /// A call from NCCL into the group; `busy`: work was outstanding since the previous call.
    pub fn call(&mut self, busy: bool) {
        let now = Instant::now();
        if let (true, Some(last)) = (busy, self.last_call) {
            self.gaps.add(now - last);
        }
        self.last_call = Some(now);
    }

    pub fn posted(&mut self, bytes: u64, signal: bool, get: bool) {
        if get {
            self.gets += 1;
        } else {
            self.puts += 1;
            self.bytes_out += bytes;
            self.signals_out += u64::from(signal);
        }
    }

    pub fn arrived(&mut self, bytes: u64, signal: bool) {
        self.puts_in += 1;
        self.bytes_in += bytes;
        self.signals_in += u64::from(signal);
    }

    /// A request NCCL's test saw done: posted at `posted`, marked done at `done`.
    pub fn tested(&mut self, posted: Instant, done: Instant) {
        self.tcpxr_time.add(done - posted);
        self.nccl_time.add(done.elapsed());
    }

    /// The INFO line for the group's close, with the GPU staging's counters where it has any.
    pub fn report(&self, rank: usize, nranks: usize, staging: Option<&Stager>) -> String {
        let gpu = match staging {
            Some(s) => format!(
                "; GPU stream work until seen complete: {}; landings that waited for a staging buffer: {}",
                s.work.show(),
                s.waits
            ),
            None => String::new(),
        };
        format!(
            "RMA stats, rank {rank} of {nranks}: sent {} puts ({} bytes, {} with a signal) and {} gets; \
             received {} puts ({} bytes, {} signals); requests until tcpxr was done: {}; \
             then until NCCL's test saw it: {}; gaps between NCCL's calls while work was outstanding: {}{gpu}",
            self.puts,
            self.bytes_out,
            self.signals_out,
            self.gets,
            self.puts_in,
            self.bytes_in,
            self.signals_in,
            self.tcpxr_time.show(),
            self.nccl_time.show(),
            self.gaps.show(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_a_requests_time_at_the_moment_tcpxr_marked_it_done() {
        let mut s = Stats::default();
        let posted = Instant::now() - Duration::from_millis(30);
        let done = Instant::now() - Duration::from_millis(10);
        s.tested(posted, done);
        assert!(
            (19..=21).contains(&s.tcpxr_time.max.as_millis()),
            "{:?}",
            s.tcpxr_time.max
        );
        assert!(s.nccl_time.max >= Duration::from_millis(10));
        let line = s.report(0, 2, None);
        assert!(line.contains("requests until tcpxr was done: 1, mean 2"), "{line}");
    }

    #[test]
    fn gaps_count_only_while_work_was_outstanding() {
        let mut s = Stats::default();
        s.call(false);
        std::thread::sleep(Duration::from_millis(5));
        s.call(false);
        assert_eq!(s.gaps.n, 0);
        std::thread::sleep(Duration::from_millis(5));
        s.call(true);
        assert_eq!(s.gaps.n, 1);
        assert!(s.gaps.max >= Duration::from_millis(5));
        assert!(s.report(1, 2, None).contains("received 0 puts"));
    }
}
