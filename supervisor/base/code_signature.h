// What a Mach-O program's code signature says about injection (guard
// doctor on a Mac: docs/macos.md). dyld ignores DYLD_INSERT_LIBRARIES for a
// program signed with the hardened runtime (the CodeDirectory's flag
// 0x10000) unless its entitlements allow DYLD_* variables
// (com.apple.security.cs.allow-dyld-environment-variables). Claude Code's
// macOS binary is such a program: no injected library sees its calls.
//
// Platform-free: the file is read, not loaded, so Linux reads a Mac's
// binaries as well (tests/unit/base/code_signature_test.cc). The layout is
// Apple's (mach-o/loader.h, mach-o/fat.h, xnu's osfmk/kern/cs_blobs.h):
//   thin 64-bit Mach-O: header (magic 0xfeedfacf, little-endian), load
//     commands; LC_CODE_SIGNATURE (0x1d) names the signature's offset and
//     size in the file;
//   universal: header (0xcafebabe, or 0xcafebabf with 64-bit offsets,
//     big-endian), one entry per architecture, each a thin Mach-O;
//   the signature: a SuperBlob (0xfade0cc0, big-endian) indexing blobs: the
//     CodeDirectory (0xfade0c02; flags at byte 12) and the entitlements
//     (0xfade7171: an XML property list).
// The file may be hostile: every offset and length is checked against the
// file and against the blob that holds it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"

namespace guard {

inline constexpr uint32_t kCsAdhoc = 0x2;
inline constexpr uint32_t kCsRuntime = 0x10000;  // the hardened runtime
inline constexpr uint32_t kCsLinkerSigned = 0x20000;

// One architecture's signature.
struct SliceSignature {
  uint32_t cpu_type = 0;       // CPU_TYPE_ARM64 0x0100000c, CPU_TYPE_X86_64 0x01000007
  bool signed_code = false;    // an LC_CODE_SIGNATURE with a CodeDirectory
  uint32_t flags = 0;          // the CodeDirectory's
  std::string entitlements;    // the XML property list; "" when none

  bool hardened() const { return (flags & kCsRuntime) != 0; }
  // The entitlement that lets DYLD_* variables reach a hardened program.
  bool AllowsDyldEnvironment() const;
  // Whether a library named by DYLD_INSERT_LIBRARIES is loaded into it (as
  // far as the signature decides; SIP's protected paths are another rule).
  bool InjectionReaches() const { return !hardened() || AllowsDyldEnvironment(); }
};

// Reads `size` bytes at `offset` of the file into *out: an error when the
// file holds fewer.
using ReadAtFn = std::function<Status(uint64_t offset, size_t size, std::string* out)>;

// Every architecture's signature, in the file's order. kInvalidArgument
// when the file is no Mach-O or its structure lies outside it.
Status ReadCodeSignatures(const ReadAtFn& read, std::vector<SliceSignature>* out);
Status ReadCodeSignaturesOfFile(const std::string& path, std::vector<SliceSignature>* out);

// "arm64", "x86_64", or the number.
std::string CpuTypeName(uint32_t cpu_type);

}  // namespace guard
