//! Moving data through the exported tables, as NCCL's proxy does, over loopback.
mod common;
use common::*;
use std::ffi::c_void;

const SIZES: &[usize] = &[
    0,
    1,
    7,
    4096,
    16383,
    16384,
    16385,
    65536,
    524287,
    524288,
    524289,
    (3 << 20) + 5,
    64 << 20,
];

fn sizes_arrive_intact(net: &dyn Net) {
    let pair = Pair::new(net);
    for (i, &n) in SIZES.iter().enumerate() {
        let mut data = pattern(n, i as u64 + 1);
        let got = pair.transfer(&mut data, n);
        assert!(got == data, "v{}: {n} bytes arrived different", net.version());
    }
}

#[test]
fn v12_messages_from_0_bytes_to_64_mib_arrive_intact() {
    sizes_arrive_intact(&v12());
}

#[test]
fn v5_messages_from_0_bytes_to_64_mib_arrive_intact() {
    sizes_arrive_intact(&v5());
}

#[test]
fn a_send_smaller_than_the_posted_receive_reports_its_real_size_and_leaves_the_rest() {
    let net = v12();
    let pair = Pair::new(&net);
    for (i, n) in [0usize, 1000, 600 << 10, (1 << 20) - 1].into_iter().enumerate() {
        let capacity = 1 << 20;
        let mut out = vec![0xEEu8; capacity];
        let mut data = pattern(n, 40 + i as u64);
        let (mut rq, mut sq) = (null(), null());
        assert_eq!(
            net.irecv(pair.recv, out.as_mut_ptr() as *mut c_void, capacity, null(), &mut rq),
            OK
        );
        assert_eq!(
            net.isend(pair.send, data.as_mut_ptr() as *mut c_void, n, null(), &mut sq),
            OK
        );
        let (rsize, ssize) = wait_both(&net, rq, sq);
        assert_eq!((rsize as usize, ssize as usize), (n, n));
        assert!(out[..n] == data[..], "{n} bytes differ");
        assert!(
            out[n..].iter().all(|b| *b == 0xEE),
            "bytes past the message were written"
        );
    }
}

/// Small messages queued behind each other on the control connection: the read of a header also
/// reads as much as the last inline payload was into the receive's buffer, and so takes bytes of
/// the message behind it where this one is smaller (0 bytes after 8, a striped one after 100).
/// Each arrives intact, and no buffer keeps a byte past its message.
#[test]
fn small_messages_read_together_arrive_intact_and_leave_their_buffers_past_them_as_they_were() {
    let net = v12();
    let pair = Pair::new(&net);
    // Inline (0-2000 bytes) and one over the stripes, every receive posted larger than its message.
    let sizes = [8usize, 0, 1, 100, 1 << 20, 1000, 1024, 2000];
    let mut sends: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| pattern(n, 70 + i as u64))
        .collect();
    let mut recvs: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0xEEu8; n + 3000]).collect();
    let (mut rq, mut sq) = ([null(); 8], [null(); 8]);
    for (i, out) in recvs.iter_mut().enumerate() {
        let cap = out.len();
        assert_eq!(
            net.irecv(pair.recv, out.as_mut_ptr() as *mut c_void, cap, null(), &mut rq[i]),
            OK
        );
    }
    // Every send out before the receiver looks again, so its first read finds them all.
    for (i, data) in sends.iter_mut().enumerate() {
        assert_eq!(
            net.isend(
                pair.send,
                data.as_mut_ptr() as *mut c_void,
                sizes[i],
                null(),
                &mut sq[i]
            ),
            OK
        );
    }
    // The inline sends are done once written, before the receiver reads; the striped one and the
    // receives then complete together.
    let inline: Vec<usize> = (0..8).filter(|&i| i != 4).collect();
    let (mut sent, mut got) = ([false; 8], [false; 8]);
    let start = std::time::Instant::now();
    let poll = |q: *mut c_void, done: &mut bool, what: String, want: usize| {
        let (mut d, mut size) = (0, 0);
        assert_eq!(net.test(q, &mut d, &mut size), OK, "{what}");
        if d != 0 {
            assert_eq!(size as usize, want, "{what}");
            *done = true;
        }
        assert!(start.elapsed().as_secs() < 10, "{what} did not complete");
    };
    while !inline.iter().all(|&i| sent[i]) {
        for &i in &inline {
            if !sent[i] {
                poll(sq[i], &mut sent[i], format!("send {i}"), sizes[i]);
            }
        }
    }
    while !(sent.iter().all(|d| *d) && got.iter().all(|d| *d)) {
        for i in 0..8 {
            if !sent[i] {
                poll(sq[i], &mut sent[i], format!("send {i}"), sizes[i]);
            }
            if !got[i] {
                poll(rq[i], &mut got[i], format!("receive {i}"), sizes[i]);
            }
        }
    }
    for (i, out) in recvs.iter().enumerate() {
        let n = sizes[i];
        assert!(out[..n] == sends[i][..], "message {i} ({n} bytes) differs");
        assert!(
            out[n..].iter().all(|b| *b == 0xEE),
            "message {i}: bytes past its {n} were written"
        );
    }
}

