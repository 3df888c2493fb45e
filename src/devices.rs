//! NCCL's devices: the transport's own first (physical), then the ones NCCL fuses from them
//! (`makeVDevice`, v9+ tables), which stripe each connection over their members.
//!
//! Fused devices are added and never removed for the life of the process: NCCL fuses once per
//! process and keeps the device numbers, and the strings it reads from the properties must stay
//! valid.
use crate::config::Rail;
use crate::engine::nics::Nics;
use crate::error::{Error, Result};
use crate::transport::DeviceInfo;
use std::ffi::{c_int, CString};
use std::sync::{Arc, RwLock};

/// Fused devices one process may make; NCCL makes at most one per group of physical devices.
const MAX_FUSED: usize = 64;

/// A device as NCCL sees it.
#[derive(Debug)]
pub struct Device {
    pub name: CString,
    pub pci_path: Option<CString>,
    pub guid: u64,
    pub ptr_support: c_int,
    pub speed_mbps: c_int,
    /// The transport devices it is made of: itself alone for a physical device.
    pub members: Vec<usize>,
    pub rail: Option<i16>,
    pub plane: Option<i16>,
}

pub struct Devices {
    physical: Vec<Arc<Device>>,
    fused: RwLock<Vec<Arc<Device>>>,
}

impl Devices {
    /// One device per transport device. `rails`: NCCL_TCPXR_RAILS, one per device or none.
    /// `assumed_mbps`: the speed NCCL is told for a device whose transport assumed one
    /// ([`DeviceInfo::speed_assumed`]); None: the transport's figure.
    pub fn new(
        transport: &[DeviceInfo],
        ptr_support: c_int,
        rails: &[Rail],
        assumed_mbps: Option<c_int>,
    ) -> Result<Devices> {
        if !rails.is_empty() && rails.len() != transport.len() {
            let names: Vec<&str> = transport.iter().map(|d| d.name.as_str()).collect();
            return Err(Error::invalid_argument(format!(
                "NCCL_TCPXR_RAILS gives {} rails for {} devices ({}): accepted one rail[:plane] per device",
                rails.len(),
                transport.len(),
                names.join(", ")
            )));
        }
        let physical = transport
            .iter()
            .enumerate()
            .map(|(i, d)| {
                Arc::new(Device {
                    name: CString::new(d.name.clone()).unwrap_or_default(),
                    pci_path: d.pci_path.clone().and_then(|p| CString::new(p).ok()),
                    guid: d.guid,
                    ptr_support,
                    speed_mbps: assumed_mbps.filter(|_| d.speed_assumed).unwrap_or(d.speed_mbps),
                    members: vec![i],
                    rail: rails.get(i).map(|r| r.rail),
                    plane: rails.get(i).and_then(|r| r.plane),
                })
            })
            .collect();
        Ok(Devices {
            physical,
            fused: RwLock::new(Vec::new()),
        })
    }

    /// Forgets every fused device; returns how many there were. NCCL reads `devices` at each
    /// communicator's init as its count of physical devices and fuses from there, and it resets
    /// its own counts when it unloads the plugin after the last communicator: a fused device
    /// kept past that would be listed as physical to the next load and fused into nothing
    /// (the library stays loaded, `-z nodelete`, so nothing else would clear it).
    pub fn forget_fused(&self) -> usize {
        std::mem::take(&mut *self.fused.write().unwrap()).len()
    }

    /// Physical and fused devices.
    pub fn count(&self) -> usize {
        self.physical.len() + self.fused.read().unwrap().len()
    }

    /// Device `dev` as NCCL numbers it; `what` names the call for the error.
    pub fn get(&self, dev: c_int, what: &str) -> Result<Arc<Device>> {
        let fused = self.fused.read().unwrap();
        let found = usize::try_from(dev)
            .ok()
            .and_then(|i| match i.checked_sub(self.physical.len()) {
                None => self.physical.get(i),
                Some(j) => fused.get(j),
            });
        found.cloned().ok_or_else(|| {
            Error::invalid_argument(format!(
                "{what} on device {dev}, which does not exist: accepted 0-{}",
                self.physical.len() + fused.len() - 1
            ))
        })
    }

    /// The transport devices a connection on `d` stripes over, weighted by link speed.
    pub fn nics(&self, d: &Device) -> Nics {
        Nics::weighted(
            d.members
                .iter()
                .map(|&m| (m, self.physical[m].speed_mbps.max(1) as u64)),
        )
    }

