//! NCCL's fused NICs (makeVDevice, v9+) on one host: the loopback stands for two devices (lo at
//! 127.0.0.1, lo.2 at 127.0.0.2), NCCL fuses them, and a connection on the fused device puts its
//! stripes on both addresses, seen on this process's real sockets, with every byte in place.
//! Rails and planes (NCCL_TCPXR_RAILS) reach the v12 properties, a fused device keeping what its
//! members share. Bad member lists are refused and change nothing.
mod common;
use common::*;
use nccl_net_tcpxr::abi::*;
use std::collections::BTreeMap;
use std::ffi::{c_int, CStr};
use std::net::{IpAddr, SocketAddr};
use std::sync::Once;

const STRIPES: usize = 4;

/// Read once, at the first init in this process; every test here sets the same values.
fn configure() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::env::set_var("NCCL_TCPXR_TRANSPORT", "socket");
        std::env::set_var("NCCL_TCPXR_IFNAME", "=lo");
        std::env::set_var("NCCL_TCPXR_LOOPBACK_DEVICES", "2");
        std::env::set_var("NCCL_TCPXR_RAILS", "3:1,3:2");
        std::env::set_var("NCCL_TCPXR_STRIPES", STRIPES.to_string());
        // lo is on no PCI device: tcpxr fuses such devices only where the user placed them for
        // NCCL in a topology file (NCCL reads it; tcpxr only asks whether it is set).
        std::env::set_var("NCCL_TOPO_FILE", "/nonexistent/topology.xml");
        // Every message on the stripes, none on the control connection.
        std::env::set_var("NCCL_TCPXR_INLINE_BYTES", "0");
        std::env::set_var("NCCL_TCPXR_INLINE_IDLE_BYTES", "0");
    });
}

fn props(t: &ncclNet_v12_t, dev: c_int) -> ncclNetProperties_v12_t {
    // SAFETY: all-zero is a valid properties struct (numbers and NULL pointers).
    let mut p: ncclNetProperties_v12_t = unsafe { std::mem::zeroed() };
    // SAFETY: a live out-pointer to one properties struct of this version.
    assert_eq!(unsafe { t.getProperties.unwrap()(dev, &mut p) }, OK);
    p
}

fn name(p: &ncclNetProperties_v12_t) -> String {
    // SAFETY: tcpxr's device names are NUL-terminated strings that live as long as the plugin.
    unsafe { CStr::from_ptr(p.name) }.to_string_lossy().into_owned()
}

fn devices(t: &ncclNet_v12_t) -> c_int {
    let mut n = 0;
    // SAFETY: a live out-pointer.
    assert_eq!(unsafe { t.devices.unwrap()(&mut n) }, OK);
    n
}

fn fuse(t: &ncclNet_v12_t, members: &[c_int]) -> (R, c_int) {
    let mut vprops = ncclNetVDeviceProps_v12_t {
        ndevs: members.len() as c_int,
        devs: [0; NCCL_NET_MAX_DEVS_PER_NIC_V12],
    };
    vprops.devs[..members.len()].copy_from_slice(members);
    let mut d = -1;
    // SAFETY: live pointers to an int and to NCCL's vProps struct of this version.
    (unsafe { t.makeVDevice.unwrap()(&mut d, &mut vprops) }, d)
}

/// How many of this process's connected TCP sockets have each (local IP, peer IP).
fn connected_sockets() -> BTreeMap<(IpAddr, IpAddr), usize> {
    let mut out = BTreeMap::new();
    for fd in socket_fds() {
        let end = |f: unsafe extern "C" fn(c_int, *mut libc::sockaddr, *mut libc::socklen_t) -> c_int| {
            // SAFETY: all-zero is a valid sockaddr_storage.
            let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            // SAFETY: a live buffer and its size; a fd that is not a connected socket (or has
            // closed since the listing) only makes the call fail.
            if unsafe { f(fd, (&mut ss as *mut libc::sockaddr_storage).cast(), &mut len) } != 0 {
                return None;
            }
            if ss.ss_family as c_int != libc::AF_INET {
                return None;
            }
            // SAFETY: the family says it is a sockaddr_in.
            let sin = unsafe { &*(&ss as *const libc::sockaddr_storage as *const libc::sockaddr_in) };
            let ip = std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Some(SocketAddr::new(IpAddr::V4(ip), u16::from_be(sin.sin_port)))
        };
        if let (Some(local), Some(peer)) = (end(libc::getsockname), end(libc::getpeername)) {
            *out.entry((local.ip(), peer.ip())).or_insert(0) += 1;
        }
    }
    out
}

fn lo(k: u8) -> IpAddr {
    IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, k))
}