#[test]
fn a_send_larger_than_the_posted_receive_fails_that_receive_and_writes_nothing() {
    let net = v12();
    // 100 KiB travels inline (a lone mid-sized message), 3 MiB over the stripes.
    for (i, n) in [100usize << 10, 3 << 20].into_iter().enumerate() {
        let pair = Pair::new(&net);
        let posted = 1000;
        let mut out = vec![0xEEu8; 4096];
        let mut data = pattern(n, 30 + i as u64);
        let (mut rq, mut sq) = (null(), null());
        assert_eq!(
            net.irecv(pair.recv, out.as_mut_ptr() as *mut c_void, posted, null(), &mut rq),
            OK
        );
        assert_eq!(
            net.isend(pair.send, data.as_mut_ptr() as *mut c_void, n, null(), &mut sq),
            OK
        );
        let (r, waited) = wait_result(&net, rq, std::time::Duration::from_secs(5));
        assert_eq!(r, R::ncclInvalidUsage, "{n} bytes into {posted}: after {waited:?}");
        expect_log(&format!(
            "message truncated: peer sent {n} bytes but the receive posted {posted} bytes"
        ));
        assert!(
            out.iter().all(|b| *b == 0xEE),
            "{n} bytes into {posted}: the buffer was written"
        );
        // The send may still be in flight: its buffer must outlive the comms.
        drop(pair);
    }
}

#[test]
fn eight_requests_in_flight_complete_when_tested_out_of_order() {
    for net in [&v12() as &dyn Net, &v5()] {
        let pair = Pair::new(net);
        let sizes: Vec<usize> = (0..8)
            .map(|i| [10, 70 << 10, 1 << 20, 0, 3 << 20, 17, 600 << 10, 5 << 20][i])
            .collect();
        let mut sends: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| pattern(n, 100 + i as u64))
            .collect();
        let mut recvs: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0u8; n + 64]).collect();
        let mut rq = [null(); 8];
        let mut sq = [null(); 8];
        for i in 0..8 {
            let cap = recvs[i].len();
            assert_eq!(
                net.irecv(pair.recv, recvs[i].as_mut_ptr() as *mut c_void, cap, null(), &mut rq[i]),
                OK
            );
            assert_eq!(
                net.isend(
                    pair.send,
                    sends[i].as_mut_ptr() as *mut c_void,
                    sizes[i],
                    null(),
                    &mut sq[i]
                ),
                OK
            );
            assert!(!rq[i].is_null() && !sq[i].is_null(), "8 requests must fit in one comm");
        }
        // Newest first, receives and sends interleaved.
        for i in [7, 2, 5, 0, 6, 1, 4, 3] {
            let (rsize, ssize) = wait_both(net, rq[i], sq[i]);
            assert_eq!((rsize as usize, ssize as usize), (sizes[i], sizes[i]), "request {i}");
        }
        for i in 0..8 {
            assert!(
                recvs[i][..sizes[i]] == sends[i][..],
                "v{} message {i} differs",
                net.version()
            );
        }
    }
}

#[test]
fn when_all_requests_are_in_use_isend_and_irecv_return_a_null_request_then_recover() {
    for net in [&v12() as &dyn Net, &v5()] {
        let pair = Pair::new(net);
        let max = net.max_requests();
        let mut bufs: Vec<Vec<u8>> = (0..=max).map(|i| pattern(4096, i as u64)).collect();
        let mut reqs = vec![];
        for buf in bufs.iter_mut().take(max) {
            let mut req = null();
            assert_eq!(
                net.isend(pair.send, buf.as_mut_ptr() as *mut c_void, 4096, null(), &mut req),
                OK
            );
            assert!(!req.is_null());
            reqs.push(req);
        }
        let mut extra: *mut c_void = std::ptr::without_provenance_mut(1);
        assert_eq!(
            net.isend(
                pair.send,
                bufs[max].as_mut_ptr() as *mut c_void,
                4096,
                null(),
                &mut extra
            ),
            OK
        );
        assert!(
            extra.is_null(),
            "v{}: request {} beyond the limit must be NULL",
            net.version(),
            max + 1
        );
        // Drain them; then the comm takes new requests again.
        let mut out = vec![0u8; 4096];
        for (i, req) in reqs.into_iter().enumerate() {
            let mut rq = null();
            assert_eq!(
                net.irecv(pair.recv, out.as_mut_ptr() as *mut c_void, 4096, null(), &mut rq),
                OK
            );
            assert!(!rq.is_null());
            wait_both(net, rq, req);
            assert!(out == bufs[i]);
        }
        let mut data = pattern(100, 9);
        assert_eq!(pair.transfer(&mut data, 100), data);
    }
}

