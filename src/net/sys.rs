//! The few socket operations std does not offer: non-blocking connect, socket options, readiness
//! polls, and the gathered non-blocking `sendmsg` / `recvmsg` of the stripes and the control
//! connection (the send with MSG_NOSIGNAL, so a dead peer is EPIPE, never SIGPIPE in the host
//! process: a `writev` cannot pass it). Everything else uses `std::net` (whose writes pass
//! MSG_NOSIGNAL on Linux too).
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};

fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn sockaddr_of(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain old data; zero is a valid bit pattern.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { std::ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in, sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            unsafe { std::ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in6, sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

/// Starts a TCP connection without waiting for it: the returned stream is non-blocking and may
/// still be connecting; `connect_finished` says when it is usable. `traffic_class` (the IP TOS
/// byte, see [`set_traffic_class`]) is set before `connect(2)`, so every packet of the
/// connection carries it, the SYN included.
pub fn connect_start(addr: &SocketAddr, traffic_class: Option<u8>) -> io::Result<TcpStream> {
    let family = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    // SAFETY: plain socket(2) call; the fd is owned by the TcpStream right after.
    let fd = cvt(unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: fd is a fresh socket we own; TcpStream takes ownership and closes it on drop.
    let stream = unsafe { TcpStream::from_raw_fd(fd) };
    if let Some(class) = traffic_class {
        set_traffic_class(&stream, addr.is_ipv4(), class)
            .map_err(|e| io::Error::new(e.kind(), format!("setting traffic class {class:#x}: {e}")))?;
    }
    let (storage, len) = sockaddr_of(addr);
    // SAFETY: storage/len describe a valid sockaddr for this family.
    let ret = unsafe { libc::connect(fd, &storage as *const _ as *const libc::sockaddr, len) };
    if ret < 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(err);
        }
    }
    Ok(stream)
}

/// Whether a connect started by `connect_start` has completed; an error if it failed.
pub fn connect_finished(stream: &TcpStream) -> io::Result<bool> {
    if !poll_one(stream, libc::POLLOUT, 0)? {
        return Ok(false);
    }
    match stream.take_error()? {
        Some(err) => Err(err),
        None => Ok(true),
    }
}

/// Waits up to `timeout_ms` for `events` on the socket (0 = just look).
pub fn poll_one(stream: &TcpStream, events: libc::c_short, timeout_ms: i32) -> io::Result<bool> {
    Ok(poll_events(stream, events, timeout_ms)? != 0)
}

/// Waits up to `timeout_ms` for `events` on the socket (0 = just look); returns the events that
/// happened (POLLERR and POLLHUP are always reported), 0 for none.
pub fn poll_events(stream: &TcpStream, events: libc::c_short, timeout_ms: i32) -> io::Result<libc::c_short> {
    let mut pfd = libc::pollfd {
        fd: stream.as_raw_fd(),
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    let n = cvt(unsafe { libc::poll(&mut pfd, 1, timeout_ms) })?;
    Ok(if n > 0 { pfd.revents } else { 0 })
}

fn set_int_opt(stream: &TcpStream, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
    // SAFETY: passes a pointer to a live c_int and its size.
    cvt(unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            level,
            name,
            &value as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

/// The IP traffic class (the TOS byte: DSCP << 2 | ECN) of the packets this socket sends: IP_TOS
/// on an IPv4 socket, IPV6_TCLASS on an IPv6 one. Linux also derives the socket's queueing
/// priority from it.
fn set_traffic_class(stream: &TcpStream, ipv4: bool, class: u8) -> io::Result<()> {
    match ipv4 {
        true => set_int_opt(stream, libc::IPPROTO_IP, libc::IP_TOS, class.into()),
        false => set_int_opt(stream, libc::IPPROTO_IPV6, libc::IPV6_TCLASS, class.into()),
    }
}

/// Socket buffer sizes; 0 leaves the kernel's autotuning in charge.
pub fn set_buffers(stream: &TcpStream, sndbuf: usize, rcvbuf: usize) -> io::Result<()> {
    for (option, bytes) in [(libc::SO_SNDBUF, sndbuf), (libc::SO_RCVBUF, rcvbuf)] {
        if bytes > 0 {
            set_int_opt(stream, libc::SOL_SOCKET, option, bytes.min(i32::MAX as usize) as i32)?;
        }
    }
    Ok(())
}

/// The socket's SO_RCVBUF as the kernel keeps it: twice what was asked for, after
/// `net.core.rmem_max` capped the request.
pub fn kept_receive_buffer(stream: &TcpStream) -> io::Result<usize> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: passes a pointer to a live c_int and its size, which getsockopt writes at most.
    cvt(unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            &mut value as *mut libc::c_int as *mut libc::c_void,
            &mut len,
        )
    })?;
    Ok(value.max(0) as usize)
}

/// Bytes in the socket's send queue that the peer's kernel has not acknowledged (SIOCOUTQ: not
/// yet sent, or sent and not acknowledged).
pub fn unacknowledged(fd: RawFd) -> io::Result<usize> {
    let mut value: libc::c_int = 0;
    // SAFETY: TIOCOUTQ (SIOCOUTQ) writes one c_int through the pointer, which is live.
    cvt(unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut value as *mut libc::c_int) })?;
    Ok(value.max(0) as usize)
}

/// Makes a dead or unreachable peer an error within about `timeout_ms`, even when no data flows
/// (keepalive) or when sent data stays unacknowledged (TCP_USER_TIMEOUT).
pub fn set_peer_timeout(stream: &TcpStream, timeout_ms: u64) -> io::Result<()> {
    let secs = ((timeout_ms / 1000).max(1)) as libc::c_int;
    set_int_opt(stream, libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1)?;
    set_int_opt(stream, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, secs)?;
    set_int_opt(stream, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, 1)?;
    set_int_opt(stream, libc::IPPROTO_TCP, libc::TCP_KEEPCNT, secs.max(3))?;
    set_int_opt(
        stream,
        libc::IPPROTO_TCP,
        libc::TCP_USER_TIMEOUT,
        timeout_ms.min(i32::MAX as u64) as i32,
    )
}

/// One `sendmsg` from the gathered `iov` without blocking and without SIGPIPE: the bytes the
/// socket took, or `WouldBlock` when it took none.
///
/// # Safety
/// Every entry of `iov` must describe memory readable for its whole length during the call.
pub unsafe fn send_iov(fd: RawFd, iov: &[libc::iovec]) -> io::Result<usize> {
    // SAFETY: msghdr is plain old data; zero is a valid bit pattern (no name, no control data).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = iov.len() as _;
    // SAFETY: msg names `iov`, which the caller guarantees readable; sendmsg only reads it.
    let n = unsafe { libc::sendmsg(fd, &msg, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// One `recvmsg` into the scattered `iov` without blocking: the bytes read (0 when the peer has
/// closed), or `WouldBlock` when none are there.
///
/// # Safety
/// Every entry of `iov` must describe memory writable for its whole length during the call, and
/// not borrowed by anyone else meanwhile.
pub unsafe fn recv_iov(fd: RawFd, iov: &[libc::iovec]) -> io::Result<usize> {
    // SAFETY: msghdr is plain old data; zero is a valid bit pattern (no name, no control data).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = iov.len() as _;
    // SAFETY: msg names `iov`, which the caller guarantees writable and unaliased.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
