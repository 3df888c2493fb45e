"""fuse_topology.py on NCCL's own dump of the GPU machine (run 57): where the NICs go, and what
it refuses."""
import os
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fuse_topology  # noqa: E402

DUMP = os.path.join(HERE, "..", "docs", "bench", "2026-11-23", "run57", "topo-dump.xml")


def dump():
    with open(DUMP) as f:
        return f.read()


class PlaceOnPci(unittest.TestCase):
    def test_each_named_nic_gets_a_pci_function_under_one_switch_and_the_rest_stays(self):
        root = ET.fromstring(fuse_topology.place_on_pci(dump(), ["lo", "lo.2"]))
        cpu = root.find("cpu")
        self.assertIsNone(cpu.find("nic"), "the emptied NIC node under the CPU is gone")
        switch = [p for p in cpu.findall("pci") if p.get("class") == "0x060400"]
        self.assertEqual(len(switch), 1)
        functions = switch[0].findall("pci")
        self.assertEqual([f.get("busid") for f in functions], ["0000:e1:00.0", "0000:e2:00.0"])
        self.assertEqual([f.find("nic/net").get("name") for f in functions], ["lo", "lo.2"])
        self.assertEqual(functions[1].find("nic/net").get("guid"), "0x74426679edeb72a0")
        self.assertIsNotNone(cpu.find("pci/gpu"), "the GPU is where it was")

    def test_a_nic_left_out_stays_on_the_cpu(self):
        root = ET.fromstring(fuse_topology.place_on_pci(dump(), ["lo.2"]))
        self.assertEqual([n.get("name") for n in root.findall("cpu/nic/net")], ["lo"])
        self.assertEqual([n.get("name") for n in root.findall("cpu/pci/pci/nic/net")], ["lo.2"])

    def test_an_unknown_name_is_refused(self):
        with self.assertRaisesRegex(ValueError, "no net named eth9"):
            fuse_topology.place_on_pci(dump(), ["lo", "eth9"])

    def test_the_command_writes_the_file_and_fails_cleanly(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "fused.xml")
            self.assertEqual(fuse_topology.main([DUMP, out, "lo", "lo.2"]), 0)
            self.assertEqual(len(ET.parse(out).getroot().findall(".//pci/pci/nic/net")), 2)
            self.assertEqual(fuse_topology.main([os.path.join(d, "missing.xml"), out, "lo"]), 1)


if __name__ == "__main__":
    unittest.main()