#[test]
fn several_comms_move_data_at_once() {
    let net = v12();
    assert_eq!(net.init(), OK);
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let net = &net;
            scope.spawn(move || {
                let pair = Pair::new(net);
                for round in 0..3u64 {
                    let n = (8 << 20) + (t as usize) * 4099;
                    let mut data = pattern(n, t * 10 + round);
                    assert!(pair.transfer(&mut data, n) == data, "comm {t} round {round}");
                }
            });
        }
    });
}

#[test]
fn init_may_be_called_many_times_and_properties_stay_sane() {
    let (a, b) = (v12(), v5());
    for _ in 0..3 {
        assert_eq!(a.init(), OK);
        assert_eq!(b.init(), OK);
    }
    assert_eq!(a.name(), "tcpxr");
    let mut n = 0;
    assert_eq!(a.devices(&mut n), OK);
    assert!(n >= 1);
    for dev in 0..n {
        let (r, speed, ptr) = a.speed_and_ptr(dev);
        assert_eq!(r, OK);
        assert!(speed > 0);
        assert_eq!(ptr, nccl_net_tcpxr::abi::NCCL_PTR_HOST);
    }
    assert_ne!(a.speed_and_ptr(n).0, OK, "a device past the end is an error");
    expect_log(&format!("getProperties on device {n}, which does not exist"));
    let pair = Pair::new(&a);
    let mut data = pattern(1 << 20, 5);
    assert!(pair.transfer(&mut data, 1 << 20) == data);
}

#[test]
fn memory_registration_round_trips_and_refuses_foreign_handles() {
    let net = v12();
    let pair = Pair::new(&net);
    let mut buf = vec![0u8; 8192];
    let mut mh = null();
    assert_eq!(
        net.reg_mr(pair.send, buf.as_mut_ptr() as *mut c_void, buf.len(), &mut mh),
        OK
    );
    assert!(!mh.is_null());
    assert_eq!(net.dereg_mr(pair.send, mh), OK);
    let mut junk = [0u64; 8];
    assert_ne!(net.dereg_mr(pair.send, junk.as_mut_ptr() as *mut c_void), OK);
    expect_log("deregMr (ncclNet v12): deregMr of a handle tcpxr did not register");
    assert_ne!(
        net.reg_mr(
            junk.as_mut_ptr() as *mut c_void,
            buf.as_mut_ptr() as *mut c_void,
            8,
            &mut mh
        ),
        OK
    );
    expect_log(&format!(
        "regMr (ncclNet v12): regMr of {:p}: not a live tcpxr send or receive comm",
        junk.as_ptr()
    ));
}

/// The tests talk over loopback (tests/common pins NCCL_TCPXR_IFNAME), never through whatever
/// address the host's first NIC has, which is tcpxr's own default for clusters: every device is
/// `lo`, and a listen handle carries a loopback address.
#[test]
fn the_tests_talk_over_loopback() {
    assert_eq!(std::env::var("NCCL_TCPXR_IFNAME").as_deref(), Ok(TEST_IFNAME));
    let net = v12();
    assert_eq!(net.init(), OK);
    let mut n = 0;
    assert_eq!(net.devices(&mut n), OK);
    for dev in 0..n {
        // SAFETY: all-zero is a valid properties struct (numbers and NULL pointers).
        let mut p: nccl_net_tcpxr::abi::ncclNetProperties_v12_t = unsafe { std::mem::zeroed() };
        // SAFETY: a live out-pointer to one properties struct of this version.
        assert_eq!(unsafe { net.0.getProperties.unwrap()(dev, &mut p) }, OK);
        // SAFETY: tcpxr's name of the device, a NUL-terminated string it keeps.
        let name = unsafe { std::ffi::CStr::from_ptr(p.name) }.to_string_lossy();
        assert!(name.starts_with("lo"), "device {dev} is {name}");
    }
    let mut handle = [0u8; 128];
    let mut l = null();
    assert_eq!(net.listen(0, &mut handle, &mut l), OK);
    let h = nccl_net_tcpxr::engine::wire::ListenHandle::read(&handle).unwrap();
    assert!(h.ctrl.ip().is_loopback(), "listening on {}", h.ctrl);
    assert_eq!(net.close_listen(l), OK);
}
