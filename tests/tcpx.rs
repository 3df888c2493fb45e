//! The tcpx transport over the TCPX-ABI emulator, beyond the foundation scenarios: 64 MiB
//! messages over 4 TCPX stripes with every receive capped at 4 MiB (NCCL_TCPXR_CHUNK_BYTES asks
//! for 16 MiB here), memory registered on every stripe, and how NCCL_TCPXR_TRANSPORT chooses.
mod common;
use common::*;
use nccl_net_tcpxr::abi::{ncclNetProperties_v12_t, ncclNet_v12_t, NCCL_NET_DEVICE_HOST, NCCL_PTR_HOST};
use std::ffi::c_void;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

before_main! {
    select_tcpx(&[("NCCL_TCPXR_STRIPES", "4"), ("NCCL_TCPXR_CHUNK_BYTES", "16M")]);
}

#[test]
fn sixty_four_mib_messages_cross_four_tcpx_stripes_intact_in_receives_of_at_most_4_mib() {
    let net = v12();
    let pair = Pair::new(&net);
    for (i, n) in [64usize << 20, (64 << 20) + 12345, (64 << 20) - 1]
        .into_iter()
        .enumerate()
    {
        let mut data = pattern(n, 60 + i as u64);
        let got = pair.transfer(&mut data, n);
        assert!(got == data, "{n} bytes arrived different");
    }
    drop(pair);
    let comms = assert_tcpx_rules_kept(12);
    let full = comms
        .iter()
        .filter(|c| c.kind == "recv" && c.get("max_bytes") == 4 << 20)
        .count();
    assert!(
        full >= 4,
        "the 16 MiB chunk setting is capped to 4 MiB receives on all 4 stripes: {comms:?}"
    );
}

#[test]
fn registered_memory_is_registered_once_on_every_stripe_and_used_for_every_chunk() {
    let net = v12();
    let pair = Pair::new(&net);
    let n = 32 << 20;
    let mut src = pattern(n, 70);
    let mut dst = vec![0u8; n];
    let (mut smh, mut rmh) = (null(), null());
    assert_eq!(net.reg_mr(pair.send, src.as_mut_ptr() as *mut c_void, n, &mut smh), OK);
    assert_eq!(net.reg_mr(pair.recv, dst.as_mut_ptr() as *mut c_void, n, &mut rmh), OK);
    let part = 8 << 20;
    for k in 0..4 {
        let (mut sq, mut rq) = (null(), null());
        let r = net.irecv(
            pair.recv,
            dst[k * part..].as_mut_ptr() as *mut c_void,
            part,
            rmh,
            &mut rq,
        );
        assert_eq!(r, OK);
        let s = net.isend(
            pair.send,
            src[k * part..].as_mut_ptr() as *mut c_void,
            part,
            smh,
            &mut sq,
        );
        assert_eq!(s, OK);
        wait_both(&net, rq, sq);
    }
    assert!(dst == src);
    assert_eq!(net.dereg_mr(pair.send, smh), OK);
    assert_eq!(net.dereg_mr(pair.recv, rmh), OK);
    drop(pair);
    // 32 MiB in 4 MiB chunks over 4 stripes: 2 chunks, 8 MiB, and exactly one regMr per stripe.
    let comms = assert_tcpx_rules_kept(12);
    let ours: Vec<_> = comms
        .iter()
        .filter(|c| c.get("bytes") == 8 << 20 && c.get("posts") == 2)
        .collect();
    assert_eq!(ours.len(), 8, "4 send and 4 receive stripes: {comms:?}");
    for c in ours {
        assert_eq!(c.get("regs"), 1, "registered once, never per chunk: {c:?}");
    }
}

