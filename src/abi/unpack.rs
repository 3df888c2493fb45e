//! NCCL's unpack ABI (`src/device/network/unpack/unpack_defs.h`), used with
//! `NCCL_NET_DEVICE_UNPACK`: the plugin lands received data in a bounce buffer and fills
//! `netUnpackMeta` with page descriptors that NCCL's device kernels use to copy it into place.

use std::os::raw::c_void;

/// Queue slots in `netUnpackMeta` (one per outstanding receive request).
pub const NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH: usize = 16;
/// Largest slice one irecv may carry on the unpack path (4 MiB).
pub const NET_UNPACK_MAX_SLICE_SIZE: usize = 4194304;
/// Granularity of the bounce buffer pages.
pub const SLICE_PAGE_SIZE: usize = 4096;
/// Descriptors per queue slot: 4 MiB / 4096 * 2 (NCCL doubles it for slack).
pub const NET_UNPACK_MAX_SLICE_PAGES: usize = NET_UNPACK_MAX_SLICE_SIZE / SLICE_PAGE_SIZE * 2;

/// `union loadMeta`: one contiguous piece, `len` bytes copied from `bounce_buf + src_off` to the
/// receive buffer of the slice at `dst_off`. In C it is a 16-byte-aligned union with a
/// `uint64_t r64[2]` view; only the struct view is mirrored here.
#[repr(C, align(16))]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct loadMeta {
    pub src_off: u32,
    pub len: u32,
    pub dst_off: u64,
}

/// `struct netUnpackMeta`: the descriptor queue shared with the device (524,416 bytes). It lives in
/// mapped memory and is never moved by value, so it derives no traits.
#[repr(C)]
pub struct netUnpackMeta {
    pub mem: [[loadMeta; NET_UNPACK_MAX_SLICE_PAGES]; NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH],
    /// Number of valid `mem` entries per queue slot.
    pub cnt: [u64; NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH],
}

/// `struct unpackNetDeviceHandle`: what `ncclNetDeviceHandle_v7_t::handle` points to for
/// `NCCL_NET_DEVICE_UNPACK`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct unpackNetDeviceHandle {
    /// Device-mapped pointer to the descriptor queue.
    pub meta: *mut netUnpackMeta,
    /// Device pointer to the bounce buffer the descriptors' `src_off` index into.
    pub bounce_buf: *mut c_void,
    pub head: u64,
}
