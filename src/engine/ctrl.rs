//! The control connection of a comm: tcpxr's own TCP socket, driven without blocking from NCCL's
//! thread. Outgoing bytes queue and drain as the socket allows; incoming bytes are read on demand,
//! through a small read-ahead buffer so that a message header and its inline payload (the whole
//! of a small message) cost one recv instead of two.
use crate::error::{Error, Result};
use crate::transport::socket::stripe::{stripe_error, Direction};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;

pub struct Ctrl {
    stream: TcpStream,
    out: Vec<u8>,
    out_pos: usize,
    /// Bytes ever queued / ever written, so callers can ask "is my message out yet?".
    queued: u64,
    written: u64,
    /// Bytes received but not yet handed out: `inbuf[in_pos..in_len]`.
    inbuf: Box<[u8]>,
    in_pos: usize,
    in_len: usize,
}

/// Read-ahead buffer size: a header plus a default-sized inline payload (16 KiB) in one recv;
/// larger reads go straight to their destination.
const READ_AHEAD: usize = 32 << 10;

impl Ctrl {
    pub fn new(stream: TcpStream) -> Result<Self> {
        stream
            .set_nonblocking(true)
            .map_err(|e| Error::os("set_nonblocking", e))?;
        stream.set_nodelay(true).map_err(|e| Error::os("TCP_NODELAY", e))?;
        Ok(Ctrl {
            stream,
            out: Vec::new(),
            out_pos: 0,
            queued: 0,
            written: 0,
            inbuf: vec![0u8; READ_AHEAD].into_boxed_slice(),
            in_pos: 0,
            in_len: 0,
        })
    }

    /// Queues bytes; returns the stream offset at which they end.
    pub fn queue(&mut self, bytes: &[u8]) -> u64 {
        self.out.extend_from_slice(bytes);
        self.queued += bytes.len() as u64;
        self.queued
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    pub fn idle(&self) -> bool {
        self.out_pos == self.out.len()
    }

    /// Writes as much of the queue as the socket takes now.
    pub fn flush(&mut self) -> Result<()> {
        while self.out_pos < self.out.len() {
            match (&self.stream).write(&self.out[self.out_pos..]) {
                Ok(n) => {
                    self.out_pos += n;
                    self.written += n as u64;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(control_error(Direction::Send, e)),
            }
        }
        self.out.clear();
        self.out_pos = 0;
        Ok(())
    }

    /// One non-blocking recv into `buf`; Ok(0) means nothing yet. A closed connection is an error.
    fn recv_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        loop {
            match (&self.stream).read(buf) {
                Ok(0) => return Err(Error::remote("control connection closed by peer")),
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(0),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(control_error(Direction::Recv, e)),
            }
        }
    }

    /// Fills `buf[*got..]` as far as possible; true once full. Serves buffered bytes first; a
    /// remainder at least as large as the read-ahead buffer is read straight into `buf`.
    pub fn read_into(&mut self, buf: &mut [u8], got: &mut usize) -> Result<bool> {
        while *got < buf.len() {
            if self.in_pos < self.in_len {
                let n = (self.in_len - self.in_pos).min(buf.len() - *got);
                buf[*got..*got + n].copy_from_slice(&self.inbuf[self.in_pos..self.in_pos + n]);
                self.in_pos += n;
                *got += n;
                continue;
            }
            let want = buf.len() - *got;
            if want >= self.inbuf.len() {
                let n = self.recv_some(&mut buf[*got..])?;
                if n == 0 {
                    return Ok(false);
                }
                *got += n;
                continue;
            }
            let mut inbuf = std::mem::take(&mut self.inbuf);
            let n = self.recv_some(&mut inbuf);
            self.inbuf = inbuf;
            let n = n?;
            if n == 0 {
                return Ok(false);
            }
            (self.in_pos, self.in_len) = (0, n);
        }
        Ok(true)
    }
}

fn control_error(dir: Direction, e: std::io::Error) -> Error {
    let mut err = stripe_error(dir, e);
    err.msg = err.msg.replacen("stripe", "control connection", 1);
    err
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    fn pair() -> (Ctrl, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let writer = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (reader, _) = l.accept().unwrap();
        (Ctrl::new(reader).unwrap(), writer)
    }

    fn read_all(c: &mut Ctrl, buf: &mut [u8]) {
        let mut got = 0;
        let start = std::time::Instant::now();
        while !c.read_into(buf, &mut got).unwrap() {
            assert!(
                start.elapsed().as_secs() < 5,
                "only {got} of {} bytes arrived",
                buf.len()
            );
        }
    }

    #[test]
    fn reads_split_across_read_ahead_and_direct_paths_keep_every_byte_in_order() {
        let (mut c, mut w) = pair();
        let big: Vec<u8> = (0..3 * READ_AHEAD + 7).map(|i| (i * 31 % 251) as u8).collect();
        // A header and a small payload in one write, then a large payload, then a trailer.
        w.write_all(b"0123456789abcdefSMALL").unwrap();
        w.write_all(&big).unwrap();
        w.write_all(b"END").unwrap();
        let mut header = [0u8; 16];
        read_all(&mut c, &mut header);
        assert_eq!(&header, b"0123456789abcdef");
        let mut small = [0u8; 5];
        read_all(&mut c, &mut small);
        assert_eq!(&small, b"SMALL");
        let mut got = vec![0u8; big.len()];
        read_all(&mut c, &mut got);
        assert!(got == big);
        let mut end = [0u8; 3];
        read_all(&mut c, &mut end);
        assert_eq!(&end, b"END");
        // Nothing more: not an error, just not yet.
        let mut more = [0u8; 1];
        assert!(!c.read_into(&mut more, &mut 0).unwrap());
        drop(w);
        let start = std::time::Instant::now();
        let err = loop {
            match c.read_into(&mut more, &mut 0) {
                Err(e) => break e,
                Ok(_) => assert!(start.elapsed().as_secs() < 5),
            }
        };
        assert_eq!(err.code, crate::abi::ncclResult_t::ncclRemoteError);
    }
}
