#!/usr/bin/env python3
"""Place virtual NICs on PCI in an NCCL topology file, so NCCL can fuse them.

NCCL fuses NICs (NCCL_NET_FORCE_MERGE, or on its own for ports of one NIC) by the place of each
in its topology. Interfaces on no PCI device (lo, veth, the loopback devices of
NCCL_TCPXR_LOOPBACK_DEVICES) all hang on one NIC node under the CPU, and NCCL 2.28 cannot place a
fused NIC made of them (docs/BENCHMARKS.md section 19), so tcpxr declines such a fusion unless
NCCL_TOPO_FILE is set. This tool writes that file: NCCL's own dump of the machine
(NCCL_TOPO_DUMP_FILE) with the named NICs moved onto PCI functions of their own under one PCI
switch, as two ports of one adapter card would be.

    NCCL_TOPO_DUMP_FILE=dump.xml NCCL_NET_MERGE_LEVEL=LOC <any NCCL run over tcpxr>
    python3 ncclTests/fuse_topology.py dump.xml fused.xml lo lo.2
    NCCL_TOPO_FILE=fused.xml NCCL_NET_FORCE_MERGE=lo,lo.2 <the NCCL run>

The bus ids are made up (e0 for the switch, e1, e2, ... for the NICs); NCCL reads them only
from this file.
"""
import argparse
import sys
import xml.etree.ElementTree as ET

LINK = {"link_speed": "16.0 GT/s PCIe", "link_width": "16"}
SWITCH = {"busid": "0000:e0:00.0", "class": "0x060400", "vendor": "0x1000", "device": "0xc010",
          "subsystem_vendor": "0x1000", "subsystem_device": "0xa064", **LINK}
FUNCTION = {"class": "0x020000", "vendor": "0x1af4", "device": "0x1041",
            "subsystem_vendor": "0x1af4", "subsystem_device": "0x1100", **LINK}


def place_on_pci(dump: str, names: list) -> str:
    """The topology `dump` (NCCL's XML) with the nets `names` each on a PCI function of its own,
    all under one new PCI switch beside the CPU's other devices. A name that is not a net in a
    CPU's NIC node, or names on different CPUs, is a ValueError."""
    root = ET.fromstring(dump)
    found = {}
    for cpu in root.iter("cpu"):
        for nic in cpu.findall("nic"):
            for net in nic.findall("net"):
                if net.get("name") in names:
                    found[net.get("name")] = (cpu, nic, net)
    missing = [n for n in names if n not in found]
    if missing:
        raise ValueError("no net named %s in a CPU's NIC node of the dump" % ", ".join(missing))
    cpus = {id(found[n][0]) for n in names}
    if len(cpus) != 1:
        raise ValueError("the nets %s hang on different CPUs; NCCL fuses NICs of one CPU only" % ", ".join(names))
    cpu = found[names[0]][0]
    switch = ET.SubElement(cpu, "pci", SWITCH)
    for k, name in enumerate(names):
        _, nic, net = found[name]
        nic.remove(net)
        if len(nic) == 0:
            cpu.remove(nic)
        function = ET.SubElement(switch, "pci", {"busid": "0000:%02x:00.0" % (0xE1 + k), **FUNCTION})
        ET.SubElement(function, "nic").append(net)
    return ET.tostring(root, encoding="unicode")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dump", help="NCCL's topology dump (NCCL_TOPO_DUMP_FILE)")
    p.add_argument("out", help="the topology file to write (for NCCL_TOPO_FILE)")
    p.add_argument("nets", nargs="+", help="names of the NICs to place, as NCCL lists them")
    a = p.parse_args(argv)
    try:
        with open(a.dump) as f:
            text = place_on_pci(f.read(), a.nets)
    except (OSError, ValueError, ET.ParseError) as e:
        print("fuse_topology: %s" % e, file=sys.stderr)
        return 1
    with open(a.out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
