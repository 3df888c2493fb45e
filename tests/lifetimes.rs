//! Lifetimes at the C boundary: a caller that closes a comm twice, tests a request of a closed
//! comm or calls irecvConsumed on one gets an error, never a crash, and tcpxr decides so without
//! reading the freed comm. Each scenario drives the exported table exactly as the driver
//! did (listen, connect, accept, one message through, a second left in flight, deregMr both, then
//! the misuse) in a child process, so that a crash fails its test instead of the whole run: the
//! test binary re-executes itself with TCPXR_LIFETIME_SCENARIO set, and its constructor plays the
//! scenario before the test harness starts, prints each call's result and exits
//! (common::run_child_case).
mod common;
use common::*;
use nccl_net_tcpxr::abi::*;
use nccl_net_tcpxr::engine::wire::ListenHandle;
use std::ffi::{c_int, c_void};
use std::io::Write;
use std::time::{Duration, Instant};

const SCENARIO_VAR: &str = "TCPXR_LIFETIME_SCENARIO";

// Before main: in the child, play the scenario and exit; in the test process, nothing.
before_main! {
    run_child_case(SCENARIO_VAR, |spec| {
        let (table, name) = spec.split_once(':').expect("TABLE:SCENARIO");
        match table {
            "v5" => play(&v5(), name),
            "v12" => play(&v12(), name),
            other => panic!("unknown table {other}"),
        }
        println!("END");
    });
}

/// Reads what tcpxr sent on `stream` (its hello) until tcpxr closes it: true, or false when the
/// stream stays open for the read timeout.
fn read_to_eof(stream: &mut std::net::TcpStream) -> bool {
    let mut buf = [0u8; 64];
    loop {
        match std::io::Read::read(stream, &mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(_) => return false,
        }
    }
}

/// Prints one call's result for the parent to check.
fn report(call: &str, r: R) {
    println!("CALL {call} {}", r.0);
    let _ = std::io::stdout().flush();
}

/// What the scenarios share: a connected pair that has moved one message, with registered buffers
/// (deregistered again), and two more messages of 4 MiB posted both ways and left in flight (the
/// second holds request slot 1, whose bytes an allocator leaves as they were when it frees the
/// table).
struct Used {
    send: *mut c_void,
    recv: *mut c_void,
    /// The in-flight messages' receive and send requests.
    rq: [*mut c_void; 2],
    sq: [*mut c_void; 2],
}

const BIG: usize = 4 << 20;

fn used_pair(net: &dyn Net, src: &mut [u8], dst: &mut [u8]) -> Used {
    let pair = Pair::new(net);
    let (s, r) = (pair.send, pair.recv);
    std::mem::forget(pair);
    let (mut smh, mut rmh) = (null(), null());
    assert_eq!(net.reg_mr(s, src.as_mut_ptr().cast(), src.len(), &mut smh), OK);
    assert_eq!(net.reg_mr(r, dst.as_mut_ptr().cast(), dst.len(), &mut rmh), OK);
    // One message through.
    let (mut rq, mut sq) = (null(), null());
    assert_eq!(net.irecv(r, dst.as_mut_ptr().cast(), 1000, rmh, &mut rq), OK);
    assert_eq!(net.isend(s, src.as_mut_ptr().cast(), 1000, smh, &mut sq), OK);
    wait_both(net, rq, sq);
    // Two more posted and left in flight (into the same buffer: their bytes are not looked at).
    let (mut rqs, mut sqs) = ([null(); 2], [null(); 2]);
    for i in 0..2 {
        assert_eq!(net.irecv(r, dst.as_mut_ptr().cast(), BIG, rmh, &mut rqs[i]), OK);
        assert_eq!(net.isend(s, src.as_mut_ptr().cast(), BIG, smh, &mut sqs[i]), OK);
        assert!(!rqs[i].is_null() && !sqs[i].is_null());
        let (mut done, mut size) = (0, 0);
        assert_eq!(net.test(rqs[i], &mut done, &mut size), OK);
        assert_eq!(net.test(sqs[i], &mut done, &mut size), OK);
    }
    assert_eq!(net.dereg_mr(s, smh), OK);
    assert_eq!(net.dereg_mr(r, rmh), OK);
    Used {
        send: s,
        recv: r,
        rq: rqs,
        sq: sqs,
    }
}

