//! A socket address in 20 bytes, as it travels inside handles: family (u16), port (u16), IP (16).
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

pub const ADDR_BYTES: usize = 20;

pub fn encode(addr: &SocketAddr, out: &mut [u8]) {
    let out = &mut out[..ADDR_BYTES];
    out.fill(0);
    let family: u16 = if addr.is_ipv4() { 4 } else { 6 };
    out[0..2].copy_from_slice(&family.to_le_bytes());
    out[2..4].copy_from_slice(&addr.port().to_le_bytes());
    match addr.ip() {
        IpAddr::V4(ip) => out[4..8].copy_from_slice(&ip.octets()),
        IpAddr::V6(ip) => out[4..20].copy_from_slice(&ip.octets()),
    }
}

pub fn decode(bytes: &[u8]) -> Option<SocketAddr> {
    let b = bytes.get(..ADDR_BYTES)?;
    let family = u16::from_le_bytes([b[0], b[1]]);
    let port = u16::from_le_bytes([b[2], b[3]]);
    let ip = match family {
        4 => IpAddr::V4(Ipv4Addr::new(b[4], b[5], b[6], b[7])),
        6 => IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(&b[4..20]).ok()?)),
        _ => return None,
    };
    if port == 0 {
        return None;
    }
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_v4_and_v6_and_rejects_garbage() {
        for a in ["127.0.0.1:5000", "[::1]:6000", "10.1.2.3:65535"] {
            let addr: SocketAddr = a.parse().unwrap();
            let mut buf = [0u8; ADDR_BYTES];
            encode(&addr, &mut buf);
            assert_eq!(decode(&buf), Some(addr));
        }
        assert_eq!(decode(&[0u8; ADDR_BYTES]), None);
        assert_eq!(decode(&[9u8; ADDR_BYTES]), None);
        assert_eq!(decode(&[4, 0, 1]), None);
    }
}
