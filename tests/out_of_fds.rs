//! A peer that connects while this process has no file descriptor left: tcpxr's listener leaves
//! the connection in the kernel's backlog and takes it once descriptors are free again, where
//! the listen comm used to fail for good. Its own test binary: the test lowers the process's
//! open-files limit.
mod common;
use common::*;
use std::ffi::c_void;
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn open_files_limit() -> libc::rlimit {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a live out-pointer to one rlimit.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
    lim
}

fn set_open_files_limit(lim: &libc::rlimit) {
    // SAFETY: a live pointer to one rlimit.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, lim) }, 0);
}

#[test]
fn a_connection_that_arrives_while_the_process_has_no_descriptors_is_taken_once_it_has() {
    let net = v12();
    assert_eq!(net.init(), OK);
    let mut handle = [0u8; 128];
    let mut l = null();
    assert_eq!(net.listen(0, &mut handle, &mut l), OK);
    // The sending peer, started while descriptors are plentiful (its pipes need some).
    let mut child = bench_command()
        .args(["peer", "--role", "send", "--size", "1M", "--handle", &hex(&handle)])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // No descriptor left: the limit lowered to a few above what is open, and those taken.
    let saved = open_files_limit();
    let open = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
    set_open_files_limit(&libc::rlimit {
        rlim_cur: open + 16,
        rlim_max: saved.rlim_max,
    });
    let mut filler = vec![];
    while let Ok(f) = std::fs::File::open("/dev/null") {
        filler.push(f);
    }
    // The peer's connection arrives meanwhile; tcpxr's answer thread and accept try to take it.
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(300) {
        let mut r = null();
        assert_eq!(
            net.accept(l, &mut r),
            OK,
            "the listen comm failed for want of a descriptor"
        );
        assert!(r.is_null(), "a comm with no descriptor to hold its sockets");
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(filler);
    set_open_files_limit(&saved);
    let mut r = null();
    let start = Instant::now();
    while r.is_null() {
        assert_eq!(net.accept(l, &mut r), OK);
        assert!(start.elapsed() < DEADLINE, "the waiting connection was never taken");
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut buf = vec![0u8; 1 << 20];
    let mut req = null();
    assert_eq!(
        net.irecv(r, buf.as_mut_ptr() as *mut c_void, buf.len(), null(), &mut req),
        OK
    );
    assert_eq!(wait_result(&net, req, DEADLINE).0, OK);
    assert!(buf.iter().all(|b| *b == 7), "the peer's payload");
    nccl_net_tcpxr::testlog::allow("cannot take a connection now");
    let _ = child.stdin.take().unwrap().write_all(b"\n");
    child.kill().unwrap();
    child.wait().unwrap();
    nccl_net_tcpxr::testlog::allow("peer gone");
    assert_eq!(net.close_recv(r), OK);
    assert_eq!(net.close_listen(l), OK);
}
