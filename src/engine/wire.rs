//! Everything tcpxr puts on the wire or in a handle, in one place.
//!
//! * The NCCL handle (128 bytes, exchanged by NCCL's bootstrap): where the listener's control
//!   socket is, the stripe count and chunk size the listener chose, the largest inline payload it
//!   accepts, and a random nonce the connecting side must present.
//! * Hello (connector -> listener, first bytes on the control connection) and Welcome (listener ->
//!   connector: stripes, chunk size, then one inner handle per stripe).
//! * A message header per NCCL message on the control connection: {size, sequence, flags}; the
//!   flags say whether the payload follows inline and may name the message's own chunk size.
//!
//! All integers are little-endian.
//!
//! Every decoder here takes bytes from the peer (the handle travels through NCCL's bootstrap, the
//! rest over the control connection) and treats them as hostile: it never panics, whatever the
//! bytes and their length, and every count or size it returns is bounded by a constant below
//! ([`MAX_STRIPES`], [`MAX_CHUNK_BYTES`], [`MAX_INLINE_BYTES`]), so nothing the peer says sizes an
//! allocation beyond [`MAX_WELCOME_BYTES`]. tests/fuzz_decoders.rs drives them with millions of
//! hostile inputs.
use crate::error::{Error, Result};
use crate::net::addr;
use crate::transport::{InnerHandle, INNER_HANDLE_BYTES};
use std::net::SocketAddr;

pub const MAGIC: u32 = 0x5258_4354; // "TCXR" little-endian
/// 2: the handle carries the receiver's inline limit (bytes 12..16). 3: a message header may name
/// the message's own chunk size ([`MsgHeader::chunk`]).
pub const VERSION: u16 = 3;
pub const HANDLE_BYTES: usize = 128;
/// Largest inline payload either side may announce (NCCL_TCPXR_INLINE_BYTES's upper bound), defined
/// with the settings it bounds.
pub use crate::config::MAX_INLINE_BYTES;
/// Most stripes a handle may ask for (NCCL_TCPXR_STRIPES accepts 1-16; the margin is for peers of
/// other versions). It bounds the inner handles the connecting side allocates for and reads.
pub const MAX_STRIPES: u16 = 64;
/// Largest chunk a handle may ask for (NCCL_TCPXR_CHUNK_BYTES's upper bound): the connecting side
/// sizes its GPU staging slots by it.
pub const MAX_CHUNK_BYTES: u32 = 16 << 20;
/// Largest welcome: its head and [`MAX_STRIPES`] inner handles (8 KiB).
pub const MAX_WELCOME_BYTES: usize = WELCOME_HEAD_BYTES + MAX_STRIPES as usize * INNER_HANDLE_BYTES;

/// Where the connecting side keeps its in-progress state between connect() calls: NCCL calls
/// connect again with the same handle buffer until it returns a comm.
pub const HANDLE_TICKET_OFFSET: usize = 48;

#[derive(Clone, Debug, PartialEq)]
pub struct ListenHandle {
    pub ctrl: SocketAddr,
    pub stripes: u16,
    pub chunk_bytes: u32,
    /// Largest payload the receiver takes inline on the control connection: it sizes its landing
    /// memory for payloads bound for GPU memory by this, so the sender never inlines more.
    pub inline_bytes: u32,
    pub nonce: u64,
}

