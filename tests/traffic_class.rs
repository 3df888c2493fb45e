//! What NCCL tells tcpxr per communicator. Its traffic class (ncclNetCommConfig_t, v10 connect and
//! v11+ init) becomes the IP TOS byte of every socket the sending side opens: the control
//! connection and each stripe, checked on the real sockets of this process after a real connect
//! over loopback. Its hints (setNetAttr, v11+) are taken on the communicator's context, and a
//! context or hint that is not NCCL's is refused.
mod common;
use common::*;
use nccl_net_tcpxr::abi::*;
use std::ffi::{c_int, c_void};

/// The stripes per connection in this process's configuration.
fn stripes() -> usize {
    nccl_net_tcpxr::config::Config::from_env().unwrap().stripes
}

/// The open IPv4 sockets of this process whose IP_TOS is `tos`.
fn sockets_with_tos(tos: u8) -> usize {
    let tos_of = |fd: c_int| {
        let mut value: c_int = 0;
        let mut len = std::mem::size_of::<c_int>() as libc::socklen_t;
        // SAFETY: a live int and its size; a fd that is not an IPv4 socket (or has closed since
        // the listing) only makes the call fail.
        let r = unsafe {
            libc::getsockopt(
                fd,
                libc::IPPROTO_IP,
                libc::IP_TOS,
                (&mut value as *mut c_int).cast(),
                &mut len,
            )
        };
        (r == 0).then_some(value)
    };
    socket_fds()
        .into_iter()
        .filter(|&fd| tos_of(fd) == Some(c_int::from(tos)))
        .count()
}

/// Connects and accepts until both sides are done; returns (send, recv).
fn connect_pair(
    mut connect: impl FnMut(&mut [u8; 128], &mut *mut c_void) -> R,
    mut accept: impl FnMut(&mut *mut c_void) -> R,
    handle: &mut [u8; 128],
) -> (*mut c_void, *mut c_void) {
    let (mut s, mut r): (*mut c_void, *mut c_void) = (std::ptr::null_mut(), std::ptr::null_mut());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.is_null() || r.is_null() {
        assert!(std::time::Instant::now() < deadline, "connect/accept did not complete");
        if s.is_null() {
            assert_eq!(connect(handle, &mut s), OK);
        }
        if r.is_null() {
            assert_eq!(accept(&mut r), OK);
        }
    }
    (s, r)
}

// Both tests open sockets of their own class and count them; they run in one process, so each
// uses its own TOS value.
#[test]
fn v12_the_communicators_traffic_class_marks_the_control_connection_and_every_stripe() {
    let t: &ncclNet_v12_t = table("ncclNetPlugin_v12");
    let mut ctx: *mut c_void = std::ptr::null_mut();
    let mut cfg = ncclNetCommConfig_v12_t { trafficClass: 0x60 };
    // SAFETY: as NCCL calls init: live out-pointers, NCCL's config, no logger or profiler.
    assert_eq!(unsafe { t.init.unwrap()(&mut ctx, 0x42, &mut cfg, None, None) }, OK);
    assert_eq!(sockets_with_tos(0x60), 0);
    let mut handle = [0u8; 128];
    let mut l: *mut c_void = std::ptr::null_mut();
    // SAFETY: the context init returned, a 128-byte handle, a live out-pointer.
    let r = unsafe { t.listen.unwrap()(ctx, 0, handle.as_mut_ptr().cast(), &mut l) };
    assert_eq!(r, OK);
    let (s, r) = connect_pair(
        |h, s| {
            let mut dh: *mut ncclNetDeviceHandle_v12_t = std::ptr::null_mut();
            // SAFETY: the communicator's context, the peer's handle (the same buffer every call).
            unsafe { t.connect.unwrap()(ctx, 0, h.as_mut_ptr().cast(), s, &mut dh) }
        },
        |r| {
            let mut dh: *mut ncclNetDeviceHandle_v12_t = std::ptr::null_mut();
            // SAFETY: the listen comm above and live out-pointers.
            unsafe { t.accept.unwrap()(l, r, &mut dh) }
        },
        &mut handle,
    );
    assert_eq!(
        sockets_with_tos(0x60),
        1 + stripes(),
        "control connection + stripes of the send comm"
    );
    // SAFETY: comms of this table, each closed once; then the context.
    unsafe {
        assert_eq!(t.closeSend.unwrap()(s), OK);
        assert_eq!(t.closeRecv.unwrap()(r), OK);
        assert_eq!(t.closeListen.unwrap()(l), OK);
        assert_eq!(t.finalize.unwrap()(ctx), OK);
    }
}