#[test]
fn devices_are_tcpx_devices_one_to_one_reported_as_host_devices() {
    assert_eq!(v12().init(), OK);
    // SAFETY: the v12 table of the loaded tcpxr, called with valid out-pointers.
    unsafe {
        let t: libloading::Symbol<*const ncclNet_v12_t> = load().get(b"ncclNetPlugin_v12").unwrap();
        let t = &**t;
        let mut n = 0;
        assert_eq!(t.devices.unwrap()(&mut n), OK);
        assert_eq!(n, 1, "the emulator's one device (NCCL_GPUDIRECTTCPX_SOCKET_IFNAME=lo)");
        let mut p: ncclNetProperties_v12_t = std::mem::zeroed();
        assert_eq!(t.getProperties.unwrap()(0, &mut p), OK);
        assert_eq!(std::ffi::CStr::from_ptr(p.name).to_str().unwrap(), "lo");
        assert_eq!(p.guid, 0, "TCPX's guid (the device index) passes through");
        assert_eq!(
            p.speed, 10_000,
            "TCPX's speed passes through (no sysfs speed for lo: 10000)"
        );
        assert_eq!(
            p.netDeviceType, NCCL_NET_DEVICE_HOST,
            "tcpxr unpacks itself: NCCL sees a host device"
        );
        assert_ne!(p.ptrSupport & NCCL_PTR_HOST, 0, "tcpxr's own support, not TCPX's");
    }
    assert_eq!(
        std::env::var("NCCL_DYNAMIC_CHUNK_SIZE").as_deref(),
        Ok("524288"),
        "TCPX livelocks at its default chunk size of 0; tcpxr sets it when unset"
    );
}

