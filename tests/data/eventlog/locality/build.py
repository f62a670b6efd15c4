#!/usr/bin/env python3
"""Builds event logs of platforms that start the TPM at a higher locality, for
tests/cross/eventlog_locality.sh and tests/unit/test_boot.c.

Source: ../guest-ovmf.bin, the OVMF guest log this project recorded (tests/data/eventlog), with
one EV_NO_ACTION "StartupLocality" event (TCG PC Client Platform Firmware Profile, 10.4.5.3:
signature "StartupLocality\\0" and one byte) put right after the Spec ID event, as server
firmware logs it (locality 3; 4 for an H-CRTM). Everything else is the guest's log, byte for
byte. NAME.pcrs is the replay computed here with hashlib, independently of attestctl: PCR 0
starts at 00..0L (L in the last byte) instead of zeros; every other PCR is the guest's.
Run: python3 build.py (writes next to itself).
"""
import hashlib, os, struct

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, '..', 'guest-ovmf.bin')
ALGS = {0x0004: ('sha1', hashlib.sha1, 20), 0x000b: ('sha256', hashlib.sha256, 32),
        0x000c: ('sha384', hashlib.sha384, 48), 0x000d: ('sha512', hashlib.sha512, 64)}


def records(d):
    """(offset, end, pcr, type, {alg: digest}) of each crypto-agile record after the header."""
    off = 32 + struct.unpack_from('<I', d, 28)[0]
    while off < len(d):
        pcr, typ, count = struct.unpack_from('<III', d, off)
        p, dig = off + 12, {}
        for _ in range(count):
            alg = struct.unpack_from('<H', d, p)[0]
            size = ALGS[alg][2]
            dig[alg] = d[p + 2:p + 2 + size]
            p += 2 + size
        n = struct.unpack_from('<I', d, p)[0]
        yield off, p + 4 + n, pcr, typ, dig
        off = p + 4 + n


def build(name, locality):
    d = open(SRC, 'rb').read()
    header_end = 32 + struct.unpack_from('<I', d, 28)[0]
    banks = sorted(next(records(d))[4].keys())
    data = b'StartupLocality\0' + bytes([locality])
    ev = struct.pack('<III', 0, 3, len(banks))
    for a in banks:
        ev += struct.pack('<H', a) + bytes(ALGS[a][2])
    ev += struct.pack('<I', len(data)) + data
    out = d[:header_end] + ev + d[header_end:]
    open(os.path.join(HERE, name + '.bin'), 'wb').write(out)
    pcrs = {}
    for _, _, pcr, typ, dig in records(out):
        if typ == 3:  # EV_NO_ACTION: never extended
            continue
        for a, v in dig.items():
            nm, h, size = ALGS[a]
            start = bytes(size - 1) + bytes([locality]) if pcr == 0 else bytes(size)
            pcrs[(pcr, nm)] = h(pcrs.get((pcr, nm), start) + v).digest()
    with open(os.path.join(HERE, name + '.pcrs'), 'w') as f:
        for a in banks:
            nm = ALGS[a][0]
            for pcr in sorted(p for p, b in pcrs if b == nm):
                f.write('pcr%d %s %s\n' % (pcr, nm, pcrs[(pcr, nm)].hex()))


build('ovmf-locality3', 3)
build('ovmf-hcrtm4', 4)
