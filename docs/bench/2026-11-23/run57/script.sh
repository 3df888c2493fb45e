#!/bin/bash
# GPU run V on one GPU (nvidia-h200, 16 cores), two ranks as two NCCL hosts under MPS: fused NICs
# under stock NCCL 2.28.3, after run U showed NCCL cannot place a fused NIC of virtual interfaces
# by itself. The loopback stands for two devices (lo 127.0.0.1, lo.2 127.0.0.2,
# NCCL_TCPXR_LOOPBACK_DEVICES=2). Runs, host buffers, all_reduce and sendrecv 8 B - 256 MiB:
#   one:   one device (baseline);
#   auto:  two devices, NCCL's automatic fusion asked for; tcpxr declines (no PCI device), NCCL
#          uses them apart;
#   fused: NCCL_TOPO_FILE placing lo and lo.2 on two PCI functions under one switch (made from
#          NCCL's own dump of this machine), NCCL_NET_FORCE_MERGE=lo,lo.2;
#   apart: two devices, NCCL_NET_MERGE_LEVEL=LOC.
# During a long fused sendrecv: established sockets per address pair (/proc/net/tcp).
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runV; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} CUDA_VISIBLE_DEVICES=0
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runV.tgz -C /tmp runV; cat $A/steps.txt; cat $A/evidence.txt 2>/dev/null | cut -c1-220 | head -40; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; ls -l /sys/class/net/; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 20 --warmup 5 --max 256M --timeout 100 --out $A/$out --configs tcpxr-host --env NCCL_DEBUG_SUBSYS=GRAPH "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
run dump 60 --max 1M --ops sendrecv --env NCCL_TCPXR_LOOPBACK_DEVICES=2 --env NCCL_NET_MERGE_LEVEL=LOC --env NCCL_TOPO_DUMP_FILE=$A/topo-dump.xml
python3 - $A/topo-dump.xml $A/topo-fused.xml > $A/topo.txt 2>&1 <<'PY'
# NCCL's dump of this machine, with lo and lo.2 moved from the CPU's NIC node onto two PCI
# functions (fake bus ids e1, e2) under one PCI switch (e0), so NCCL can place their fusion.
import sys, xml.etree.ElementTree as ET
tree = ET.parse(sys.argv[1]); root = tree.getroot()
cpu = next(c for c in root.iter("cpu") if c.find("nic") is not None and any(n.get("name") in ("lo", "lo.2") for n in c.find("nic")))
nic = cpu.find("nic"); cpu.remove(nic)
link = {"link_speed": "16.0 GT/s PCIe", "link_width": "16"}
bridge = ET.SubElement(cpu, "pci", {"busid": "0000:e0:00.0", "class": "0x060400", "vendor": "0x1000", "device": "0xc010", "subsystem_vendor": "0x1000", "subsystem_device": "0xa064", **link})
for k, net in enumerate(nic.findall("net")):
    fn = ET.SubElement(bridge, "pci", {"busid": "0000:%02x:00.0" % (0xe1 + k), "class": "0x020000", "vendor": "0x1af4", "device": "0x1041", "subsystem_vendor": "0x1af4", "subsystem_device": "0x1100", **link})
    ET.SubElement(fn, "nic").append(net)
tree.write(sys.argv[2]); print(open(sys.argv[2]).read())
PY
el "topology file: $(grep -c '<net ' $A/topo-fused.xml) nets"
run one 160
run auto 260 --env NCCL_TCPXR_LOOPBACK_DEVICES=2
run fused 360 --env NCCL_TCPXR_LOOPBACK_DEVICES=2 --env NCCL_TOPO_FILE=$A/topo-fused.xml --env NCCL_NET_FORCE_MERGE=lo,lo.2
run apart 460 --env NCCL_TCPXR_LOOPBACK_DEVICES=2 --env NCCL_NET_MERGE_LEVEL=LOC
( timeout $(left 540) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 300 --warmup 5 --min 256M --max 256M --ops sendrecv --timeout 60 --out $A/ss --configs tcpxr-host --env NCCL_TCPXR_LOOPBACK_DEVICES=2 --env NCCL_TOPO_FILE=$A/topo-fused.xml --env NCCL_NET_FORCE_MERGE=lo,lo.2 > $A/ss.log 2>&1 ) &
for i in $(seq 1 12); do sleep 2; cp /proc/net/tcp $A/proc-net-tcp.txt; grep -q "0200007F:" $A/proc-net-tcp.txt && break; done
# st 01 = established; addresses are little-endian hex (0100007F = 127.0.0.1).
awk 'NR>1 && $4=="01" {split($2,l,":"); split($3,p,":"); print l[1]" -> "p[1]}' $A/proc-net-tcp.txt | sed 's/0100007F/127.0.0.1/g; s/0200007F/127.0.0.2/g' | sort | uniq -c > $A/sockets-by-address.txt
el "sockets (sample $i): $(tr -s ' ' < $A/sockets-by-address.txt | tr '\n' ';')"
wait; el "ss run done"
grep -h -E "Made vNic|fused device|makeVDevice|Tried merging|Force-fusing|force merge|NCCL's hints|Could not|NET with id|Using network|devices \[" -r $A --include=*.vm.* | sed 's/^vm:[0-9]*:[0-9]* //; s/^\[[^]]*\] vm:[0-9]*:[0-9]* //' | sort | uniq -c | sort -rn | head -60 > $A/evidence.txt