#[test]
fn a_fused_device_stripes_one_connection_over_both_of_its_members() {
    configure();
    let net = v12();
    let t = net.0;
    assert_eq!(net.init(), OK);
    let physical = devices(t);
    assert_eq!(physical, 2, "lo and lo.2");
    let (p0, p1) = (props(t, 0), props(t, 1));
    assert_eq!((name(&p0).as_str(), name(&p1).as_str()), ("lo", "lo.2"));
    assert_eq!((p0.railId, p0.planeId, p1.railId, p1.planeId), (3, 1, 3, 2));
    assert_eq!((p0.vProps.ndevs, p0.vProps.devs[0]), (1, 0));

    let (r, fused) = fuse(t, &[0, 1]);
    assert_eq!((r, fused), (OK, 2), "the fused device comes after the physical ones");
    assert_eq!(devices(t), 3);
    let f = props(t, fused);
    assert_eq!(name(&f), "lo+lo.2");
    assert_eq!(f.speed, p0.speed + p1.speed);
    assert_eq!((f.vProps.ndevs, &f.vProps.devs[..2]), (2, &[0, 1][..]));
    assert_eq!((f.railId, f.planeId), (3, NCCL_NET_ID_UNDEF), "one rail, two planes");
    assert_eq!(fuse(t, &[0, 1]), (OK, fused), "the same members give the same device");

    let before = connected_sockets();
    let pair = Pair::on(&net, fused);
    let after = connected_sockets();
    let new = |local: IpAddr, peer: IpAddr| {
        after.get(&(local, peer)).copied().unwrap_or(0) - before.get(&(local, peer)).copied().unwrap_or(0)
    };
    // Accepted stripes: local address is the listener's member. Both members are 400 Gb/s
    // loopbacks, so the 4 stripes split 2 and 2; the control connection is on the first member.
    // (Linux picks 127.0.0.1 as the source towards any loopback address.)
    assert_eq!(new(lo(2), lo(1)), STRIPES / 2, "receive stripes on lo.2: {after:?}");
    assert_eq!(new(lo(1), lo(2)), STRIPES / 2, "send stripes to lo.2: {after:?}");
    assert_eq!(
        new(lo(1), lo(1)),
        2 * (STRIPES / 2 + 1),
        "stripes and control on lo, both ends"
    );
    for size in [1usize, 4096, (1 << 20) + 7, 8 << 20] {
        let mut data = pattern(size, size as u64);
        assert_eq!(
            pair.transfer(&mut data, size),
            data,
            "{size} bytes over the fused device"
        );
    }
    drop(pair);

    // A connection on a physical member keeps every stripe there.
    let before = connected_sockets();
    let pair = Pair::on(&net, 1);
    let after = connected_sockets();
    let grew = |k: (IpAddr, IpAddr)| after.get(&k).copied().unwrap_or(0) - before.get(&k).copied().unwrap_or(0);
    assert_eq!(
        grew((lo(2), lo(1))),
        STRIPES + 1,
        "stripes and control on lo.2: {after:?}"
    );
    let mut data = pattern(3 << 20, 9);
    assert_eq!(pair.transfer(&mut data, 3 << 20), data);
}

#[test]
fn bad_member_lists_are_refused_with_invalid_argument_and_make_no_device() {
    configure();
    let net = v12();
    let t = net.0;
    assert_eq!(net.init(), OK);
    let n = devices(t);
    for (members, why) in [
        (&[0, 0][..], "makeVDevice of [0, 0]: device 0 is named twice"),
        (&[0, 5], "makeVDevice of [0, 5]: device 5 is not a physical device"),
        (&[-1], "makeVDevice of [-1]: device -1 is not a physical device"),
        (&[], "makeVDevice of 0 devices: accepted 1-8"),
    ] {
        assert_eq!(fuse(t, members).0, ncclResult_t::ncclInvalidArgument, "{members:?}");
        expect_log(&format!("makeVDevice (ncclNet v12): {why}"));
    }
    let mut d = -1;
    // SAFETY: a live int; NULL props is what tcpxr must refuse.
    let r = unsafe { t.makeVDevice.unwrap()(&mut d, std::ptr::null_mut()) };
    assert_eq!(r, ncclResult_t::ncclInvalidArgument);
    expect_log("makeVDevice (ncclNet v12): makeVDevice: props is NULL");
    // v9-v11 structs hold 4 devices: a count beyond that is refused before any is read.
    let t9: &ncclNet_v9_t = table("ncclNetPlugin_v9");
    let mut vprops = ncclNetVDeviceProps_v9_t {
        ndevs: 5,
        devs: [0, 1, 0, 0],
    };
    // SAFETY: live pointers to an int and to a vProps struct of this version.
    let r = unsafe { t9.makeVDevice.unwrap()(&mut d, &mut vprops) };
    assert_eq!(r, ncclResult_t::ncclInvalidArgument);
    expect_log("makeVDevice (ncclNet v9): makeVDevice of 5 devices: accepted 1-4 distinct physical devices");
    // The other test may have fused lo+lo.2 meanwhile; nothing else appears.
    assert!(devices(t) <= n.max(3), "no device made");
    // SAFETY: all-zero is a valid properties struct; a device that does not exist is refused.
    let mut p: ncclNetProperties_v12_t = unsafe { std::mem::zeroed() };
    // SAFETY: a live out-pointer; device 64 does not exist and must be refused.
    let r = unsafe { t.getProperties.unwrap()(64, &mut p) };
    assert_eq!(r, ncclResult_t::ncclInvalidArgument);
    expect_log("getProperties (ncclNet v12): getProperties on device 64, which does not exist");
}