fn play(net: &dyn Net, name: &str) {
    let mut src = pattern(BIG, 1);
    let mut dst = vec![0u8; BIG];
    let (mut done, mut size) = (0, 0);
    match name {
        "close-recv-twice" => {
            let u = used_pair(net, &mut src, &mut dst);
            report("closeRecv", net.close_recv(u.recv));
            report("closeRecv-again", net.close_recv(u.recv));
        }
        "close-send-twice" => {
            let u = used_pair(net, &mut src, &mut dst);
            report("closeSend", net.close_send(u.send));
            report("closeSend-again", net.close_send(u.send));
        }
        "close-listen-twice" => {
            assert_eq!(net.init(), OK);
            let mut handle = [0u8; 128];
            let mut l = null();
            assert_eq!(net.listen(0, &mut handle, &mut l), OK);
            report("closeListen", net.close_listen(l));
            report("closeListen-again", net.close_listen(l));
            let mut r = null();
            report("accept-after-close", net.accept(l, &mut r));
        }
        "test-after-close" => {
            let u = used_pair(net, &mut src, &mut dst);
            report("closeSend", net.close_send(u.send));
            for (i, sq) in u.sq.iter().enumerate() {
                report(&format!("test-send-request-{i}"), net.test(*sq, &mut done, &mut size));
            }
            report("closeRecv", net.close_recv(u.recv));
            for (i, rq) in u.rq.iter().enumerate() {
                report(&format!("test-recv-request-{i}"), net.test(*rq, &mut done, &mut size));
            }
            assert_eq!(done, 0, "a refused test reports nothing done");
        }
        "mr-after-close" => {
            let u = used_pair(net, &mut src, &mut dst);
            report("closeSend", net.close_send(u.send));
            let mut mh = null();
            report(
                "regMr-after-close",
                net.reg_mr(u.send, src.as_mut_ptr().cast(), 64, &mut mh),
            );
            report("closeRecv", net.close_recv(u.recv));
            report(
                "regMr-after-close-recv",
                net.reg_mr(u.recv, dst.as_mut_ptr().cast(), 64, &mut mh),
            );
        }
        "consumed-after-close" => {
            // A receive comm with NCCL's device unpack: the message completes, NCCL would call
            // irecvConsumed next, but the comm is closed first.
            let v12 = v12();
            let (s, r, _) = unpack_pair(&v12, true);
            let (mut rq, mut sq) = (null(), null());
            assert_eq!(v12.irecv(r, dst.as_mut_ptr().cast(), 1000, null(), &mut rq), OK);
            assert_eq!(v12.isend(s, src.as_mut_ptr().cast(), 1000, null(), &mut sq), OK);
            wait_both(&v12, rq, sq);
            report("closeRecv", v12.close_recv(r));
            // SAFETY: the closed comm and its request, as a caller that misuses them passes them.
            let c = unsafe { v12.0.irecvConsumed.unwrap()(r, 1, rq) };
            report("irecvConsumed-after-close", c);
            report("closeSend", v12.close_send(s));
            // And on a comm without device unpack.
            let u = used_pair(&v12, &mut src, &mut dst);
            report("closeRecv-plain", v12.close_recv(u.recv));
            // SAFETY: as above.
            let c = unsafe { v12.0.irecvConsumed.unwrap()(u.recv, 1, u.rq[1]) };
            report("irecvConsumed-plain-after-close", c);
        }
        "finalize-twice" => {
            let t = v12();
            let mut ctx = null();
            // SAFETY: as NCCL calls init: live out-pointers, no config, logger or profiler.
            let r = unsafe { t.0.init.unwrap()(&mut ctx, 0x42, std::ptr::null_mut(), None, None) };
            assert_eq!(r, OK);
            // SAFETY: the context init returned, then the same pointer again, as a caller that
            // misuses it passes it.
            unsafe {
                report("finalize", t.0.finalize.unwrap()(ctx));
                report("finalize-again", t.0.finalize.unwrap()(ctx));
            }
        }
        "abandoned-connect" => {
            // Run with NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS=200. This process plays the listening peer
            // with a plain socket that never welcomes, so every connect stays under way.
            assert_eq!(net.init(), OK);
            let peer = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let mut abandoned = Vec::new();
            let mut connect_once = |nonce| {
                let mut h = [0u8; 128];
                let handle = ListenHandle {
                    ctrl: peer.local_addr().unwrap(),
                    stripes: 1,
                    chunk_bytes: 1 << 20,
                    inline_bytes: 0,
                    nonce,
                };
                handle.write(&mut h);
                let mut s = null();
                assert_eq!(net.connect(0, &mut h, &mut s), OK);
                assert!(s.is_null(), "no welcome, no comm");
                let (stream, _) = peer.accept().unwrap();
                stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                abandoned.push(stream);
            };
            // Two connects NCCL abandons after their first call (an abort mid-connect) ...
            connect_once(1);
            connect_once(2);
            std::thread::sleep(Duration::from_millis(500));
            // ... are dropped, with their sockets, by the next connect (itself abandoned) ...
            connect_once(3);
            std::thread::sleep(Duration::from_millis(500));
            // ... and that one by the next close of any comm.
            let mut handle = [0u8; 128];
            let mut l = null();
            assert_eq!(net.listen(0, &mut handle, &mut l), OK);
            assert_eq!(net.close_listen(l), OK);
            for (i, stream) in abandoned.iter_mut().enumerate() {
                let closed = read_to_eof(stream);
                report(
                    &format!("abandoned-{i}-closed"),
                    if closed { OK } else { ncclResult_t::ncclSystemError },
                );
            }
        }
        other => panic!("unknown scenario {other}"),
    }
}