/// Starts a tcpxr peer process with `env` and returns its log up to the transport choice (or
/// all of it, when init fails).
fn init_log(env: &[(&str, &str)], unset: &[&str]) -> String {
    let mut cmd = bench_command();
    cmd.args(["peer", "--role", "recv"])
        .env("TCPXR_LOG", "info")
        // Its log on its stderr, which this reads.
        .env(nccl_net_tcpxr::testlog::FILE_VAR, "")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for k in unset {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut text = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        text.push_str(&line);
        text.push('\n');
        if line.contains("inner transport:") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    text
}

fn choice(log: &str) -> &str {
    log.lines()
        .find_map(|l| l.split_once("inner transport: ").map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("no transport chosen; log:\n{log}"))
}

#[test]
fn auto_takes_tcpx_when_it_loads_with_devices_and_socket_otherwise_and_says_why() {
    let emu = emulator_path();
    let emu = emu.to_str().unwrap();
    let log = init_log(&[("NCCL_TCPXR_TRANSPORT", "auto"), ("NCCL_TCPXR_TCPX_LIB", emu)], &[]);
    assert!(choice(&log).starts_with("tcpx (auto"), "{log}");
    let log = init_log(
        &[
            ("NCCL_TCPXR_TRANSPORT", "auto"),
            ("NCCL_TCPXR_TCPX_LIB", "/nonexistent/libnccl-net.so"),
        ],
        &[],
    );
    // A library the user named is never replaced by the socket: init fails (tests/faults.rs).
    assert!(!log.contains("inner transport:"), "{log}");
    assert!(log.contains("NCCL_TCPXR_TCPX_LIB=/nonexistent/libnccl-net.so"), "{log}");
    let log = init_log(&[("NCCL_TCPXR_TRANSPORT", "socket")], &[]);
    assert!(choice(&log).starts_with("socket (NCCL_TCPXR_TRANSPORT=socket"), "{log}");
}

#[test]
fn tcpx_without_a_library_fails_init_saying_so() {
    let log = init_log(
        &[
            ("NCCL_TCPXR_TRANSPORT", "tcpx"),
            ("NCCL_TCPXR_TCPX_LIB", "/nonexistent/libnccl-net.so"),
        ],
        &[],
    );
    assert!(!log.contains("inner transport:"), "{log}");
    assert!(
        log.contains("NCCL_TCPXR_TRANSPORT=tcpx") && log.contains("no TCPX library could be loaded"),
        "{log}"
    );
}

#[test]
fn the_default_search_takes_a_gpudirecttcpx_library_on_the_library_path_but_never_tcpxr_itself() {
    let dir = std::env::temp_dir().join(format!("tcpxr-lib-search-{}", std::process::id()));
    let link = dir.join("libnccl-net.so");
    let _ = std::fs::create_dir_all(&dir);
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("LD_LIBRARY_PATH").unwrap_or_default()
    );
    let search = |target: &std::path::Path| {
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(target, &link).unwrap();
        init_log(
            &[("NCCL_TCPXR_TRANSPORT", "auto"), ("LD_LIBRARY_PATH", &path)],
            &["NCCL_TCPXR_TCPX_LIB"],
        )
    };
    let log = search(&library_path());
    assert!(choice(&log).starts_with("socket (auto"), "{log}");
    assert!(log.contains("it is tcpxr itself"), "{log}");
    let log = search(&emulator_path());
    assert!(choice(&log).starts_with("tcpx (auto"), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A listen comm closed while TCPX's accept of a stripe is under way (NCCL closes it once
/// tcpxr's accept has failed: the peer died after its welcome) is left open, with a WARN: TCPX's
/// closeListen frees the comm while its accept thread, waiting for the peer, still uses it.
#[test]
fn a_listen_comm_closed_while_a_tcpx_accept_is_under_way_is_left_open() {
    let net = v12();
    // The peer says its hello and takes the welcome, and connects no stripe.
    let (l, h, _ctrl, _) = welcomed_raw_peer(&net);
    // tcpxr's accept starts TCPX's accept of every stripe; none can complete.
    let mut r = null();
    assert_eq!(net.accept(l, &mut r), OK);
    assert!(r.is_null());
    assert_eq!(net.close_listen(l), OK);
    let warns = nccl_net_tcpxr::testlog::claim_all("whose TCPX accept is still under way");
    assert_eq!(warns.len(), h.stripes as usize, "one per stripe left open: {warns:?}");
}

/// A send comm closed while its sends are in flight (an abort) gives back their memory only after
/// TCPX's close: TCPX's deregMr of GPU memory closes the dmabuf fd its helper threads send from,
/// and its close joins them. NCCL's own deregMr of a registration before its close, tcpxr's of
/// what is still registered at the close, and the per-post registration of a send without a
/// handle all wait for it; the emulator counts any deregistration under a request in flight.
#[test]
fn memory_of_sends_in_flight_is_deregistered_only_after_the_tcpx_comm_closed() {
    let net = v12();
    let pair = Pair::new(&net);
    let n = 64 << 20;
    let (mut a, mut b, mut c) = (vec![1u8; n], vec![2u8; n], vec![3u8; n]);
    let (mut mha, mut mhb) = (null(), null());
    assert_eq!(net.reg_mr(pair.send, a.as_mut_ptr() as *mut c_void, n, &mut mha), OK);
    assert_eq!(net.reg_mr(pair.send, b.as_mut_ptr() as *mut c_void, n, &mut mhb), OK);
    // No receive is posted: the sends fill the connections' buffers and stay in flight.
    let mut reqs = Vec::new();
    for (buf, mh) in [(&mut a, mha), (&mut b, mhb), (&mut c, null())] {
        let mut req = null();
        assert_eq!(
            net.isend(pair.send, buf.as_mut_ptr() as *mut c_void, n, mh, &mut req),
            OK
        );
        assert!(!req.is_null());
        reqs.push(req);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (mut done, mut size) = (0, 0);
    assert_eq!(
        (net.test(reqs[0], &mut done, &mut size), done),
        (OK, 0),
        "nothing left in flight"
    );
    // NCCL's teardown: deregMr, then close (here one registration is left to the close).
    assert_eq!(net.dereg_mr(pair.send, mha), OK);
    assert_eq!(net.close_send(pair.send), OK);
    assert_eq!(net.close_recv(pair.recv), OK);
    std::mem::forget(pair);
    let sends: Vec<_> = emulator_stats().into_iter().filter(|c| c.kind == "send").collect();
    assert!(!sends.is_empty());
    for s in &sends {
        assert_eq!(
            s.get("bad_deregs"),
            0,
            "memory deregistered under a send in flight on a running TCPX comm: {s:?}"
        );
    }
}
