//! tcpxr's name, as its net and tuner tables give it to NCCL (NCCL matches NCCL_NET against the
//! net's) and as the tcpx transport recognises tcpxr itself among the libraries it could load.
//! Beside every layer, so that no layer reaches up to another for it.
use std::ffi::CStr;

/// The name, NUL-terminated, for the C tables.
pub const NAME_C: &CStr = c"tcpxr";

/// The name as Rust text.
pub const NAME: &str = match std::str::from_utf8(NAME_C.to_bytes()) {
    Ok(name) => name,
    Err(_) => panic!("tcpxr's name is ASCII"),
};
