#!/usr/bin/env python3
"""Prints how a thin 64-bit Mach-O file is signed; exits 1 if it is not.

Usage: macho_signature.py BINARY (tools/macos/build.sh checks guard with it).
Reads the LC_CODE_SIGNATURE load command, the SuperBlob it points to and
the CodeDirectory's flags (0x2 adhoc, 0x20000 linker-signed, 0x10000 the
hardened runtime), as laid out in Apple's xnu osfmk/kern/cs_blobs.h.
"""
import struct
import sys

LC_CODE_SIGNATURE = 0x1D
MH_MAGIC_64 = 0xFEEDFACF
CSMAGIC_EMBEDDED_SIGNATURE = 0xFADE0CC0
CSMAGIC_CODEDIRECTORY = 0xFADE0C02


def signature(data):
    if len(data) < 32 or struct.unpack_from("<I", data, 0)[0] != MH_MAGIC_64:
        return None, "not a thin 64-bit Mach-O file"
    ncmds = struct.unpack_from("<I", data, 16)[0]
    off = 32
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, off)
        if cmd == LC_CODE_SIGNATURE:
            so, ss = struct.unpack_from("<II", data, off + 8)
            blob = data[so:so + ss]
            if len(blob) < 12:
                return None, "code signature out of the file"
            magic, _, count = struct.unpack_from(">III", blob, 0)
            if magic != CSMAGIC_EMBEDDED_SIGNATURE:
                return None, "code signature magic %#x" % magic
            for i in range(count):
                _, o = struct.unpack_from(">II", blob, 12 + 8 * i)
                if struct.unpack_from(">I", blob, o)[0] == CSMAGIC_CODEDIRECTORY:
                    flags = struct.unpack_from(">I", blob, o + 12)[0]
                    kind = "ad hoc" if flags & 0x2 else "signed"
                    return flags, "%s signature, CodeDirectory flags %#x" % (kind, flags)
            return None, "no CodeDirectory in the signature"
        off += size
    return None, "no LC_CODE_SIGNATURE"


def main():
    with open(sys.argv[1], "rb") as f:
        flags, text = signature(f.read())
    print(text)
    return 0 if flags is not None else 1


if __name__ == "__main__":
    sys.exit(main())
