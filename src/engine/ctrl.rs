//! The control connection of a comm: tcpxr's own TCP socket, driven without blocking from NCCL's
//! thread. Outgoing bytes queue and drain as the socket allows; incoming bytes are read on demand.
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
}

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

    /// Reads what is available into `buf`; Ok(0) means nothing yet. A closed connection is an error.
    pub fn read_some(&mut self, buf: &mut [u8]) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
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

    /// Fills `buf[*got..]` as far as possible; true once full.
    pub fn read_into(&mut self, buf: &mut [u8], got: &mut usize) -> Result<bool> {
        while *got < buf.len() {
            let n = self.read_some(&mut buf[*got..])?;
            if n == 0 {
                return Ok(false);
            }
            *got += n;
        }
        Ok(true)
    }
}

fn control_error(dir: Direction, e: std::io::Error) -> Error {
    let mut err = stripe_error(dir, e);
    err.msg = err.msg.replacen("stripe", "control connection", 1);
    err
}
