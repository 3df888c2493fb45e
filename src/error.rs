//! The error type every layer returns: an NCCL result code plus a message that says what was wrong.
use crate::abi::ncclResult_t;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: ncclResult_t,
    pub msg: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn new(code: ncclResult_t, msg: impl Into<String>) -> Self {
        Error { code, msg: msg.into() }
    }
    /// NCCL (or the caller of the C API) used the plugin in a way its contract forbids.
    pub fn internal(msg: impl Into<String>) -> Self {
        Self::new(ncclResult_t::ncclInternalError, msg)
    }
    /// A system call or library call failed.
    pub fn system(msg: impl Into<String>) -> Self {
        Self::new(ncclResult_t::ncclSystemError, msg)
    }
    /// The peer went away or broke the protocol.
    pub fn remote(msg: impl Into<String>) -> Self {
        Self::new(ncclResult_t::ncclRemoteError, msg)
    }
    /// The application's usage is wrong (e.g. a message larger than the posted receive).
    pub fn invalid_usage(msg: impl Into<String>) -> Self {
        Self::new(ncclResult_t::ncclInvalidUsage, msg)
    }
    pub fn invalid_argument(msg: impl Into<String>) -> Self {
        Self::new(ncclResult_t::ncclInvalidArgument, msg)
    }
    /// Wrap an OS error with what was being done.
    pub fn os(what: &str, err: std::io::Error) -> Self {
        Self::system(format!("{what}: {err}"))
    }
    pub fn context(mut self, what: &str) -> Self {
        self.msg = format!("{what}: {}", self.msg);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:?})", self.msg, self.code)
    }
}

impl std::error::Error for Error {}
