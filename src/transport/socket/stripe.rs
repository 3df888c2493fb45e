//! One stripe of the socket transport: a TCP connection and the thread that moves its bytes.
//!
//! The engine posts chunks; the stripe's thread sends or receives them one after the other with
//! blocking calls, so the kernel does the waiting and an idle stripe costs no CPU. Completion is a
//! counter the engine reads without a lock.
use crate::error::{Error, Result};
use crate::transport::{InnerMr, InnerRecv, InnerSend};
use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::sys;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Send,
    Recv,
}

#[derive(Clone, Copy)]
struct Task {
    ptr: usize,
    len: usize,
}

struct Shared {
    queue: Mutex<VecDeque<Task>>,
    wake: Condvar,
    /// Tasks finished, in posting order.
    finished: AtomicU64,
    /// Time spent inside send/recv calls (for NCCL_TCPXR_STATS): one clock read per chunk.
    io_nanos: AtomicU64,
    failure: OnceLock<Error>,
    stop: AtomicBool,
}

/// How long an idle I/O thread keeps looking for work before it sleeps: short enough to cost
/// little CPU, long enough to skip the wake-up for back-to-back chunks.
const SPIN: Duration = Duration::from_micros(50);

pub struct Stripe {
    shared: Arc<Shared>,
    stream: Arc<TcpStream>,
    thread: Option<JoinHandle<()>>,
    posted: u64,
    retired: u64,
}

