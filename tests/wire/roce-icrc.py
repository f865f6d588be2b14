#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the invariant CRC of every RoCE v2 packet of a capture.

Usage: roce-icrc.py FILE.pcap

Wireshark shows the ICRC but does not verify it; this does, from the
specification (IBTA annex A17: CRC-32 over eight bytes of ones, the IP and
UDP headers and the BTH with the variant fields set to ones, then the rest
of the packet), with Python's own CRC-32 - independent of the kernel code
under test. Prints one line per bad packet and a summary; exits 1 if any
packet is bad or none was found. Reads classic pcap (tcpdump -w), Ethernet
or Linux cooked captures, IPv4 and IPv6, optional 802.1Q tags.
"""

import struct
import sys
import zlib

ROCE_PORT = 4791


def packets(path):
    with open(path, 'rb') as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            return
        magic = struct.unpack('<I', hdr[:4])[0]
        if magic in (0xa1b2c3d4, 0xa1b23c4d):
            endian = '<'
        elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
            endian = '>'
        else:
            raise SystemExit(f'{path}: not a pcap file')
        linktype = struct.unpack(endian + 'I', hdr[20:24])[0]
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            incl = struct.unpack(endian + 'IIII', rec)[2]
            yield linktype, f.read(incl)


def ip_payload(linktype, frame):
    """(ip header bytes, udp+rest bytes) of a UDP packet, or None."""
    if linktype == 1:           # Ethernet
        off, etype = 14, struct.unpack('!H', frame[12:14])[0]
    elif linktype == 113:       # Linux cooked
        off, etype = 16, struct.unpack('!H', frame[14:16])[0]
    else:
        return None
    while etype == 0x8100:
        etype = struct.unpack('!H', frame[off + 2:off + 4])[0]
        off += 4
    if etype == 0x0800:
        ihl = (frame[off] & 0xf) * 4
        if frame[off + 9] != 17:
            return None
        return frame[off:off + ihl], frame[off + ihl:]
    if etype == 0x86dd:
        if frame[off + 6] != 17:
            return None
        return frame[off:off + 40], frame[off + 40:]
    return None


def icrc(ip, rest):
    ip = bytearray(ip)
    if ip[0] >> 4 == 4:
        ip[1] = 0xff                    # TOS
        ip[8] = 0xff                    # TTL
        ip[10:12] = b'\xff\xff'         # header checksum
    else:
        ip[0] |= 0x0f                   # traffic class (low nibble) ...
        ip[1:4] = b'\xff\xff\xff'       # ... and the flow label
        ip[7] = 0xff                    # hop limit
    udp = bytearray(rest[:8])
    udp[6:8] = b'\xff\xff'              # UDP checksum
    ulen = struct.unpack('!H', rest[4:6])[0]
    bth = bytearray(rest[8:20])
    bth[4] = 0xff                       # resv8a (FECN, BECN)
    body = rest[20:ulen - 4]
    crc = zlib.crc32(b'\xff' * 8)
    crc = zlib.crc32(bytes(ip) + bytes(udp) + bytes(bth) + body, crc)
    return crc, struct.unpack('<I', rest[ulen - 4:ulen])[0]


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    good = bad = 0
    for n, (lt, frame) in enumerate(packets(sys.argv[1]), 1):
        p = ip_payload(lt, frame)
        if not p:
            continue
        ip, rest = p
        if len(rest) < 24 or struct.unpack('!H', rest[2:4])[0] != ROCE_PORT:
            continue
        want, got = icrc(ip, rest)
        if want == got:
            good += 1
        else:
            bad += 1
            print(f'packet {n}: ICRC {got:#010x}, expected {want:#010x}')
    print(f'roce-icrc: {good} packets with a good ICRC, {bad} bad')
    sys.exit(1 if bad or not good else 0)


if __name__ == '__main__':
    main()
