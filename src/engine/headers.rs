//! A receive comm's reading of message headers from its control connection, in order, one at a
//! time: exactly a header, or (into host memory) a header and the small inline payload behind it
//! in one gathered recv.
//!
//! **Why gathered.** Exact reads cost a small message two recvs, and a header's recv took 1.4 us
//! on an H200 host (run 397). The gathered recv reads the header and, straight into NCCL's
//! buffer, as many bytes as the last message's inline payload was: a connection's messages mostly
//! repeat their size, so a small message takes one recv, its payload still lands inside the call
//! (before the recv sends the ACK it owes, ctrl.rs), and the next message stays in the socket.
//! After a message over the stripes it reads the header alone.
//!
//! **What it takes past the message.** Where this message is smaller than the last, the recv
//! took bytes of the next one: they go back to the control connection (`Ctrl::unread`; later
//! reads take them first), and the buffer past the message is restored from a copy taken before
//! the recv ([`Past`]), so a receive never changes a byte past its size. NCCL's LL kernels lean on
//! that: they tell data from stale bytes by flags that count steps, and a later message's bytes
//! left in a buffer (where a line is cut, payload where a flag belongs) could one day pass for a
//! step's. NCCL's kernel reads only the message's own bytes of a receive, and posts the buffer
//! again only once the receive is done, on the thread that reads here: no kernel sees the later
//! bytes before they are put back. A header that fails its checks restores the whole read.
use super::ctrl::Ctrl;
use super::wire::{MsgHeader, MSG_HEADER_BYTES};
use crate::error::Result;

/// The most of a receive's buffer that the read of its header also reads into. A small
/// message's time is mostly calls; a larger payload's is its copy. The sizes where tcpxr trailed
/// Socket by a microsecond (8-256 B, LL's lines twice that) fit, and LL's 2 KiB messages of a 1
/// KiB share (read in two at 1 KiB, they took 1.05-1.11x as long, runs 420 and 422).
const GATHERED_PAYLOAD_BYTES: usize = 4096;

/// A receive's buffer, where the header's read may also put its payload: host memory NCCL
/// posted, and how much of it.
pub struct HostBuf {
    pub ptr: *mut u8,
    pub capacity: usize,
}

/// A header read whole: decoded (or why not), and how many bytes of its inline payload are in
/// place already.
pub struct Read {
    pub header: Result<MsgHeader>,
    pub payload_got: usize,
}

#[derive(Default)]
pub struct Headers {
    header: [u8; MSG_HEADER_BYTES],
    got: usize,
    /// The last message's inline payload size (0 after one over the stripes): the next header's
    /// read also reads that much.
    last_inline: usize,
    past: Past,
}

impl Headers {
    /// Reads the header of receive `seq` as far as the socket has it; None until it is whole.
    /// `into`: the receive's buffer when it is host memory in place (else its header is read
    /// alone); `inline_limit`: the largest inline payload this side accepts.
    ///
    /// # Safety
    /// `into` is NCCL's posted buffer, writable for `capacity` bytes and touched by no one else
    /// until the receive is reported done (irecv's contract), and by no stripe before its header
    /// is read (chunks are issued after).
    pub unsafe fn read(
        &mut self,
        ctrl: &mut Ctrl,
        seq: u64,
        into: Option<HostBuf>,
        inline_limit: usize,
    ) -> Result<Option<Read>> {
        let then_len = match &into {
            Some(b) if self.last_inline <= inline_limit.min(GATHERED_PAYLOAD_BYTES) => self.last_inline.min(b.capacity),
            _ => 0,
        };
        let took = match (then_len, &into) {
            (n @ 1.., Some(b)) => {
                // SAFETY: the caller's buffer, writable for at least `n` <= capacity bytes.
                let then = unsafe { std::slice::from_raw_parts_mut(b.ptr, n) };
                self.past.keep(seq, then);
                ctrl.read_header_then(&mut self.header, &mut self.got, then)?
            }
            _ => {
                ctrl.read_into(&mut self.header, &mut self.got)?;
                0
            }
        };
        if self.got < MSG_HEADER_BYTES {
            return Ok(None);
        }
        self.got = 0;
        let header = MsgHeader::decode(&self.header);
        let mut payload_got = 0;
        if let (1.., Some(b)) = (took, &into) {
            // What the read took is this message's payload only under a header the receive
            // accepts (the caller checks it, once the buffer is as it was past the payload).
            payload_got = match &header {
                Ok(h) if h.inline && h.seq == seq as u32 && h.size <= b.capacity.min(inline_limit) as u64 => {
                    took.min(h.size as usize)
                }
                _ => 0,
            };
            // SAFETY: the caller's buffer, which read_header_then just wrote `took` bytes into.
            let then = unsafe { std::slice::from_raw_parts_mut(b.ptr, took) };
            self.past.give_back(ctrl, then, payload_got);
        }
        if let Ok(h) = &header {
            self.last_inline = if h.inline { h.size as usize } else { 0 };
        }
        Ok(Some(Read { header, payload_got }))
    }
}

/// What a receive's buffer held where the read of its header may write past the message (module
/// doc), kept once per receive: nothing else writes the buffer until the receive is done.
#[derive(Default)]
struct Past {
    bytes: Vec<u8>,
    /// The receive they are of.
    seq: Option<u64>,
}

