//! Every byte format of the RMA group: the handle NCCL exchanges, the hello a connecting rank
//! sends, and the 48-byte header before every operation on a peer connection.
use crate::error::{Error, Result};
use crate::net::addr;
use std::net::SocketAddr;

pub const HANDLE_MAGIC: u32 = 0x414d_5254; // "TRMA" little-endian
/// 2: the handle says how many connections the listener takes from each connecting rank, and the
/// hello which of them it is.
pub const VERSION: u16 = 2;

/// NCCL's handle: magic, version, connections per connecting rank, the listener's nonce and
/// address.
#[derive(Debug)]
pub struct Handle {
    pub nonce: u64,
    /// Connections (lanes) the listener takes from each rank that connects to it.
    pub lanes: u16,
    pub addr: SocketAddr,
}

impl Handle {
    pub fn write(&self, out: &mut [u8; 128]) {
        out.fill(0);
        out[0..4].copy_from_slice(&HANDLE_MAGIC.to_le_bytes());
        out[4..6].copy_from_slice(&VERSION.to_le_bytes());
        out[6..8].copy_from_slice(&self.lanes.to_le_bytes());
        out[8..16].copy_from_slice(&self.nonce.to_le_bytes());
        addr::encode(&self.addr, &mut out[16..16 + addr::ADDR_BYTES]);
    }

    pub fn read(h: &[u8; 128], rank: usize) -> Result<Handle> {
        let magic = u32::from_le_bytes(h[0..4].try_into().unwrap());
        let version = u16::from_le_bytes(h[4..6].try_into().unwrap());
        if magic != HANDLE_MAGIC || version != VERSION {
            return Err(Error::invalid_argument(format!(
                "rank {rank}'s handle is not a tcpxr RMA handle of version {VERSION} (magic {magic:#x}, version {version})"
            )));
        }
        let addr = addr::decode(&h[16..16 + addr::ADDR_BYTES])
            .ok_or_else(|| Error::invalid_argument(format!("rank {rank}'s handle carries no valid address")))?;
        let lanes = u16::from_le_bytes([h[6], h[7]]);
        if lanes == 0 {
            return Err(Error::invalid_argument(format!(
                "rank {rank}'s handle asks for no connections"
            )));
        }
        Ok(Handle {
            nonce: u64::from_le_bytes(h[8..16].try_into().unwrap()),
            lanes,
            addr,
        })
    }
}

pub const HELLO_BYTES: usize = 28;

/// What a connecting rank sends first on each of its connections to a listener: magic, version,
/// the listener's nonce, its rank, the group's size, which connection (lane) this is and how many
/// it opens.
pub fn hello(nonce: u64, rank: u32, nranks: u32, lane: u16, lanes: u16) -> [u8; HELLO_BYTES] {
    let mut b = [0u8; HELLO_BYTES];
    b[0..4].copy_from_slice(&HANDLE_MAGIC.to_le_bytes());
    b[4..6].copy_from_slice(&VERSION.to_le_bytes());
    b[8..16].copy_from_slice(&nonce.to_le_bytes());
    b[16..20].copy_from_slice(&rank.to_le_bytes());
    b[20..24].copy_from_slice(&nranks.to_le_bytes());
    b[24..26].copy_from_slice(&lane.to_le_bytes());
    b[26..28].copy_from_slice(&lanes.to_le_bytes());
    b
}

/// The connecting rank and lane a hello names, if it carries `nonce`, the group's size and the
/// listener's number of lanes.
pub fn read_hello(b: &[u8], nonce: u64, nranks: u32, lanes: u16) -> std::result::Result<(u32, u16), String> {
    let b: &[u8; HELLO_BYTES] = b.try_into().map_err(|_| "short hello".to_string())?;
    let magic = u32::from_le_bytes(b[0..4].try_into().unwrap());
    let version = u16::from_le_bytes(b[4..6].try_into().unwrap());
    if magic != HANDLE_MAGIC || version != VERSION {
        return Err(format!(
            "not a tcpxr RMA hello of version {VERSION} (magic {magic:#x}, version {version})"
        ));
    }
    if u64::from_le_bytes(b[8..16].try_into().unwrap()) != nonce {
        return Err("wrong nonce".into());
    }
    let their_n = u32::from_le_bytes(b[20..24].try_into().unwrap());
    if their_n != nranks {
        return Err(format!("group of {their_n} ranks, this one has {nranks}"));
    }
    let lane = u16::from_le_bytes([b[24], b[25]]);
    let their_lanes = u16::from_le_bytes([b[26], b[27]]);
    if their_lanes != lanes || lane >= lanes {
        return Err(format!(
            "connection {lane} of {their_lanes}, where this listener takes {lanes} from each rank"
        ));
    }
    Ok((u32::from_le_bytes(b[16..20].try_into().unwrap()), lane))
}

pub const HEADER_BYTES: usize = 48;
const HEADER_MAGIC: u16 = 0x4d52; // "RM"

