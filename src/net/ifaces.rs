//! Network interfaces: enumeration (getifaddrs), NCCL_SOCKET_IFNAME-style selection, and the
//! sysfs facts NCCL wants per device (PCI path, speed).
use std::ffi::CStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

#[derive(Clone, Debug, PartialEq)]
pub struct Interface {
    pub name: String,
    pub addr: IpAddr,
    pub loopback: bool,
}

/// Every interface that is up and has an IPv4 or IPv6 address (one entry per interface, IPv4
/// preferred), in the kernel's order.
pub fn list() -> std::io::Result<Vec<Interface>> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills head with a list we free below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut out: Vec<Interface> = Vec::new();
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: cur walks the list getifaddrs returned, which stays valid until freeifaddrs.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        let flags = ifa.ifa_flags as libc::c_int;
        if ifa.ifa_addr.is_null() || flags & libc::IFF_UP == 0 {
            continue;
        }
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let name = unsafe { CStr::from_ptr(ifa.ifa_name) }.to_string_lossy().into_owned();
        // SAFETY: ifa_addr is non-null (checked) and points to a sockaddr owned by the list.
        let family = unsafe { (*ifa.ifa_addr).sa_family } as libc::c_int;
        let addr = match family {
            libc::AF_INET => {
                // SAFETY: the family says this sockaddr is a sockaddr_in.
                let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                IpAddr::V4(Ipv4Addr::from(sin.sin_addr.s_addr.to_ne_bytes()))
            }
            libc::AF_INET6 => {
                // SAFETY: the family says this sockaddr is a sockaddr_in6.
                let sin6 = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
                let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                // Link-local addresses need a scope id to be reachable; skip them.
                if ip.segments()[0] & 0xffc0 == 0xfe80 {
                    continue;
                }
                IpAddr::V6(ip)
            }
            _ => continue,
        };
        let loopback = flags & libc::IFF_LOOPBACK != 0;
        match out.iter_mut().find(|i| i.name == name) {
            Some(existing) if existing.addr.is_ipv6() && addr.is_ipv4() => existing.addr = addr,
            Some(_) => {}
            None => out.push(Interface { name, addr, loopback }),
        }
    }
    // SAFETY: head came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}

/// Selects interfaces with NCCL_SOCKET_IFNAME's syntax: a comma-separated list of name prefixes,
/// `^` in front excludes those instead, `=` in front asks for exact names. Without a spec: the
/// first non-loopback interface, else loopback.
pub fn select(all: &[Interface], spec: Option<&str>) -> Vec<Interface> {
    let Some(spec) = spec.map(str::trim).filter(|s| !s.is_empty()) else {
        return all
            .iter()
            .find(|i| !i.loopback)
            .or_else(|| all.iter().find(|i| i.loopback))
            .cloned()
            .into_iter()
            .collect();
    };
    let (exclude, rest) = match spec.strip_prefix('^') {
        Some(r) => (true, r),
        None => (false, spec),
    };
    let (exact, rest) = match rest.strip_prefix('=') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let patterns: Vec<&str> = rest.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
    let matches = |name: &str| {
        patterns
            .iter()
            .any(|p| if exact { name == *p } else { name.starts_with(p) })
    };
    all.iter().filter(|i| matches(&i.name) != exclude).cloned().collect()
}

/// The IPv4 loopback interface as `count` devices: itself at 127.0.0.1, then `<name>.2` at
/// 127.0.0.2 and so on (Linux routes all of 127.0.0.0/8 to it, so each address can be bound
/// without being configured). Other interfaces, and a loopback without 127.0.0.1, stay as they are.
pub fn split_loopback(chosen: Vec<Interface>, count: usize) -> Vec<Interface> {
    let mut out = Vec::with_capacity(chosen.len() + count);
    for iface in chosen {
        let splits = iface.loopback && iface.addr == IpAddr::V4(Ipv4Addr::LOCALHOST);
        let extra = if splits { count.saturating_sub(1) } else { 0 };
        let name = iface.name.clone();
        out.push(iface);
        for k in 2..extra as u8 + 2 {
            out.push(Interface {
                name: format!("{name}.{k}"),
                addr: IpAddr::V4(Ipv4Addr::new(127, 0, 0, k)),
                loopback: true,
            });
        }
    }
    out
}

/// `realpath(/sys/class/net/<if>/device)`, or None for a virtual interface such as lo.
pub fn pci_path(name: &str) -> Option<String> {
    std::fs::canonicalize(format!("/sys/class/net/{name}/device"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// Link speed in Mb/s from sysfs, or None when the interface does not report one (lo, veth).
pub fn speed_mbps(name: &str) -> Option<i32> {
    let text = std::fs::read_to_string(format!("/sys/class/net/{name}/speed")).ok()?;
    text.trim().parse::<i32>().ok().filter(|s| *s > 0)
}

/// A stable 64-bit id for the device: FNV-1a of its name and address.
pub fn guid(iface: &Interface) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in iface.name.bytes().chain(iface.addr.to_string().bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iface(name: &str, loopback: bool) -> Interface {
        Interface {
            name: name.into(),
            addr: IpAddr::V4(Ipv4Addr::LOCALHOST),
            loopback,
        }
    }

    #[test]
    fn default_prefers_first_non_loopback_then_lo() {
        let all = vec![iface("lo", true), iface("eth0", false), iface("eth1", false)];
        assert_eq!(select(&all, None)[0].name, "eth0");
        assert_eq!(select(&all[..1], None)[0].name, "lo");
        assert!(select(&[], None).is_empty());
    }

    #[test]
    fn prefix_exact_and_exclude() {
        let all = vec![
            iface("lo", true),
            iface("eth0", false),
            iface("eth10", false),
            iface("ib0", false),
        ];
        let names = |v: Vec<Interface>| v.into_iter().map(|i| i.name).collect::<Vec<_>>();
        assert_eq!(names(select(&all, Some("eth"))), ["eth0", "eth10"]);
        assert_eq!(names(select(&all, Some("=eth1"))), Vec::<String>::new());
        assert_eq!(names(select(&all, Some("=eth10,lo"))), ["lo", "eth10"]);
        assert_eq!(names(select(&all, Some("^eth,lo"))), ["ib0"]);
        assert_eq!(names(select(&all, Some("^=eth0"))), ["lo", "eth10", "ib0"]);
    }

    #[test]
    fn loopback_splits_into_numbered_addresses_and_others_stay() {
        let mut v6 = iface("lo6", true);
        v6.addr = IpAddr::V6(Ipv6Addr::LOCALHOST);
        let all = vec![iface("eth0", false), iface("lo", true), v6.clone()];
        let got = split_loopback(all.clone(), 3);
        let seen: Vec<(String, String)> = got.iter().map(|i| (i.name.clone(), i.addr.to_string())).collect();
        let want = [
            ("eth0", "127.0.0.1"),
            ("lo", "127.0.0.1"),
            ("lo.2", "127.0.0.2"),
            ("lo.3", "127.0.0.3"),
            ("lo6", "::1"),
        ];
        assert_eq!(seen, want.map(|(n, a)| (n.to_string(), a.to_string())));
        assert_eq!(split_loopback(all.clone(), 1), all);
    }

    #[test]
    fn the_machine_has_loopback() {
        let all = list().unwrap();
        assert!(all.iter().any(|i| i.loopback), "{all:?}");
        assert_eq!(pci_path("lo"), None);
    }
}
