//! tcpxr: an NCCL network plugin that cuts messages into chunks and stripes each connection over
//! several inner connections (tcpxr's own TCP, or Google's GPUDirect-TCPX).
//!
//! Layers, top to bottom (each uses only those below it); docs/ARCHITECTURE.md has the data flow:
//! `export` (the C tables) -> `plugin` (core API, with `devices`: physical and fused, and
//! `nccl_settings`: the NCCL settings it gives) -> `engine` (logical connections) ->
//! `transport` (inner nets) -> `net` (TCP helpers the engine and both transports share); beside
//! them `abi`, `config`, `settings` (every auto rule, and the effective value of each setting),
//! `env` (the one place the process environment is written), `log` (and `testlog`, where test
//! processes send it), `error`,
//! `capi`, `tuner` (the NCCL tuner exported from the same library, under `export`, reading
//! `plugin`'s state) and `rma` (the RMA backend exported beside the net: one-sided puts, signals
//! and gets for NCCL's device API, over its own connections, on `net`).
#![deny(unsafe_op_in_unsafe_fn)]
// The crate's docs are read as developers' docs (`cargo doc --document-private-items`, which CI
// builds with warnings denied): public items may name the private ones that explain them.
#![allow(rustdoc::private_intra_doc_links)]

pub mod abi;
pub mod capi;
pub mod config;
pub mod devices;
pub mod engine;
mod env;
pub mod error;
pub mod export;
pub mod gpu;
pub mod log;
pub mod name;
pub mod nccl_settings;
pub mod net;
pub mod plugin;
pub mod rma;
pub mod settings;
pub mod testlog;
pub mod transport;
pub mod tuner;
