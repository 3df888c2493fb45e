//! The inner transport: what tcpxr stripes one NCCL connection over.
//!
//! The contract mirrors what TCPX offers (reference/tcpx.md), so the engine drives every transport
//! the same way: requests complete in FIFO order per connection, only the oldest is tested, sizes are
//! tracked by the engine (never reported by the transport), and a transport may refuse a post when
//! its request slots are full (`Ok(false)`: retry later). Receives may hold their slot after
//! completion until `consumed` (TCPX's bounce pages); the socket transport releases at once.
use crate::error::Result;
use std::net::IpAddr;

pub mod socket;

/// Size of an inner connection handle carried over tcpxr's control connection (TCPX uses 128).
pub const INNER_HANDLE_BYTES: usize = 128;
pub type InnerHandle = [u8; INNER_HANDLE_BYTES];

/// One device as the transport sees it; the plugin turns it into NCCL properties.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub name: String,
    /// Address tcpxr's own control listener binds to for this device.
    pub ctrl_addr: IpAddr,
    pub pci_path: Option<String>,
    pub speed_mbps: i32,
    pub guid: u64,
}

pub trait Transport: Send + Sync {
    fn name(&self) -> &'static str;
    fn devices(&self) -> &[DeviceInfo];
    /// Opens one inner listener on `dev`; its handle goes to the peer over the control connection.
    fn listen(&self, dev: usize) -> Result<(InnerHandle, Box<dyn InnerListener>)>;
    /// Starts connecting to a peer's inner listener; never blocks.
    fn connect(&self, dev: usize, handle: &InnerHandle) -> Result<Box<dyn InnerConnector>>;
}

pub trait InnerListener: Send {
    /// Ok(None) until the peer's connection is established.
    fn accept(&mut self) -> Result<Option<Box<dyn InnerRecv>>>;
}

pub trait InnerConnector: Send {
    /// Ok(None) until the connection is established.
    fn poll(&mut self) -> Result<Option<Box<dyn InnerSend>>>;
}

/// The sending end of one stripe.
pub trait InnerSend: Send {
    /// Posts `len` bytes at `ptr`; the memory stays valid until the send completes.
    /// Ok(false): no request slot free now, try again later.
    fn post(&mut self, ptr: *const u8, len: usize) -> Result<bool>;
    /// Tests the oldest posted send; Ok(true) retires it.
    fn test_oldest(&mut self) -> Result<bool>;
}

/// The receiving end of one stripe.
pub trait InnerRecv: Send {
    /// Posts a receive of exactly `len` bytes into `ptr`. Ok(false): no slot free now.
    fn post(&mut self, ptr: *mut u8, len: usize) -> Result<bool>;
    /// Tests the oldest posted receive; Ok(true) when its bytes have landed. The slot stays held
    /// until `consumed`.
    fn test_oldest(&mut self) -> Result<bool>;
    /// Releases the oldest completed receive's slot (and, for TCPX, its bounce pages).
    fn consumed(&mut self) -> Result<()>;
}
