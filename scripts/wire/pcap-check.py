#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check a capture of RoCE v2 traffic (the two-guest wire tier, scripts/wire.sh).

Usage: pcap-check.py [--no-tshark] FILE.pcap

1. Every UDP packet to port 4791 in FILE (classic pcap, Ethernet) is
   parsed here: its ICRC is computed as IBTA annex A17 defines it for RoCE
   v2 (CRC-32 over 8 bytes of ones for the LRH, the IP header with its
   variant fields - IPv4 TOS, TTL, checksum; IPv6 traffic class, flow label,
   hop limit - set to ones, the UDP header with its checksum set to ones,
   the BTH with its reserved byte set to ones, the rest of the packet up to
   the ICRC) and compared with the packet's, and BTH + payload + pad must
   be a whole number of 4-byte words. Wireshark 4.0 (Debian 12) shows the
   ICRC (infiniband.invariant.crc) but does not verify it, hence this.
2. tshark (-d udp.port==4791,infiniband) must decode those packets as
   InfiniBand and report no malformed packet (_ws.malformed) and no expert
   info of severity error.

Prints a summary (packets per opcode) and every problem; exit status 0 if
there is at least one RoCE v2 packet and no problem, 1 otherwise.
"""

import argparse
import collections
import shutil
import struct
import subprocess
import sys
import zlib

ROCE_PORT = 4791

OPS = {
    0x00: "SEND_FIRST", 0x01: "SEND_MIDDLE", 0x02: "SEND_LAST",
    0x03: "SEND_LAST_WITH_IMMEDIATE", 0x04: "SEND_ONLY",
    0x05: "SEND_ONLY_WITH_IMMEDIATE", 0x06: "RDMA_WRITE_FIRST",
    0x07: "RDMA_WRITE_MIDDLE", 0x08: "RDMA_WRITE_LAST",
    0x09: "RDMA_WRITE_LAST_WITH_IMMEDIATE", 0x0a: "RDMA_WRITE_ONLY",
    0x0b: "RDMA_WRITE_ONLY_WITH_IMMEDIATE", 0x0c: "RDMA_READ_REQUEST",
    0x0d: "RDMA_READ_RESPONSE_FIRST", 0x0e: "RDMA_READ_RESPONSE_MIDDLE",
    0x0f: "RDMA_READ_RESPONSE_LAST", 0x10: "RDMA_READ_RESPONSE_ONLY",
    0x11: "ACKNOWLEDGE", 0x12: "ATOMIC_ACKNOWLEDGE", 0x13: "COMPARE_SWAP",
    0x14: "FETCH_ADD", 0x16: "SEND_LAST_WITH_INVALIDATE",
    0x17: "SEND_ONLY_WITH_INVALIDATE",
}
TRANSPORTS = {0x00: "RC", 0x20: "UC", 0x40: "RD", 0x60: "UD", 0xa0: "XRC"}


def opname(op):
    if op == 0x81:
        return "CNP"
    t = TRANSPORTS.get(op & 0xe0, "0x%02x" % (op & 0xe0))
    return "%s_%s" % (t, OPS.get(op & 0x1f, "0x%02x" % (op & 0x1f)))


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError("not a pcap file (%d bytes)" % len(data))
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        e = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = ">"
    else:
        raise ValueError("not a classic pcap file (magic %s)" % magic.hex())
    linktype = struct.unpack(e + "I", data[20:24])[0]
    if linktype != 1:
        raise ValueError("link type %d, expected 1 (Ethernet)" % linktype)
    off = 24
    n = 0
    while off + 16 <= len(data):
        _, _, incl, orig = struct.unpack(e + "IIII", data[off:off + 16])
        off += 16
        n += 1
        yield n, data[off:off + incl], orig
        off += incl


def icrc(ip, udp_off, bth_off, end, ipv6):
    """The ICRC of the packet whose IP header starts ip[0]; ICRC at ip[end:end+4]."""
    p = bytearray(ip[:end])
    if ipv6:
        p[0] = (p[0] & 0xf0) | 0x0f			# traffic class
        p[1:4] = b"\xff\xff\xff"			# traffic class, flow label
        p[7] = 0xff					# hop limit
    else:
        p[1] = 0xff					# TOS
        p[8] = 0xff					# TTL
        p[10:12] = b"\xff\xff"				# header checksum
    p[udp_off + 6:udp_off + 8] = b"\xff\xff"		# UDP checksum
    p[bth_off + 4] = 0xff				# BTH resv8a
    return zlib.crc32(b"\xff" * 8 + bytes(p)) & 0xffffffff


def check_icrc(path):
    problems = []
    ops = collections.Counter()
    roce = 0
    others = 0
    for n, fr, orig in frames(path):
        if len(fr) < orig:
            problems.append("frame %d: truncated (%d of %d bytes captured)" % (n, len(fr), orig))
            continue
        off = 12
        etype = struct.unpack(">H", fr[off:off + 2])[0]
        off += 2
        while etype in (0x8100, 0x88a8) and len(fr) >= off + 4:
            etype = struct.unpack(">H", fr[off + 2:off + 4])[0]
            off += 4
        ip = fr[off:]
        if etype == 0x0800 and len(ip) >= 20:
            ipv6 = False
            ihl = (ip[0] & 0x0f) * 4
            proto = ip[9]
            iplen = struct.unpack(">H", ip[2:4])[0]
            udp_off = ihl
        elif etype == 0x86dd and len(ip) >= 40:
            ipv6 = True
            proto = ip[6]
            iplen = 40 + struct.unpack(">H", ip[4:6])[0]
            udp_off = 40
        else:
            others += 1
            continue
        if proto != 17 or len(ip) < udp_off + 8:
            others += 1
            continue
        dport = struct.unpack(">H", ip[udp_off + 2:udp_off + 4])[0]
        if dport != ROCE_PORT:
            others += 1
            continue
        roce += 1
        udplen = struct.unpack(">H", ip[udp_off + 4:udp_off + 6])[0]
        if iplen > len(ip) or udp_off + udplen != iplen:
            problems.append("frame %d: IP length %d, UDP length %d, %d bytes of IP packet"
                            % (n, iplen, udplen, len(ip)))
            continue
        ip = ip[:iplen]
        bth_off = udp_off + 8
        if udplen < 8 + 12 + 4:
            problems.append("frame %d: UDP length %d: no room for BTH and ICRC" % (n, udplen))
            continue
        op = ip[bth_off]
        ops[opname(op)] += 1
        if (udplen - 8) % 4:
            problems.append("frame %d (%s): BTH + payload + pad + ICRC = %d bytes, not a whole number of words"
                            % (n, opname(op), udplen - 8))
        end = iplen - 4
        want = icrc(ip, udp_off, bth_off, end, ipv6)
        have = struct.unpack("<I", ip[end:end + 4])[0]
        if want != have:
            problems.append("frame %d (%s, %s): ICRC 0x%08x, expected 0x%08x"
                            % (n, opname(op), "IPv6" if ipv6 else "IPv4", have, want))
    return roce, others, ops, problems


def tshark_check(path):
    """How many packets tshark decodes as InfiniBand; the frames it finds
    malformed or with an expert error (summary lines), and their details."""
    # RoCE v2 puts a zero UDP checksum over IPv6 too (rxe does; RFC 6935
    # and 6936 allow it for tunnel protocols; the ICRC covers the packet):
    # not an error here.
    base = ["tshark", "-n", "-r", path, "-d", "udp.port==%d,infiniband" % ROCE_PORT,
            "-o", "udp.ignore_ipv6_zero_checksum:TRUE"]
    bad = "_ws.malformed || _ws.expert.severity >= 8388608"	# PI_ERROR
    res = subprocess.run(base + ["-Y", "infiniband", "-T", "fields", "-e", "frame.number"],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        return None, ["tshark failed (%d): %s" % (res.returncode, res.stderr.strip())], []
    decoded = len(res.stdout.split())
    res = subprocess.run(base + ["-Y", bad], capture_output=True, text=True, check=False)
    if res.returncode != 0:
        return decoded, ["tshark failed (%d): %s" % (res.returncode, res.stderr.strip())], []
    frames_bad = [line.strip() for line in res.stdout.splitlines() if line.strip()]
    details = []
    if frames_bad:
        res = subprocess.run(base + ["-V", "-Y", bad], capture_output=True, text=True, check=False)
        details = [line.strip() for line in res.stdout.splitlines()
                   if "Expert Info" in line or "Malformed" in line or line.startswith("Frame ")]
    return decoded, frames_bad, details


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--no-tshark", action="store_true")
    ap.add_argument("pcap")
    args = ap.parse_args()

    try:
        roce, others, ops, problems = check_icrc(args.pcap)
    except (OSError, ValueError) as e:
        print("pcap-check: %s: %s" % (args.pcap, e))
        return 1
    print("pcap-check: %s: %d RoCE v2 packets, %d others" % (args.pcap, roce, others))
    for name, count in sorted(ops.items()):
        print("  %6d %s" % (count, name))
    if roce == 0:
        problems.append("no RoCE v2 packet (UDP port %d) in the capture" % ROCE_PORT)
    else:
        print("  ICRC of %d packets checked: %d bad" % (roce, sum("ICRC" in p for p in problems)))
    if args.no_tshark:
        pass
    elif not shutil.which("tshark"):
        problems.append("tshark not found (Debian package tshark; scripts/deps.sh wire)")
    else:
        decoded, frames_bad, details = tshark_check(args.pcap)
        if decoded is None:
            problems += frames_bad
        else:
            print("  tshark: %d packets decoded as InfiniBand, %d malformed or with an expert error"
                  % (decoded, len(frames_bad)))
            if decoded != roce:
                problems.append("tshark decoded %d packets as InfiniBand, %d RoCE v2 packets here"
                                % (decoded, roce))
            problems += ["tshark: " + f for f in frames_bad]
            for d in details[:40]:
                print("    " + d)
    for p in problems[:60]:
        print("  PROBLEM: " + p)
    if len(problems) > 60:
        print("  ... %d problems in all" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