    /// NCCL's makeVDevice: a device over the physical devices `members` (at most `max`, the
    /// table's limit), numbered after every existing one. Asking again for the same members in
    /// the same order gives the device made before.
    ///
    /// Members without a PCI device (lo, veth) are fused only when `placed_by_user` (NCCL reads
    /// the topology from NCCL_TOPO_FILE): NCCL 2.28 hangs every such NIC on one node under the
    /// CPU, takes them for ports of one NIC, fuses them on its own, and then loses the fused
    /// device's nets ("Could not find NET with id 0", an internal error at the first
    /// collective). Refused, NCCL uses them apart.
    pub fn fuse(&self, members: &[c_int], max: usize, placed_by_user: bool) -> Result<usize> {
        let n = self.physical.len();
        let accepted = || {
            format!(
                "accepted 1-{max} distinct physical devices of 0-{}",
                n.saturating_sub(1)
            )
        };
        if members.is_empty() || members.len() > max {
            return Err(Error::invalid_argument(format!(
                "makeVDevice of {} devices: {}",
                members.len(),
                accepted()
            )));
        }
        let mut idx = Vec::with_capacity(members.len());
        for &m in members {
            match usize::try_from(m).ok().filter(|&i| i < n) {
                Some(i) if !idx.contains(&i) => idx.push(i),
                Some(_) => {
                    return Err(Error::invalid_argument(format!(
                        "makeVDevice of {members:?}: device {m} is named twice; {}",
                        accepted()
                    )))
                }
                None => {
                    return Err(Error::invalid_argument(format!(
                        "makeVDevice of {members:?}: device {m} is not a physical device; {}",
                        accepted()
                    )))
                }
            }
        }
        let virtual_nics: Vec<String> = idx
            .iter()
            .filter(|&&i| self.physical[i].pci_path.is_none())
            .map(|&i| self.physical[i].name.to_string_lossy().into_owned())
            .collect();
        if !virtual_nics.is_empty() && !placed_by_user {
            return Err(Error::invalid_argument(format!(
                "makeVDevice of {members:?}: {} on no PCI device, which NCCL cannot place as a fused NIC by \
                 itself; NCCL uses the devices apart. To fuse them, describe their place in NCCL_TOPO_FILE",
                virtual_nics.join(", ") + if virtual_nics.len() == 1 { " is" } else { " are" }
            )));
        }
        let mut fused = self.fused.write().unwrap();
        if let Some(j) = fused.iter().position(|d| d.members == idx) {
            return Ok(n + j);
        }
        if fused.len() >= MAX_FUSED {
            return Err(Error::invalid_argument(format!(
                "makeVDevice of {members:?}: this process already has {MAX_FUSED} fused devices, the most tcpxr makes"
            )));
        }
        let parts: Vec<&Device> = idx.iter().map(|&i| &*self.physical[i]).collect();
        let device = fused_device(&parts, idx.clone());
        log::info!(
            target: "tcpxr::init",
            "fused device [{}] {} of {}: {} Mb/s, stripes dealt over the members by speed",
            n + fused.len(),
            device.name.to_string_lossy(),
            idx.iter()
                .map(|&i| format!("[{i}] {}", self.physical[i].name.to_string_lossy()))
                .collect::<Vec<_>>()
                .join(", "),
            device.speed_mbps
        );
        fused.push(Arc::new(device));
        Ok(n + fused.len() - 1)
    }
}