/// Runs `scenario` over `table` in a child process, twice: with the process's usual allocator,
/// and with glibc's allocator told to map every block on its own (mmap_threshold=0), so that
/// freeing one unmaps it and any later read of freed memory faults instead of finding the old
/// bytes. Returns each call's result (the same both times), after checking that the child ran to
/// its end and exited normally (no signal, no panic) within 30 s.
fn run(table: &str, scenario: &str) -> Vec<(String, c_int)> {
    let usual = run_once(table, scenario, None, &[]);
    let unmapped = run_once(table, scenario, Some("glibc.malloc.mmap_threshold=0"), &[]);
    assert_eq!(usual, unmapped);
    usual
}

fn run_once(table: &str, scenario: &str, tunables: Option<&str>, env: &[(&str, &str)]) -> Vec<(String, c_int)> {
    let mut cmd = child_case(SCENARIO_VAR, &format!("{table}:{scenario}"));
    cmd.envs(env.iter().copied());
    if let Some(t) = tunables {
        cmd.env("GLIBC_TUNABLES", t);
    }
    let mut child = cmd
        .env("TCPXR_LOG", "warn")
        // The child's log on its stderr, shown with its output when it fails: each misuse earns
        // a WARN, and the calls' codes are what this checks.
        .env(nccl_net_tcpxr::testlog::FILE_VAR, "")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{table}:{scenario} ({tunables:?}) hung; output:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        status.success() && stdout.lines().any(|l| l == "END"),
        "{table}:{scenario} ({tunables:?}) did not run to its end ({status}):\n{stdout}{stderr}"
    );
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("CALL "))
        .map(|l| {
            let (call, code) = l.rsplit_once(' ').unwrap();
            (call.to_string(), code.parse().unwrap())
        })
        .collect()
}

/// Checks each call's result: `Ok` ones succeeded, the others failed with ncclInternalError (a
/// pointer tcpxr does not hold).
fn expect(results: &[(String, c_int)], ok: &[&str], refused: &[&str]) {
    for (call, code) in results {
        if ok.contains(&call.as_str()) {
            assert_eq!(*code, OK.0, "{call}");
        } else {
            assert!(refused.contains(&call.as_str()), "unexpected call {call}");
            assert_eq!(*code, ncclResult_t::ncclInternalError.0, "{call} must be refused");
        }
    }
    assert_eq!(results.len(), ok.len() + refused.len(), "{results:?}");
}

#[test]
fn a_second_close_recv_is_an_error_not_an_abort() {
    for table in ["v5", "v12"] {
        expect(&run(table, "close-recv-twice"), &["closeRecv"], &["closeRecv-again"]);
    }
}

#[test]
fn a_second_close_send_is_an_error() {
    for table in ["v5", "v12"] {
        expect(&run(table, "close-send-twice"), &["closeSend"], &["closeSend-again"]);
    }
}

#[test]
fn a_second_close_listen_and_an_accept_on_a_closed_listen_comm_are_errors() {
    for table in ["v5", "v12"] {
        expect(
            &run(table, "close-listen-twice"),
            &["closeListen"],
            &["closeListen-again", "accept-after-close"],
        );
    }
}

#[test]
fn test_on_a_request_of_a_closed_comm_is_an_error() {
    for table in ["v5", "v12"] {
        expect(
            &run(table, "test-after-close"),
            &["closeSend", "closeRecv"],
            &[
                "test-send-request-0",
                "test-send-request-1",
                "test-recv-request-0",
                "test-recv-request-1",
            ],
        );
    }
}

#[test]
fn registering_memory_on_a_closed_comm_is_an_error() {
    for table in ["v5", "v12"] {
        expect(
            &run(table, "mr-after-close"),
            &["closeSend", "closeRecv"],
            &["regMr-after-close", "regMr-after-close-recv"],
        );
    }
}

#[test]
fn irecv_consumed_on_a_closed_comm_is_an_error() {
    expect(
        &run("v12", "consumed-after-close"),
        &["closeRecv", "closeSend", "closeRecv-plain"],
        &["irecvConsumed-after-close", "irecvConsumed-plain-after-close"],
    );
}

#[test]
fn a_second_finalize_of_a_context_is_an_error() {
    let results = run("v12", "finalize-twice");
    assert_eq!(
        results,
        [
            ("finalize".to_string(), OK.0),
            ("finalize-again".to_string(), ncclResult_t::ncclInvalidArgument.0)
        ]
    );
}

#[test]
fn a_connect_nccl_abandons_is_dropped_with_its_sockets_after_the_handshake_timeout() {
    for table in ["v5", "v12"] {
        let results = run_once(
            table,
            "abandoned-connect",
            None,
            &[("NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS", "200")],
        );
        expect(
            &results,
            &["abandoned-0-closed", "abandoned-1-closed", "abandoned-2-closed"],
            &[],
        );
    }
}
