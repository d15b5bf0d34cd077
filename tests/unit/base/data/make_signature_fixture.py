#!/usr/bin/env python3
"""Makes a small copy of a thin 64-bit Mach-O's signing data, for
code_signature_test.cc: the file's header and load commands as they are,
then its code signature with the CodeDirectory's page hashes cut (its
nCodeSlots set to 0 and its length to its hashOffset), every other blob as
it is (the entitlements, the CMS signature), LC_CODE_SIGNATURE pointing at
it. What guard reads of a signature (the CodeDirectory's flags, the
entitlements) is the original's, byte for byte.

Usage: make_signature_fixture.py MACHO OUT
  claude-2.1.332-darwin-arm64.sig: from `npm pack @anthropic-ai/claude-code-darwin-arm64@2.1.332`,
  package/claude.
"""
import struct
import sys

data = open(sys.argv[1], "rb").read()
assert struct.unpack_from("<I", data, 0)[0] == 0xFEEDFACF, "not a thin 64-bit Mach-O"
ncmds, sizeofcmds = struct.unpack_from("<II", data, 16)
head = bytearray(data[:32 + sizeofcmds])
off = 32
for _ in range(ncmds):
    cmd, size = struct.unpack_from("<II", head, off)
    if cmd == 0x1D:
        sig_cmd = off
        dataoff, datasize = struct.unpack_from("<II", head, off + 8)
    off += size
sig = data[dataoff:dataoff + datasize]
magic, length, count = struct.unpack_from(">III", sig, 0)
assert magic == 0xFADE0CC0
blobs = []
for i in range(count):
    kind, o = struct.unpack_from(">II", sig, 12 + 8 * i)
    bmagic, blen = struct.unpack_from(">II", sig, o)
    blob = bytearray(sig[o:o + blen])
    if bmagic == 0xFADE0C02:
        hash_offset = struct.unpack_from(">I", blob, 16)[0]
        blob = blob[:hash_offset]
        struct.pack_into(">I", blob, 4, hash_offset)
        struct.pack_into(">I", blob, 28, 0)  # nCodeSlots
    blobs.append((kind, bytes(blob)))
index_end = 12 + 8 * len(blobs)
out_sig = bytearray()
pos = index_end
index = b""
for kind, blob in blobs:
    index += struct.pack(">II", kind, pos)
    out_sig += blob
    pos += len(blob)
superblob = struct.pack(">III", 0xFADE0CC0, pos, len(blobs)) + index + bytes(out_sig)
new_off = (len(head) + 15) & ~15
struct.pack_into("<II", head, sig_cmd + 8, new_off, len(superblob))
with open(sys.argv[2], "wb") as f:
    f.write(bytes(head) + b"\0" * (new_off - len(head)) + superblob)
