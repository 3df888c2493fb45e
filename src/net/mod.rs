//! TCP helpers below the engine and the transports: what the engine's control connection and
//! handshake, the socket transport's stripes and the tcpx transport's device list all need. They
//! use nothing of tcpxr's but `error`.
//!
//! * `sys`: the few libc socket calls std lacks (non-blocking connect, socket options, gathered
//!   `sendmsg` / scattered `recvmsg`);
//! * `addr`: a socket address in the 20 bytes handles carry it in;
//! * `conn`: a connection's direction, and the NCCL error a failed send or receive on it is;
//! * `acceptor`: a listener that reads fixed-size hellos without blocking, so that strangers
//!   cannot hold up a real peer;
//! * `ifaces`: interfaces (getifaddrs), NCCL_SOCKET_IFNAME-style selection, sysfs facts;
//! * [`nonce`](mod@nonce): a fresh random 64-bit value, for the handle's nonce, stripe tokens and connect
//!   tickets.
pub mod acceptor;
pub mod addr;
pub mod conn;
pub mod ifaces;
mod nonce;
pub mod sys;

pub use nonce::nonce;