impl ListenHandle {
    pub fn write(&self, out: &mut [u8; HANDLE_BYTES]) {
        out.fill(0);
        out[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        out[4..6].copy_from_slice(&VERSION.to_le_bytes());
        out[6..8].copy_from_slice(&self.stripes.to_le_bytes());
        out[8..12].copy_from_slice(&self.chunk_bytes.to_le_bytes());
        out[12..16].copy_from_slice(&self.inline_bytes.to_le_bytes());
        addr::encode(&self.ctrl, &mut out[16..16 + addr::ADDR_BYTES]);
        out[40..48].copy_from_slice(&self.nonce.to_le_bytes());
    }

    /// Checks everything a handle must hold; the error says what was wrong.
    pub fn read(h: &[u8; HANDLE_BYTES]) -> Result<Self> {
        let magic = u32::from_le_bytes(h[0..4].try_into().unwrap());
        if magic != MAGIC {
            return Err(Error::invalid_argument(format!(
                "connect handle has magic {magic:#010x}, expected {MAGIC:#010x}: not a tcpxr handle"
            )));
        }
        let version = u16::from_le_bytes([h[4], h[5]]);
        if version != VERSION {
            return Err(Error::invalid_argument(format!(
                "connect handle has protocol version {version}, this tcpxr speaks {VERSION}"
            )));
        }
        let stripes = u16::from_le_bytes([h[6], h[7]]);
        let chunk_bytes = u32::from_le_bytes(h[8..12].try_into().unwrap());
        if !(1..=MAX_STRIPES).contains(&stripes)
            || !(4096..=MAX_CHUNK_BYTES).contains(&chunk_bytes)
            || chunk_bytes % 4096 != 0
        {
            return Err(Error::invalid_argument(format!(
                "connect handle asks for {stripes} stripes of {chunk_bytes}-byte chunks: accepted 1-{MAX_STRIPES} stripes, chunks of 4096-{MAX_CHUNK_BYTES} bytes, a multiple of 4096"
            )));
        }
        let inline_bytes = u32::from_le_bytes(h[12..16].try_into().unwrap());
        if inline_bytes > MAX_INLINE_BYTES {
            return Err(Error::invalid_argument(format!(
                "connect handle announces inline payloads of {inline_bytes} bytes: accepted at most {MAX_INLINE_BYTES}"
            )));
        }
        let ctrl = addr::decode(&h[16..16 + addr::ADDR_BYTES])
            .ok_or_else(|| Error::invalid_argument("connect handle holds no valid address"))?;
        let nonce = u64::from_le_bytes(h[40..48].try_into().unwrap());
        Ok(ListenHandle {
            ctrl,
            stripes,
            chunk_bytes,
            inline_bytes,
            nonce,
        })
    }

    /// Bytes of inner handles the welcome to this handle carries (at most 8 KiB: `read` caps
    /// the stripe count at [`MAX_STRIPES`]).
    pub fn inner_handle_bytes(&self) -> usize {
        self.stripes.min(MAX_STRIPES) as usize * INNER_HANDLE_BYTES
    }
}

pub const HELLO_BYTES: usize = 16;
const KIND_HELLO: u16 = 1;
const KIND_WELCOME: u16 = 2;

pub fn hello(nonce: u64) -> [u8; HELLO_BYTES] {
    let mut b = [0u8; HELLO_BYTES];
    b[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    b[4..6].copy_from_slice(&VERSION.to_le_bytes());
    b[6..8].copy_from_slice(&KIND_HELLO.to_le_bytes());
    b[8..16].copy_from_slice(&nonce.to_le_bytes());
    b
}

/// Why a hello is refused, or Ok if it is exactly [`hello`]`(nonce)`. Any length is taken; only
/// [`HELLO_BYTES`] bytes can be a hello.
pub fn check_hello(b: &[u8], nonce: u64) -> std::result::Result<(), String> {
    let Ok(b) = <&[u8; HELLO_BYTES]>::try_from(b) else {
        return Err(format!("a hello of {} bytes, expected {HELLO_BYTES}", b.len()));
    };
    let magic = u32::from_le_bytes(b[0..4].try_into().unwrap());
    let version = u16::from_le_bytes([b[4], b[5]]);
    let kind = u16::from_le_bytes([b[6], b[7]]);
    let got = u64::from_le_bytes(b[8..16].try_into().unwrap());
    if magic != MAGIC || kind != KIND_HELLO {
        return Err(format!("not a tcpxr hello (magic {magic:#010x}, kind {kind})"));
    }
    if version != VERSION {
        return Err(format!("protocol version {version}, this tcpxr speaks {VERSION}"));
    }
    if got != nonce {
        return Err("wrong nonce: the handle it connected with belongs to another listen".into());
    }
    Ok(())
}

pub const WELCOME_HEAD_BYTES: usize = 16;

pub fn welcome(stripes: u16, chunk_bytes: u32, inner: &[InnerHandle]) -> Vec<u8> {
    let mut b = Vec::with_capacity(WELCOME_HEAD_BYTES + inner.len() * INNER_HANDLE_BYTES);
    b.extend_from_slice(&MAGIC.to_le_bytes());
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.extend_from_slice(&KIND_WELCOME.to_le_bytes());
    b.extend_from_slice(&stripes.to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&chunk_bytes.to_le_bytes());
    for h in inner {
        b.extend_from_slice(h);
    }
    b
}

/// Parses a welcome's fixed head; returns (stripes, chunk_bytes), which must be those of the
/// handle the connection was made with (so the inner handles that follow are
/// [`ListenHandle::inner_handle_bytes`]).
pub fn read_welcome_head(b: &[u8; WELCOME_HEAD_BYTES], expected: &ListenHandle) -> Result<(u16, u32)> {
    let magic = u32::from_le_bytes(b[0..4].try_into().unwrap());
    let version = u16::from_le_bytes([b[4], b[5]]);
    let kind = u16::from_le_bytes([b[6], b[7]]);
    let stripes = u16::from_le_bytes([b[8], b[9]]);
    let chunk = u32::from_le_bytes(b[12..16].try_into().unwrap());
    if magic != MAGIC || kind != KIND_WELCOME {
        return Err(Error::remote(format!(
            "peer answered the hello with something else (magic {magic:#x}, kind {kind})"
        )));
    }
    if version != VERSION {
        return Err(Error::remote(format!(
            "peer's welcome has protocol version {version}, this tcpxr speaks {VERSION}"
        )));
    }
    if stripes != expected.stripes || chunk != expected.chunk_bytes {
        return Err(Error::remote(format!(
            "peer's welcome ({stripes} stripes, {chunk} B chunks) contradicts its handle ({} stripes, {} B chunks)",
            expected.stripes, expected.chunk_bytes
        )));
    }
    Ok((stripes, chunk))
}

/// Per-message header on the control connection.
pub const MSG_HEADER_BYTES: usize = 16;
/// The payload follows the header on the control connection instead of going over the stripes.
pub const FLAG_INLINE: u32 = 1;
/// Marks a header as one, so a desynchronised stream is caught instead of misread.
const HEADER_MARK: u32 = 0x7c00_0000;
/// A message's own chunk size travels in flag bits 8..20, in units of 4 KiB (0: the comm's).
const CHUNK_SHIFT: u32 = 8;
const CHUNK_UNIT: u32 = 4096;
const CHUNK_FIELD_MAX: u32 = 0xfff;
/// The largest chunk size a header can name (16 MiB less 4 KiB).
pub const MAX_HEADER_CHUNK: u32 = CHUNK_FIELD_MAX * CHUNK_UNIT;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsgHeader {
    pub size: u64,
    pub seq: u32,
    pub inline: bool,
    /// The size of the chunks this message is cut into, a multiple of 4096 below 16 MiB; 0: the
    /// comm's (the handle's). The receiver cuts it the same way, and refuses one larger than the
    /// comm's: its landing memory is sized by that.
    pub chunk: u32,
}

impl MsgHeader {
    pub fn encode(&self) -> [u8; MSG_HEADER_BYTES] {
        let mut b = [0u8; MSG_HEADER_BYTES];
        b[0..8].copy_from_slice(&self.size.to_le_bytes());
        b[8..12].copy_from_slice(&self.seq.to_le_bytes());
        debug_assert!(self.chunk % CHUNK_UNIT == 0 && self.chunk / CHUNK_UNIT <= CHUNK_FIELD_MAX);
        let chunk_units = (self.chunk / CHUNK_UNIT).min(CHUNK_FIELD_MAX) << CHUNK_SHIFT;
        let flags = HEADER_MARK | chunk_units | if self.inline { FLAG_INLINE } else { 0 };
        b[12..16].copy_from_slice(&flags.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8; MSG_HEADER_BYTES]) -> Result<Self> {
        let size = u64::from_le_bytes(b[0..8].try_into().unwrap());
        let seq = u32::from_le_bytes(b[8..12].try_into().unwrap());
        let flags = u32::from_le_bytes(b[12..16].try_into().unwrap());
        let known = HEADER_MARK | FLAG_INLINE | CHUNK_FIELD_MAX << CHUNK_SHIFT;
        if flags & 0xff00_0000 != HEADER_MARK || flags & !known != 0 {
            return Err(Error::remote(format!(
                "corrupt message header on the control connection (flags {flags:#x})"
            )));
        }
        Ok(MsgHeader {
            size,
            seq,
            inline: flags & FLAG_INLINE != 0,
            chunk: (flags >> CHUNK_SHIFT & CHUNK_FIELD_MAX) * CHUNK_UNIT,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ListenHandle {
        ListenHandle {
            ctrl: "127.0.0.1:4242".parse().unwrap(),
            stripes: 4,
            chunk_bytes: 512 << 10,
            inline_bytes: 16 << 10,
            nonce: 0xdead_beef_1234,
        }
    }

    #[test]
    fn handle_round_trips_and_keeps_the_ticket_area_zero() {
        let mut h = [0xffu8; HANDLE_BYTES];
        sample().write(&mut h);
        assert_eq!(ListenHandle::read(&h).unwrap(), sample());
        assert!(h[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8]
            .iter()
            .all(|b| *b == 0));
    }

    #[test]
    fn handle_with_wrong_magic_version_or_shape_is_refused_with_a_reason() {
        let mut h = [0u8; HANDLE_BYTES];
        sample().write(&mut h);
        let mut bad = h;
        bad[0] ^= 1;
        assert!(ListenHandle::read(&bad).unwrap_err().msg.contains("magic"));
        let mut bad = h;
        bad[4] = 9;
        assert!(ListenHandle::read(&bad).unwrap_err().msg.contains("version"));
        let mut bad = h;
        bad[8..12].copy_from_slice(&1000u32.to_le_bytes());
        assert!(ListenHandle::read(&bad).unwrap_err().msg.contains("chunks"));
        let mut bad = h;
        bad[12..16].copy_from_slice(&(MAX_INLINE_BYTES + 1).to_le_bytes());
        assert!(ListenHandle::read(&bad).unwrap_err().msg.contains("inline"));
        // Counts and sizes that would size the connector's allocations are bounded.
        let mut bad = h;
        bad[6..8].copy_from_slice(&(MAX_STRIPES + 1).to_le_bytes());
        assert!(ListenHandle::read(&bad).unwrap_err().msg.contains("stripes"));
        let mut bad = h;
        bad[8..12].copy_from_slice(&(MAX_CHUNK_BYTES + 4096).to_le_bytes());
        assert!(ListenHandle::read(&bad).unwrap_err().msg.contains("chunks"));
        let mut top = h;
        top[6..8].copy_from_slice(&MAX_STRIPES.to_le_bytes());
        top[8..12].copy_from_slice(&MAX_CHUNK_BYTES.to_le_bytes());
        let top = ListenHandle::read(&top).unwrap();
        assert_eq!(WELCOME_HEAD_BYTES + top.inner_handle_bytes(), MAX_WELCOME_BYTES);
    }

    #[test]
    fn hello_checks_nonce() {
        assert!(check_hello(&hello(7), 7).is_ok());
        assert!(check_hello(&hello(7), 8).unwrap_err().contains("nonce"));
        assert!(check_hello(&[0u8; 16], 7).unwrap_err().contains("not a tcpxr hello"));
        assert!(check_hello(&hello(7)[..15], 7).unwrap_err().contains("15 bytes"));
        assert!(check_hello(&[], 7).is_err());
        let mut long = hello(7).to_vec();
        long.push(0);
        assert!(check_hello(&long, 7).is_err());
    }

    #[test]
    fn header_round_trips_and_rejects_garbage() {
        for h in [
            MsgHeader {
                size: 0,
                seq: 0,
                inline: true,
                chunk: 0,
            },
            MsgHeader {
                size: 1 << 40,
                seq: u32::MAX,
                inline: false,
                chunk: 64 << 10,
            },
            MsgHeader {
                size: 3,
                seq: 1,
                inline: false,
                chunk: MAX_HEADER_CHUNK,
            },
        ] {
            assert_eq!(MsgHeader::decode(&h.encode()).unwrap(), h);
        }
        assert!(MsgHeader::decode(&[0xab; MSG_HEADER_BYTES]).is_err());
        // A flag bit no version writes (bit 20, above the chunk field) is corruption.
        let mut b = MsgHeader {
            size: 1,
            seq: 0,
            inline: false,
            chunk: 0,
        }
        .encode();
        b[14] |= 0x10;
        assert!(MsgHeader::decode(&b).is_err());
    }

    #[test]
    fn welcome_head_must_match_the_handle() {
        let w = welcome(4, 512 << 10, &[[1u8; 128]; 4]);
        assert_eq!(w.len(), WELCOME_HEAD_BYTES + 4 * 128);
        let head: [u8; WELCOME_HEAD_BYTES] = w[..WELCOME_HEAD_BYTES].try_into().unwrap();
        assert_eq!(read_welcome_head(&head, &sample()).unwrap(), (4, 512 << 10));
        let other = ListenHandle { stripes: 2, ..sample() };
        assert!(read_welcome_head(&head, &other).is_err());
        let mut old = head;
        old[4] ^= 1;
        assert!(read_welcome_head(&old, &sample()).unwrap_err().msg.contains("version"));
    }
}
