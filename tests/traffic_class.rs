//! What NCCL tells tcpxr per communicator. Its traffic class (ncclNetCommConfig_t, v10 connect and
//! v11+ init) becomes the IP TOS byte of every socket the sending side opens: the control
//! connection and each stripe, checked on the real sockets of this process after a real connect
//! over loopback, and on the first packet of each of those connections, its SYN: the listening
//! sockets are told to keep the SYN that opened each connection (TCP_SAVE_SYN), and the receiving
//! side reads the TOS byte of its IP header back from each accepted socket (TCP_SAVED_SYN). Its
//! hints (setNetAttr, v11+) are taken on the communicator's context, and a context or hint that is
//! not NCCL's is refused.
mod common;
use common::*;
use nccl_net_tcpxr::abi::*;
use std::ffi::{c_int, c_void};

/// The stripes per connection in this process's configuration.
fn stripes() -> usize {
    nccl_net_tcpxr::config::Config::from_env().unwrap().stripes
}

/// An int socket option of `fd`, or None when the call fails (not such a socket, or closed since
/// the listing).
fn int_opt(fd: c_int, level: c_int, name: c_int) -> Option<c_int> {
    let mut value: c_int = 0;
    let mut len = std::mem::size_of::<c_int>() as libc::socklen_t;
    // SAFETY: a live int and its size; a bad fd only makes the call fail.
    let r = unsafe { libc::getsockopt(fd, level, name, (&mut value as *mut c_int).cast(), &mut len) };
    (r == 0).then_some(value)
}

/// Tells every listening socket of this process (tcpxr's control and stripe listeners among them)
/// to keep the SYN of each connection it accepts, for [`syn_tos_of_connections_from`].
fn save_syns_on_listeners() {
    for fd in socket_fds() {
        if int_opt(fd, libc::SOL_SOCKET, libc::SO_ACCEPTCONN) == Some(1) {
            let on: c_int = 1;
            // SAFETY: a live int and its size on a listening TCP socket of this process.
            unsafe {
                libc::setsockopt(
                    fd,
                    libc::IPPROTO_TCP,
                    libc::TCP_SAVE_SYN,
                    (&on as *const c_int).cast(),
                    std::mem::size_of::<c_int>() as libc::socklen_t,
                )
            };
        }
    }
}

/// The socket's own or its peer's address (IPv4), or None.
fn addr_of(fd: c_int, peer: bool) -> Option<std::net::SocketAddrV4> {
    // SAFETY: sockaddr_in is plain old data; zero is a valid bit pattern.
    let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    let p = (&mut sa as *mut libc::sockaddr_in).cast();
    // SAFETY: a live sockaddr_in and its size; a bad fd or another family only makes it fail or
    // report a family we check.
    let r = unsafe {
        if peer {
            libc::getpeername(fd, p, &mut len)
        } else {
            libc::getsockname(fd, p, &mut len)
        }
    };
    (r == 0 && sa.sin_family == libc::AF_INET as libc::sa_family_t).then(|| {
        std::net::SocketAddrV4::new(
            std::net::Ipv4Addr::from(u32::from_be(sa.sin_addr.s_addr)),
            u16::from_be(sa.sin_port),
        )
    })
}

/// For every connection of this process whose connecting end has IP_TOS `tos` (the send comm's
/// control connection and stripes), the TOS byte of the SYN that opened it, as the accepting end
/// kept it (see [`save_syns_on_listeners`]; None for a connection whose SYN was not kept).
fn syn_tos_of_connections_from(tos: u8) -> Vec<Option<u8>> {
    let fds = socket_fds();
    let senders: Vec<_> = fds
        .iter()
        .filter(|&&fd| int_opt(fd, libc::IPPROTO_IP, libc::IP_TOS) == Some(c_int::from(tos)))
        .filter_map(|&fd| addr_of(fd, false))
        .collect();
    fds.iter()
        .filter(|&&fd| addr_of(fd, true).is_some_and(|p| senders.contains(&p)))
        .map(|&fd| {
            let mut syn = [0u8; 256];
            let mut len = syn.len() as libc::socklen_t;
            // SAFETY: a live buffer and its size; TCP_SAVED_SYN copies the saved headers into it.
            let r = unsafe {
                libc::getsockopt(
                    fd,
                    libc::IPPROTO_TCP,
                    libc::TCP_SAVED_SYN,
                    syn.as_mut_ptr().cast(),
                    &mut len,
                )
            };
            // Byte 1 of the IPv4 header is the TOS byte.
            (r == 0 && len >= 20 && syn[0] >> 4 == 4).then_some(syn[1])
        })
        .collect()
}

/// The open IPv4 sockets of this process whose IP_TOS is `tos`.
fn sockets_with_tos(tos: u8) -> usize {
    socket_fds()
        .into_iter()
        .filter(|&fd| int_opt(fd, libc::IPPROTO_IP, libc::IP_TOS) == Some(c_int::from(tos)))
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
    save_syns_on_listeners();
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
    assert_eq!(
        syn_tos_of_connections_from(0x60),
        vec![Some(0x60); 1 + stripes()],
        "the SYN of the control connection and of every stripe carries the class"
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
    save_syns_on_listeners();
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
    assert_eq!(syn_tos_of_connections_from(0x28), vec![Some(0x28); 1 + stripes()]);
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
        expect_log(&format!(
            "finalize (ncclNet v12): finalize of {:p}: not a live tcpxr context",
            not_a_context.as_ptr()
        ));
        assert_eq!(t.finalize.unwrap()(ctx), OK);
    }
}
