//! Logical connections. One NCCL connection = one control connection (tcpxr's own TCP socket,
//! carrying the handshake and a header per message) + N stripes of the inner transport carrying the
//! payload in chunks.
//!
//! * `setup`: listen, the non-blocking connect and accept state machines, the handshake.
//! * `nics`: which transport device carries each stripe (several for a fused NIC).
//! * `comm`: what both sides share (the object NCCL holds, the common state, the progress pass).
//! * `send` / `recv`: posting messages, progress, completion.
//! * `striper`: chunking, round-robin over stripes, windows.
//! * `ctrl`, `wire`, `requests`: the control socket, the byte formats, the request handles.
//! * `memory`: regMr'd ranges, registered with every stripe.
//! * `ring`, `arena`: NCCL's device unpack, and the socket's bounce memory it reads from.
mod answer;
pub mod arena;
mod comm;
mod ctrl;
pub mod lanes;
pub mod memory;
pub mod nics;
mod posted;
pub mod profile;
pub mod recv;
pub mod requests;
pub mod ring;
pub mod send;
pub mod setup;
pub mod stage;
pub mod stall;
pub mod striper;
pub mod wire;

pub use recv::RecvComm;
pub use send::SendComm;
pub use setup::{Connecting, ListenComm};

/// First field of every comm object handed to NCCL, so the boundary can check what a `void*`
/// really is before using it.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommTag {
    Listen = 0x4c52_5854, // "TXRL"
    Send = 0x5352_5854,   // "TXRS"
    Recv = 0x5252_5854,   // "TXRR"
}

/// Per-comm settings taken from the configuration when the comm is made.
#[derive(Clone, Copy, Debug)]
pub struct Tuning {
    pub send_window: usize,
    pub recv_window: usize,
    /// Sending: messages up to this size always travel inline on the control connection.
    pub inline_bytes: usize,
    /// Sending: messages up to this size also travel inline when at most one other message is in
    /// flight on the comm and the posting thread has no other such message out (see send.rs,
    /// `goes_inline` and `IdleInline`).
    pub inline_idle_bytes: usize,
    /// Receiving: the largest inline payload this side takes (announced in the listen handle).
    pub inline_accept: usize,
    /// Requests NCCL may keep outstanding on this comm (8 for the v5/v6 tables, 32 after).
    pub max_requests: usize,
    pub handshake_timeout: std::time::Duration,
    /// Keepalive and TCP_USER_TIMEOUT budget of the control connection (NCCL_TCPXR_PEER_TIMEOUT_MS),
    /// as the socket transport's stripes have it.
    pub peer_timeout_ms: u64,
    /// Log this comm's counters when it closes (NCCL_TCPXR_STATS).
    pub stats: bool,
    /// Seconds without progress before a stall report (NCCL_TCPXR_STALL_SECONDS; 0: off).
    pub stall_seconds: u64,
    /// Sending side: NCCL's traffic class for the communicator (v10+), the IP TOS byte of the
    /// control connection and the socket stripes; None: the system's default.
    pub traffic_class: Option<u8>,
}

/// Per-comm counters, logged at close when NCCL_TCPXR_STATS=1.
#[derive(Debug)]
pub struct Stats {
    pub opened: std::time::Instant,
    pub messages: u64,
    pub bytes: u64,
    pub inline_messages: u64,
}

impl Stats {
    pub fn new() -> Self {
        Stats {
            opened: std::time::Instant::now(),
            messages: 0,
            bytes: 0,
            inline_messages: 0,
        }
    }

    pub fn count(&mut self, size: usize, inline: bool) {
        self.messages += 1;
        self.bytes += size as u64;
        self.inline_messages += inline as u64;
    }

    /// One INFO line: totals, then per stripe its bytes, chunks, I/O busy time, how many chunks
    /// were already queued on it when each was posted and its hand-offs to the I/O pool with
    /// their average wait for a worker, then window stalls.
    pub fn report(&self, what: &str, stripes: &striper::StripeCounts) {
        let secs = self.opened.elapsed().as_secs_f64();
        let per: Vec<String> = (0..stripes.bytes.len())
            .map(|i| {
                let mb = stripes.bytes[i] as f64 / 1e6;
                let busy = match stripes.io_nanos.get(i).copied().flatten() {
                    Some(ns) => format!(" {:.0}% busy", 100.0 * ns as f64 / 1e9 / secs.max(1e-9)),
                    None => String::new(),
                };
                let queued = match (stripes.queued_sum.get(i), stripes.queued_max.get(i)) {
                    (Some(&sum), Some(&max)) if stripes.chunks[i] > 0 => {
                        format!(
                            ", queued ahead avg {:.1} max {max}",
                            sum as f64 / stripes.chunks[i] as f64
                        )
                    }
                    _ => String::new(),
                };
                let handoffs = match stripes.handoffs.get(i).copied().flatten() {
                    Some((n, ns)) if n > 0 => {
                        format!(", {n} hand-offs waited avg {:.1} us", ns as f64 / n as f64 / 1e3)
                    }
                    _ => String::new(),
                };
                format!(
                    "s{i} {mb:.1} MB in {} chunks{busy}{queued}{handoffs}",
                    stripes.chunks[i]
                )
            })
            .collect();
        log::info!(
            "stats {what}: {} messages ({} inline), {:.1} MB in {secs:.2} s; stripes {}; window stalls {}",
            self.messages,
            self.inline_messages,
            self.bytes as f64 / 1e6,
            per.join(", "),
            stripes.stalls
        );
    }
}

impl Default for Stats {
    fn default() -> Self {
        Self::new()
    }
}

/// Largest message tcpxr accepts: test() reports sizes as C `int`.
pub const MAX_MESSAGE_BYTES: usize = i32::MAX as usize;
