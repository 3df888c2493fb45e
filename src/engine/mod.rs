//! Logical connections. One NCCL connection = one control connection (tcpxr's own TCP socket,
//! carrying the handshake and a header per message) + N stripes of the inner transport carrying the
//! payload in chunks.
//!
//! * `setup`: listen, the non-blocking connect and accept state machines, the handshake.
//! * `nics`: which transport device carries each stripe (several for a fused NIC).
//! * `comm`: what both sides share (the object NCCL holds, the common state, the progress pass).
//! * `send` / `recv`: posting messages, progress, completion.
//! * `cut`: how finely a host message below the chunk is cut (the idle and spread rules).
//! * `striper`: chunking, round-robin over stripes, windows.
//! * `ctrl`, `wire`, `requests`: the control socket, the byte formats, the request handles.
//! * `headers`: a receive comm's reading of message headers (and small payloads with them).
//! * `liveness`: a sending comm's look at its control connection when its stripes' transport does
//!   not report a receiver that is gone (TCPX).
//! * `memory`: regMr'd ranges, registered with every stripe.
//! * `ring`, `arena`, `copy_in`: NCCL's device unpack, the socket's bounce memory it reads from,
//!   and the copy engine that places large receives from there instead.
mod answer;
pub mod arena;
mod comm;
pub mod company;
mod copy_in;
mod ctrl;
pub mod cut;
mod headers;
pub mod lanes;
pub mod liveness;
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
mod stats;
pub mod striper;
pub mod wire;

pub use recv::RecvComm;
pub use send::SendComm;
pub use setup::{Connecting, ListenComm};
pub use stats::Stats;

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
    /// flight on the comm and the posting thread's other such messages allow it (send.rs,
    /// `goes_inline`; `mid_rule`).
    pub inline_idle_bytes: usize,
    /// Sending: which of the posting thread's other mid-sized messages keep such a message off
    /// the control connection (company.rs; point-to-point connections: any, and company).
    pub mid_rule: company::Rule,
    /// Sending: host-memory messages striped while the comm is not streaming (the test of
    /// `inline_idle_bytes`) are cut into chunks of this size when it is below the comm's, so that
    /// the stripes move one latency-bound message in parallel (cut.rs, `idle_chunk`); 0: never.
    pub idle_chunk_bytes: usize,
    /// Sending: how a host-memory message below the comm's chunk is spread over the stripes while
    /// few connections of the process move data (cut.rs, `Spread`), on a connection `idle_chunk_bytes`
    /// does not cover (0).
    pub spread: cut::Spread,
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

/// Largest message tcpxr accepts: test() reports sizes as C `int`.
pub const MAX_MESSAGE_BYTES: usize = i32::MAX as usize;
