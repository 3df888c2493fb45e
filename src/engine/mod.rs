//! Logical connections. One NCCL connection = one control connection (tcpxr's own TCP socket,
//! carrying the handshake and a header per message) + N stripes of the inner transport carrying the
//! payload in chunks.
//!
//! * `setup`: listen, the non-blocking connect and accept state machines, the handshake.
//! * `send` / `recv`: posting messages, progress, completion.
//! * `striper`: chunking, round-robin over stripes, windows.
//! * `ctrl`, `wire`, `requests`: the control socket, the byte formats, the request handles.
mod ctrl;
pub mod recv;
pub mod requests;
pub mod send;
pub mod setup;
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
    pub inline_bytes: usize,
    /// Requests NCCL may keep outstanding on this comm (8 for the v5/v6 tables, 32 after).
    pub max_requests: usize,
    pub handshake_timeout: std::time::Duration,
}

/// Largest message tcpxr accepts: test() reports sizes as C `int`.
pub const MAX_MESSAGE_BYTES: usize = i32::MAX as usize;
