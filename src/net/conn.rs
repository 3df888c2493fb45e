//! The two directions of a TCP connection, and what a failed send or receive on one means for
//! NCCL: the same rule for the engine's control connection and the socket transport's stripes.
use crate::error::Error;
use std::io::ErrorKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Send,
    Recv,
}

/// The error of a failed send or receive on the connection `what` names ("stripe", "control
/// connection"): a peer that closed, reset or timed out is the peer's problem (ncclRemoteError);
/// anything else is a local system error.
pub fn error(what: &str, dir: Direction, e: std::io::Error) -> Error {
    let op = if dir == Direction::Send { "send" } else { "receive" };
    let remote = matches!(
        e.kind(),
        ErrorKind::UnexpectedEof
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::BrokenPipe
            | ErrorKind::TimedOut
            | ErrorKind::NotConnected
    ) || e.raw_os_error() == Some(libc::EHOSTUNREACH)
        || e.raw_os_error() == Some(libc::ENETUNREACH);
    if remote {
        Error::remote(format!("{what} {op} failed, peer gone: {e}"))
    } else {
        Error::system(format!("{what} {op} failed: {e}"))
    }
}