/// The operations a peer connection carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `len` payload bytes for window `win` at `offset`, then the signal if `signal` is set.
    Put = 1,
    /// The sender's window number `win` (its registration order in the group) has `len`
    /// bytes: sent to every peer at regMrSym.
    Reg = 2,
    /// Send back `len` bytes of window `win` at `offset`.
    GetReq = 3,
    /// `len` payload bytes answering the oldest GetReq.
    GetResp = 4,
}

/// A signal carried by a Put, applied once the put's bytes have landed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signal {
    pub win: u32,
    pub offset: u64,
    /// What is added (NCCL_NET_SIGNAL_OP_INC is an add of 1).
    pub add: u64,
    pub strong: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub op: Op,
    pub context: u32,
    pub win: u32,
    pub offset: u64,
    pub len: u64,
    pub signal: Option<Signal>,
}

const FLAG_SIGNAL: u8 = 1;
const FLAG_STRONG: u8 = 2;

impl Header {
    pub fn encode(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        b[0..2].copy_from_slice(&HEADER_MAGIC.to_le_bytes());
        b[2] = self.op as u8;
        let s = self.signal.unwrap_or(Signal {
            win: 0,
            offset: 0,
            add: 0,
            strong: false,
        });
        b[3] = match self.signal {
            Some(s) if s.strong => FLAG_SIGNAL | FLAG_STRONG,
            Some(_) => FLAG_SIGNAL,
            None => 0,
        };
        b[4..8].copy_from_slice(&self.context.to_le_bytes());
        b[8..12].copy_from_slice(&self.win.to_le_bytes());
        b[12..16].copy_from_slice(&s.win.to_le_bytes());
        b[16..24].copy_from_slice(&self.offset.to_le_bytes());
        b[24..32].copy_from_slice(&self.len.to_le_bytes());
        b[32..40].copy_from_slice(&s.offset.to_le_bytes());
        b[40..48].copy_from_slice(&s.add.to_le_bytes());
        b
    }

    /// A header as the peer sent it; anything malformed is the peer's error.
    pub fn decode(b: &[u8; HEADER_BYTES]) -> Result<Header> {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        if u16::from_le_bytes([b[0], b[1]]) != HEADER_MAGIC {
            return Err(Error::remote("RMA peer connection out of step: bad header magic"));
        }
        let op = match b[2] {
            1 => Op::Put,
            2 => Op::Reg,
            3 => Op::GetReq,
            4 => Op::GetResp,
            other => return Err(Error::remote(format!("RMA peer sent unknown operation {other}"))),
        };
        let flags = b[3];
        let signal = (flags & FLAG_SIGNAL != 0).then(|| Signal {
            win: u32_at(12),
            offset: u64_at(32),
            add: u64_at(40),
            strong: flags & FLAG_STRONG != 0,
        });
        Ok(Header {
            op,
            context: u32_at(4),
            win: u32_at(8),
            offset: u64_at(16),
            len: u64_at(24),
            signal,
        })
    }

    /// Payload bytes that follow the header on the wire.
    pub fn payload(&self) -> u64 {
        match self.op {
            Op::Put | Op::GetResp => self.len,
            Op::Reg | Op::GetReq => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_garbage_is_a_remote_error() {
        let h = Header {
            op: Op::Put,
            context: 3,
            win: 7,
            offset: 1 << 40,
            len: 12345,
            signal: Some(Signal {
                win: 2,
                offset: 64,
                add: 9,
                strong: true,
            }),
        };
        assert_eq!(Header::decode(&h.encode()).unwrap(), h);
        let g = Header {
            op: Op::GetReq,
            signal: None,
            ..h
        };
        assert_eq!(Header::decode(&g.encode()).unwrap(), g);
        assert_eq!(g.payload(), 0);
        let mut bad = h.encode();
        bad[2] = 99;
        assert_eq!(
            Header::decode(&bad).unwrap_err().code,
            crate::abi::ncclResult_t::ncclRemoteError
        );
        assert!(Header::decode(&[0u8; HEADER_BYTES]).is_err());
    }

    #[test]
    fn handles_and_hellos_check_magic_nonce_and_size() {
        let mut buf = [0u8; 128];
        Handle {
            nonce: 42,
            lanes: 3,
            addr: "127.0.0.1:4000".parse().unwrap(),
        }
        .write(&mut buf);
        let h = Handle::read(&buf, 0).unwrap();
        assert_eq!((h.nonce, h.lanes, h.addr.port()), (42, 3, 4000));
        assert!(Handle::read(&[0u8; 128], 1).unwrap_err().msg.contains("rank 1"));
        buf[6..8].fill(0);
        assert!(Handle::read(&buf, 2).unwrap_err().msg.contains("no connections"));
        let hi = hello(42, 3, 4, 2, 3);
        assert_eq!(read_hello(&hi, 42, 4, 3), Ok((3, 2)));
        assert!(read_hello(&hi, 41, 4, 3).is_err());
        assert!(read_hello(&hi, 42, 5, 3).is_err());
        assert!(read_hello(&hi, 42, 4, 2).unwrap_err().contains("takes 2"));
        assert!(read_hello(&hello(42, 3, 4, 3, 3), 42, 4, 3).is_err(), "lane 3 of 3");
    }
}
