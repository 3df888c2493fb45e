//! epoll and eventfd, owned and closed like any other fd: the readiness sets the socket transport's
//! threads wait on (see workers.rs).
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// An epoll instance. Each registration carries a caller's 64-bit token, handed back with its
/// events.
pub struct Epoll {
    fd: OwnedFd,
}

/// An empty event array entry, for buffers `wait` fills.
pub const NO_EVENT: libc::epoll_event = libc::epoll_event { events: 0, u64: 0 };

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain epoll_create1(2); the fd is owned right after.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: fd is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Epoll { fd })
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: ev is a live epoll_event for the duration of the call; epoll_ctl does not keep it.
        cvt(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut ev) }).map(|_| ())
    }

    /// Adds `fd` with the event mask `events` (EPOLLIN, EPOLLET, EPOLLONESHOT ...).
    pub fn add(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd, events, token)
    }

    /// Replaces the event mask of `fd`; for an EPOLLONESHOT registration this re-arms it, and an
    /// event already pending on the fd is reported at once.
    pub fn modify(&self, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd, events, token)
    }

    pub fn delete(&self, fd: RawFd) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Waits up to `timeout_ms` (-1: no limit, 0: just look) and fills `events`; returns how many.
    /// An interrupted wait returns 0 events.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout_ms: i32) -> io::Result<usize> {
        let max = events.len().min(i32::MAX as usize) as libc::c_int;
        // SAFETY: the kernel writes at most `max` entries into `events`, which has room for them.
        let n = unsafe { libc::epoll_wait(self.fd.as_raw_fd(), events.as_mut_ptr(), max, timeout_ms) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(0)
            } else {
                Err(e)
            };
        }
        Ok(n as usize)
    }
}

/// An eventfd used as a latch: once signalled it stays readable (nobody reads it), so every
/// epoll set it is in reports it to every waiter from then on.
pub struct Latch {
    fd: OwnedFd,
}

impl Latch {
    pub fn new() -> io::Result<Latch> {
        // SAFETY: plain eventfd(2); the fd is owned right after.
        let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })?;
        // SAFETY: fd is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Latch { fd })
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    pub fn set(&self) -> io::Result<()> {
        let one: u64 = 1;
        // SAFETY: writes the 8 bytes of a live u64, as eventfd requires.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), &one as *const u64 as *const libc::c_void, 8) };
        if n == 8 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_latch_wakes_every_waiter_of_a_level_triggered_set() {
        let ep = std::sync::Arc::new(Epoll::new().unwrap());
        let latch = Latch::new().unwrap();
        ep.add(latch.raw(), libc::EPOLLIN as u32, 42).unwrap();
        let mut ev = [NO_EVENT; 4];
        assert_eq!(ep.wait(&mut ev, 0).unwrap(), 0, "not set yet");
        let waiters: Vec<_> = (0..4)
            .map(|_| {
                let ep = ep.clone();
                std::thread::spawn(move || {
                    let mut ev = [NO_EVENT; 1];
                    let n = ep.wait(&mut ev, 10_000).unwrap();
                    (n, { ev[0].u64 })
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(50));
        latch.set().unwrap();
        for w in waiters {
            assert_eq!(w.join().unwrap(), (1, 42));
        }
        assert_eq!(ep.wait(&mut ev, 0).unwrap(), 1, "still set");
    }
}