impl Stripe {
    /// Takes a connected stream (either mode) and starts its I/O thread.
    pub fn start(stream: TcpStream, dir: Direction, label: String) -> Result<Stripe> {
        stream
            .set_nonblocking(false)
            .map_err(|e| Error::os("set_nonblocking", e))?;
        let stream = Arc::new(stream);
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            wake: Condvar::new(),
            finished: AtomicU64::new(0),
            io_nanos: AtomicU64::new(0),
            failure: OnceLock::new(),
            stop: AtomicBool::new(false),
        });
        let (s, t) = (shared.clone(), stream.clone());
        let thread = std::thread::Builder::new()
            .name(label)
            .spawn(move || io_loop(&s, &t, dir))
            .map_err(|e| Error::os("cannot start stripe I/O thread", e))?;
        Ok(Stripe {
            shared,
            stream,
            thread: Some(thread),
            posted: 0,
            retired: 0,
        })
    }

    fn post_task(&mut self, ptr: usize, len: usize) -> Result<bool> {
        self.check()?;
        self.shared.queue.lock().unwrap().push_back(Task { ptr, len });
        self.shared.wake.notify_one();
        self.posted += 1;
        Ok(true)
    }

    fn test_oldest_task(&mut self) -> Result<bool> {
        if self.retired == self.posted {
            return Err(Error::internal("test on a stripe with nothing posted"));
        }
        if self.shared.finished.load(Ordering::Acquire) > self.retired {
            self.retired += 1;
            return Ok(true);
        }
        self.check()?;
        Ok(false)
    }

    fn check(&self) -> Result<()> {
        match self.shared.failure.get() {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

impl Drop for Stripe {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        // Unblocks a thread waiting in send or recv.
        let _ = self.stream.shutdown(Shutdown::Both);
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl InnerSend for Stripe {
    fn io_nanos(&self) -> Option<u64> {
        Some(self.shared.io_nanos.load(Ordering::Relaxed))
    }

    fn post(&mut self, ptr: *const u8, len: usize, _mr: InnerMr) -> Result<bool> {
        self.post_task(ptr as usize, len)
    }
    fn test_oldest(&mut self) -> Result<bool> {
        self.test_oldest_task()
    }
}

impl InnerRecv for Stripe {
    fn io_nanos(&self) -> Option<u64> {
        Some(self.shared.io_nanos.load(Ordering::Relaxed))
    }

    fn post(&mut self, ptr: *mut u8, len: usize, _mr: InnerMr) -> Result<bool> {
        self.post_task(ptr as usize, len)
    }
    fn test_oldest(&mut self) -> Result<bool> {
        self.test_oldest_task()
    }
    fn consumed(&mut self) -> Result<()> {
        Ok(())
    }
}

fn next_task(shared: &Shared) -> Option<Task> {
    let start = Instant::now();
    loop {
        if shared.stop.load(Ordering::Acquire) {
            return None;
        }
        if let Some(t) = shared.queue.lock().unwrap().pop_front() {
            return Some(t);
        }
        if start.elapsed() > SPIN {
            break;
        }
        std::hint::spin_loop();
    }
    let mut q = shared.queue.lock().unwrap();
    loop {
        if shared.stop.load(Ordering::Acquire) {
            return None;
        }
        if let Some(t) = q.pop_front() {
            return Some(t);
        }
        q = shared.wake.wait(q).unwrap();
    }
}

fn io_loop(shared: &Shared, stream: &TcpStream, dir: Direction) {
    while let Some(task) = next_task(shared) {
        let started = Instant::now();
        let result = match dir {
            // SAFETY: the engine keeps the buffer alive and untouched until this task is
            // reported finished (NCCL's contract until test() says done; close joins this thread).
            Direction::Send => sys::send_all(stream, unsafe {
                std::slice::from_raw_parts(task.ptr as *const u8, task.len)
            }),
            // SAFETY: as above, and the engine posts each destination range to one stripe only.
            Direction::Recv => sys::recv_exact(stream, unsafe {
                std::slice::from_raw_parts_mut(task.ptr as *mut u8, task.len)
            }),
        };
        match result {
            Ok(()) => {
                shared
                    .io_nanos
                    .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
                shared.finished.fetch_add(1, Ordering::Release);
            }
            Err(e) => {
                if !shared.stop.load(Ordering::Acquire) {
                    let _ = shared.failure.set(stripe_error(dir, e));
                }
                return;
            }
        }
    }
}

/// A peer that closed, reset or timed out is the peer's problem (ncclRemoteError); anything else
/// is a local system error.
pub fn stripe_error(dir: Direction, e: std::io::Error) -> Error {
    let what = if dir == Direction::Send { "send" } else { "receive" };
    let remote = matches!(
        e.kind(),
        ErrorKind::UnexpectedEof
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::BrokenPipe
            | ErrorKind::TimedOut
            | ErrorKind::NotConnected
    ) || e.raw_os_error() == Some(libc::EHOSTUNREACH)
        || e.raw_os_error() == Some(libc::ENETUNREACH);
    if remote {
        Error::remote(format!("stripe {what} failed, peer gone: {e}"))
    } else {
        Error::system(format!("stripe {what} failed: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn a_chunk_moves_between_two_stripes_and_its_io_time_is_counted() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        let mut tx = Stripe::start(a, Direction::Send, "t-tx".into()).unwrap();
        let mut rx = Stripe::start(b, Direction::Recv, "t-rx".into()).unwrap();
        let data: Vec<u8> = (0..1 << 20).map(|i| (i % 253) as u8).collect();
        let mut out = vec![0u8; data.len()];
        assert_eq!(InnerRecv::io_nanos(&rx), Some(0));
        assert!(InnerRecv::post(&mut rx, out.as_mut_ptr(), out.len(), InnerMr::NONE).unwrap());
        assert!(InnerSend::post(&mut tx, data.as_ptr(), data.len(), InnerMr::NONE).unwrap());
        let start = Instant::now();
        while !InnerRecv::test_oldest(&mut rx).unwrap() {
            assert!(start.elapsed() < Duration::from_secs(10));
        }
        while !InnerSend::test_oldest(&mut tx).unwrap() {
            assert!(start.elapsed() < Duration::from_secs(10));
        }
        assert!(out == data);
        assert!(InnerSend::io_nanos(&tx).unwrap() > 0 && InnerRecv::io_nanos(&rx).unwrap() > 0);
    }
}