/// What a fused device says of itself: its members' names joined by `+`, the first member's PCI
/// path (NCCL places the device from its members, not from this), the sum of their speeds, what
/// every member supports, and a rail or plane only where all members share it.
fn fused_device(parts: &[&Device], members: Vec<usize>) -> Device {
    let names: Vec<String> = parts.iter().map(|d| d.name.to_string_lossy().into_owned()).collect();
    let shared = |f: fn(&Device) -> Option<i16>| {
        let first = f(parts[0]);
        first.filter(|_| parts.iter().all(|d| f(d) == first))
    };
    Device {
        name: CString::new(names.join("+")).unwrap_or_default(),
        pci_path: parts[0].pci_path.clone(),
        // FNV-1a over the members' guids: stable across runs, distinct from each member's.
        guid: parts.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, d| {
            d.guid
                .to_le_bytes()
                .iter()
                .fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
        }),
        ptr_support: parts.iter().fold(!0, |acc, d| acc & d.ptr_support),
        speed_mbps: parts.iter().fold(0i32, |acc, d| acc.saturating_add(d.speed_mbps)),
        members,
        rail: shared(|d| d.rail),
        plane: shared(|d| d.plane),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn info(name: &str, speed: i32) -> DeviceInfo {
        DeviceInfo {
            name: name.into(),
            ctrl_addr: IpAddr::V4(Ipv4Addr::LOCALHOST),
            pci_path: Some(format!("/sys/devices/pci0000:00/{name}")),
            speed_mbps: speed,
            speed_assumed: false,
            guid: name.len() as u64,
        }
    }

    fn three() -> Devices {
        let rails = [
            Rail {
                rail: 0,
                plane: Some(1),
            },
            Rail {
                rail: 0,
                plane: Some(2),
            },
            Rail {
                rail: 5,
                plane: Some(1),
            },
        ];
        Devices::new(
            &[info("eth1", 100), info("eth2", 200), info("eth3", 100)],
            3,
            &rails,
            None,
        )
        .unwrap()
    }

    #[test]
    fn fusing_appends_a_device_that_describes_its_members() {
        let d = three();
        assert_eq!(d.count(), 3);
        let v = d.fuse(&[1, 0], 4, false).unwrap();
        assert_eq!((v, d.count()), (3, 4));
        let f = d.get(3, "test").unwrap();
        assert_eq!(f.name.to_str().unwrap(), "eth2+eth1");
        assert_eq!(f.members, [1, 0]);
        assert_eq!(f.speed_mbps, 300);
        assert_eq!(f.pci_path, d.get(1, "test").unwrap().pci_path);
        assert_eq!(f.ptr_support, 3);
        assert_ne!(f.guid, d.get(0, "test").unwrap().guid);
        // Same rail, different planes: the rail holds, the plane is undefined.
        assert_eq!((f.rail, f.plane), (Some(0), None));
        let g = d.get(d.fuse(&[0, 2], 4, false).unwrap() as c_int, "test").unwrap();
        assert_eq!((g.rail, g.plane), (None, Some(1)));
        // Stripes follow speed: eth2 (200) carries two of three.
        assert_eq!(d.nics(&f).layout(3), [1, 0, 1]);
        assert_eq!(d.nics(&d.get(2, "test").unwrap()).layout(2), [2, 2]);
    }

    #[test]
    fn the_same_members_give_the_same_device() {
        let d = three();
        assert_eq!(d.fuse(&[0, 1], 4, false).unwrap(), 3);
        assert_eq!(d.fuse(&[0, 1], 4, false).unwrap(), 3);
        assert_eq!(d.fuse(&[1, 0], 4, false).unwrap(), 4);
        assert_eq!(d.count(), 5);
    }

    #[test]
    fn bad_member_lists_are_refused_and_change_nothing() {
        let d = three();
        for (members, why) in [
            (&[][..], "makeVDevice of 0 devices"),
            (&[0, 1, 2][..], "makeVDevice of 3 devices"),
            (&[0, 0][..], "named twice"),
            (&[0, 3][..], "device 3 is not a physical device"),
            (&[-1, 0][..], "device -1 is not a physical device"),
        ] {
            let e = d.fuse(members, 2, false).unwrap_err();
            assert_eq!(e.code, crate::abi::ncclResult_t::ncclInvalidArgument);
            assert!(e.msg.contains(why) && e.msg.contains("accepted 1-2"), "{}", e.msg);
        }
        assert_eq!(d.count(), 3);
        // A fused device is not a member of another.
        d.fuse(&[0, 1], 4, false).unwrap();
        assert!(d
            .fuse(&[3, 2], 4, false)
            .unwrap_err()
            .msg
            .contains("device 3 is not a physical"));
        let e = d.get(4, "listen").unwrap_err();
        assert!(
            e.msg.contains("listen on device 4") && e.msg.contains("accepted 0-3"),
            "{}",
            e.msg
        );
    }

    #[test]
    fn an_assumed_speed_is_replaced_and_a_link_speed_kept() {
        let mut lo = info("lo", 400_000);
        lo.speed_assumed = true;
        let d = Devices::new(&[info("eth1", 100), lo.clone()], 1, &[], Some(10_000)).unwrap();
        let speeds = |d: &Devices| [0, 1].map(|i| d.get(i, "test").unwrap().speed_mbps);
        assert_eq!(speeds(&d), [100, 10_000]);
        let d = Devices::new(&[info("eth1", 100), lo], 1, &[], None).unwrap();
        assert_eq!(speeds(&d), [100, 400_000]);
    }

    #[test]
    fn devices_on_no_pci_device_are_fused_only_where_the_user_placed_them() {
        let mut lo = info("lo", 100);
        lo.pci_path = None;
        let d = Devices::new(&[info("eth1", 100), lo], 1, &[], None).unwrap();
        let e = d.fuse(&[0, 1], 4, false).unwrap_err();
        assert!(
            e.msg.contains("lo is on no PCI device") && e.msg.contains("NCCL_TOPO_FILE"),
            "{}",
            e.msg
        );
        assert_eq!(d.count(), 2);
        assert_eq!(d.fuse(&[0, 1], 4, true).unwrap(), 2);
    }

    #[test]
    fn rails_must_cover_every_device() {
        let one = [Rail { rail: 1, plane: None }];
        let e = Devices::new(&[info("eth1", 1), info("eth2", 1)], 1, &one, None)
            .err()
            .unwrap();
        assert!(
            e.msg
                .contains("NCCL_TCPXR_RAILS gives 1 rails for 2 devices (eth1, eth2)"),
            "{}",
            e.msg
        );
        let d = Devices::new(&[info("eth1", 1)], 1, &one, None).unwrap();
        assert_eq!(d.get(0, "t").unwrap().rail, Some(1));
        assert_eq!(
            Devices::new(&[info("eth1", 1)], 1, &[], None)
                .unwrap()
                .get(0, "t")
                .unwrap()
                .rail,
            None
        );
    }
}