impl Past {
    fn keep(&mut self, seq: u64, buf: &[u8]) {
        if self.seq != Some(seq) {
            self.bytes.clear();
            self.bytes.extend_from_slice(buf);
            self.seq = Some(seq);
        }
    }

    /// `buf`: the bytes the header's read put into the receive's buffer, of which the first
    /// `own` are its payload's; hands the rest back to `ctrl` and restores them.
    fn give_back(&mut self, ctrl: &mut Ctrl, buf: &mut [u8], own: usize) {
        if own < buf.len() {
            ctrl.unread(&buf[own..]);
            let end = buf.len();
            buf[own..].copy_from_slice(&self.bytes[own..end]);
        }
        self.seq = None;
    }
}

#[cfg(test)]
mod tests {
    use super::super::ctrl::loopback_pair as pair;
    use super::*;
    use std::io::Write;

    fn message(seq: u32, payload: &[u8]) -> Vec<u8> {
        let h = MsgHeader {
            size: payload.len() as u64,
            seq,
            inline: true,
            chunk: 0,
        };
        [&h.encode()[..], payload].concat()
    }

    /// Reads receive `seq`'s header into `buf` until it is whole.
    fn read(headers: &mut Headers, ctrl: &mut Ctrl, seq: u64, buf: &mut [u8]) -> Read {
        let start = std::time::Instant::now();
        loop {
            let into = Some(HostBuf {
                ptr: buf.as_mut_ptr(),
                capacity: buf.len(),
            });
            // SAFETY: `buf` is this test's, borrowed by nobody else while the header is read.
            if let Some(r) = unsafe { headers.read(ctrl, seq, into, 1 << 20) }.unwrap() {
                return r;
            }
            assert!(start.elapsed().as_secs() < 5, "no header arrived");
        }
    }

    /// After a message of 8 bytes the next header's read also reads 8 bytes into the buffer: a
    /// receive too small for its message, or a header out of step, gets its buffer back as it
    /// was, and the bytes read go back to the control connection.
    #[test]
    fn a_header_the_receive_refuses_leaves_its_buffer_as_it_was() {
        let (mut ctrl, mut w) = pair();
        let mut headers = Headers::default();
        let first: Vec<u8> = (1..=8).collect();
        w.write_all(&message(0, &first)).unwrap();
        let mut buf = [0xEEu8; 64];
        let r = read(&mut headers, &mut ctrl, 0, &mut buf);
        assert_eq!(
            (r.header.unwrap().size, r.payload_got),
            (8, 0),
            "the first header comes alone"
        );
        let mut got = 0;
        while !ctrl.read_into(&mut buf[..8], &mut got).unwrap() {}
        // 100 bytes for a receive of 64; then 8 bytes for receive 2 where 3 was expected.
        let second: Vec<u8> = (100..200).collect();
        w.write_all(&[message(1, &second), message(2, &first)].concat())
            .unwrap();
        for (seq, size, payload) in [(1u64, 100u64, &second), (3, 8, &first)] {
            let mut buf = [0xEEu8; 64];
            let r = read(&mut headers, &mut ctrl, seq, &mut buf);
            assert_eq!((r.header.unwrap().size, r.payload_got), (size, 0), "receive {seq}");
            assert!(buf.iter().all(|b| *b == 0xEE), "receive {seq}: its buffer was written");
            // What the read took comes back first: the payload, whole and in order.
            let (mut out, mut got) = (vec![0u8; payload.len()], 0);
            while !ctrl.read_into(&mut out, &mut got).unwrap() {}
            assert_eq!(&out, payload, "receive {seq}");
        }
    }

    /// A message of the size of the last one comes with its header, and leaves the next in the
    /// socket; a smaller one takes some of the next, which is handed back.
    #[test]
    fn a_payload_of_the_last_size_comes_with_its_header() {
        let (mut ctrl, mut w) = pair();
        let mut headers = Headers::default();
        let p: Vec<Vec<u8>> = [8usize, 8, 3, 5]
            .iter()
            .map(|&n| (0..n as u8).map(|b| b + 10 * n as u8).collect())
            .collect();
        let stream: Vec<u8> = p.iter().enumerate().flat_map(|(i, m)| message(i as u32, m)).collect();
        w.write_all(&stream).unwrap();
        for (seq, want) in p.iter().enumerate() {
            let mut buf = [0xEEu8; 64];
            let r = read(&mut headers, &mut ctrl, seq as u64, &mut buf);
            assert_eq!(r.header.unwrap().size as usize, want.len());
            // Message 0's header comes alone (nothing before it), 1 with its payload (8 after
            // 8), 2 with its 3 bytes and 5 of message 3's header handed back, 3's header from
            // those and the socket, alone.
            assert_eq!(r.payload_got, [0, 8, 3, 0][seq], "message {seq}");
            assert!(
                buf[r.payload_got..].iter().all(|b| *b == 0xEE),
                "message {seq}: past its bytes"
            );
            let mut got = r.payload_got;
            while !ctrl.read_into(&mut buf[..want.len()], &mut got).unwrap() {}
            assert_eq!(&buf[..want.len()], &want[..], "message {seq}");
        }
    }
}