#[test]
fn v10_the_connect_configs_traffic_class_marks_the_send_comms_sockets() {
    let t: &ncclNet_v10_t = table("ncclNetPlugin_v10");
    // SAFETY: as NCCL calls init.
    assert_eq!(unsafe { t.init.unwrap()(None, None) }, OK);
    let mut handle = [0u8; 128];
    let mut l: *mut c_void = std::ptr::null_mut();
    // SAFETY: a 128-byte handle, a live out-pointer.
    assert_eq!(unsafe { t.listen.unwrap()(0, handle.as_mut_ptr().cast(), &mut l) }, OK);
    let mut cfg = ncclNetCommConfig_v10_t { trafficClass: 0x28 };
    let (s, r) = connect_pair(
        |h, s| {
            let mut dh: *mut ncclNetDeviceHandle_v10_t = std::ptr::null_mut();
            // SAFETY: NCCL's config, the peer's handle, live out-pointers.
            unsafe { t.connect.unwrap()(0, &mut cfg, h.as_mut_ptr().cast(), s, &mut dh) }
        },
        |r| {
            let mut dh: *mut ncclNetDeviceHandle_v10_t = std::ptr::null_mut();
            // SAFETY: the listen comm above and live out-pointers.
            unsafe { t.accept.unwrap()(l, r, &mut dh) }
        },
        &mut handle,
    );
    assert_eq!(sockets_with_tos(0x28), 1 + stripes());
    // SAFETY: comms of this table, each closed once.
    unsafe {
        assert_eq!(t.closeSend.unwrap()(s), OK);
        assert_eq!(t.closeRecv.unwrap()(r), OK);
        assert_eq!(t.closeListen.unwrap()(l), OK);
    }
}

#[test]
fn a_traffic_class_outside_0_255_is_an_invalid_argument() {
    let t12: &ncclNet_v12_t = table("ncclNetPlugin_v12");
    let mut ctx: *mut c_void = std::ptr::null_mut();
    let mut cfg = ncclNetCommConfig_v12_t { trafficClass: 256 };
    // SAFETY: as NCCL calls init.
    let r = unsafe { t12.init.unwrap()(&mut ctx, 1, &mut cfg, None, None) };
    assert_eq!(r, ncclResult_t::ncclInvalidArgument);
    assert!(ctx.is_null(), "no context for a refused init");
    expect_log("init (ncclNet v12): trafficClass 256: accepted -1 (unset) or 0-255");
    let t10: &ncclNet_v10_t = table("ncclNetPlugin_v10");
    let mut handle = [0u8; 128];
    let mut l: *mut c_void = std::ptr::null_mut();
    // SAFETY: as NCCL calls init and listen.
    unsafe {
        assert_eq!(t10.init.unwrap()(None, None), OK);
        assert_eq!(t10.listen.unwrap()(0, handle.as_mut_ptr().cast(), &mut l), OK);
    }
    let mut cfg = ncclNetCommConfig_v10_t { trafficClass: -2 };
    let mut s: *mut c_void = std::ptr::dangling_mut();
    let mut dh: *mut ncclNetDeviceHandle_v10_t = std::ptr::null_mut();
    // SAFETY: NCCL's config, the peer's handle, live out-pointers.
    let r = unsafe { t10.connect.unwrap()(0, &mut cfg, handle.as_mut_ptr().cast(), &mut s, &mut dh) };
    assert_eq!(r, ncclResult_t::ncclInvalidArgument);
    assert!(s.is_null(), "*sendComm is written even on an error");
    expect_log("connect (ncclNet v10): trafficClass -2: accepted -1 (unset) or 0-255");
    // SAFETY: the listen comm above, closed once.
    assert_eq!(unsafe { t10.closeListen.unwrap()(l) }, OK);
}

#[test]
fn hints_are_taken_on_the_communicators_context_and_bad_pointers_are_refused() {
    let t: &ncclNet_v12_t = table("ncclNetPlugin_v12");
    let mut ctx: *mut c_void = std::ptr::null_mut();
    // SAFETY: as NCCL calls init (no config).
    let r = unsafe { t.init.unwrap()(&mut ctx, 0x77, std::ptr::null_mut(), None, None) };
    assert_eq!(r, OK);
    let mut attr = net_attr(4, 1 << 4, 1 << 1, 1 << 2);
    let set = t.setNetAttr.unwrap();
    // SAFETY: the context init returned and a live attributes struct, as NCCL passes them; then
    // NULL and a buffer that is not a context, which tcpxr must refuse.
    unsafe {
        assert_eq!(set(ctx, &mut attr), OK);
        attr.op = 1 << 2;
        assert_eq!(set(ctx, &mut attr), OK);
        assert_eq!(set(ctx, std::ptr::null_mut()), ncclResult_t::ncclInvalidArgument);
        expect_log("setNetAttr (ncclNet v12): setNetAttr: netAttr is NULL");
        assert_eq!(set(std::ptr::null_mut(), &mut attr), ncclResult_t::ncclInvalidArgument);
        expect_log("setNetAttr (ncclNet v12): setNetAttr: ctx is NULL");
        let mut not_a_context = [0u64; 32];
        assert_eq!(
            set(not_a_context.as_mut_ptr().cast(), &mut attr),
            ncclResult_t::ncclInvalidArgument
        );
        expect_log("setNetAttr (ncclNet v12): setNetAttr: ctx is not a context tcpxr's init returned");
        assert_eq!(
            t.finalize.unwrap()(not_a_context.as_mut_ptr().cast()),
            ncclResult_t::ncclInvalidArgument
        );
        expect_log("finalize (ncclNet v12): finalize: ctx is not a context tcpxr's init returned");
        assert_eq!(t.finalize.unwrap()(ctx), OK);
    }
}
