#include "supervisor/base/code_signature.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"

namespace guard {
namespace {

constexpr uint32_t kMhMagic64 = 0xfeedfacf;
constexpr uint32_t kFatMagic = 0xcafebabe;
constexpr uint32_t kFatMagic64 = 0xcafebabf;
constexpr uint32_t kLcCodeSignature = 0x1d;
constexpr uint32_t kSuperBlob = 0xfade0cc0;
constexpr uint32_t kCodeDirectory = 0xfade0c02;
constexpr uint32_t kEntitlements = 0xfade7171;
// Bounds no real program comes near: a hostile file cannot make guard
// read or walk more than this.
constexpr uint32_t kMaxArchs = 64;
constexpr uint32_t kMaxLoadCommandBytes = 16u << 20;
constexpr uint32_t kMaxSignatureBytes = 64u << 20;
constexpr uint32_t kMaxBlobs = 1024;

uint32_t Le32(const std::string& s, size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data()) + at;
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

uint32_t Be32(const std::string& s, size_t at) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data()) + at;
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

uint64_t Be64(const std::string& s, size_t at) { return uint64_t{Be32(s, at)} << 32 | Be32(s, at + 4); }

Status Malformed(const std::string& what) { return Status::InvalidArgument("Mach-O: " + what); }

// The CodeDirectory's flags and the entitlements, from the SuperBlob `sig`.
Status ParseSuperBlob(const std::string& sig, SliceSignature* slice) {
  if (sig.size() < 12 || Be32(sig, 0) != kSuperBlob) return Malformed("no code signature SuperBlob");
  const uint32_t length = Be32(sig, 4), count = Be32(sig, 8);
  if (length > sig.size() || length < 12) return Malformed("SuperBlob length out of the signature");
  if (count > kMaxBlobs || 12 + uint64_t{count} * 8 > length) return Malformed("SuperBlob index out of the blob");
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t at = Be32(sig, 12 + size_t{i} * 8 + 4);
    if (uint64_t{at} + 8 > length) return Malformed("blob out of the SuperBlob");
    const uint32_t magic = Be32(sig, at), size = Be32(sig, at + 4);
    if (size < 8 || uint64_t{at} + size > length) return Malformed("blob length out of the SuperBlob");
    if (magic == kCodeDirectory && !slice->signed_code) {
      if (size < 16) return Malformed("CodeDirectory too short");
      slice->signed_code = true;
      slice->flags = Be32(sig, at + 12);
    } else if (magic == kEntitlements) {
      slice->entitlements = sig.substr(at + 8, size - 8);
    }
  }
  if (!slice->signed_code) return Malformed("no CodeDirectory in the signature");
  return Status::Ok();
}

// One thin 64-bit Mach-O at `base` of the file.
Status ReadSlice(const ReadAtFn& read, uint64_t base, SliceSignature* slice) {
  std::string header;
  GUARD_RETURN_IF_ERROR(read(base, 32, &header));
  if (Le32(header, 0) != kMhMagic64) return Malformed("not a 64-bit Mach-O");
  slice->cpu_type = Le32(header, 4);
  const uint32_t ncmds = Le32(header, 16), sizeofcmds = Le32(header, 20);
  if (sizeofcmds > kMaxLoadCommandBytes) return Malformed("load commands too large");
  std::string cmds;
  GUARD_RETURN_IF_ERROR(read(base + 32, sizeofcmds, &cmds));
  size_t at = 0;
  for (uint32_t i = 0; i < ncmds; ++i) {
    if (at + 8 > cmds.size()) return Malformed("load command out of the header");
    const uint32_t cmd = Le32(cmds, at), size = Le32(cmds, at + 4);
    if (size < 8 || at + size > cmds.size()) return Malformed("load command size out of the header");
    if (cmd == kLcCodeSignature) {
      if (size < 16) return Malformed("LC_CODE_SIGNATURE too short");
      const uint32_t dataoff = Le32(cmds, at + 8), datasize = Le32(cmds, at + 12);
      if (datasize > kMaxSignatureBytes) return Malformed("code signature too large");
      std::string sig;
      GUARD_RETURN_IF_ERROR(read(base + dataoff, datasize, &sig));
      return ParseSuperBlob(sig, slice);
    }
    at += size;
  }
  return Status::Ok();  // unsigned: signed_code stays false
}

}  // namespace

bool SliceSignature::AllowsDyldEnvironment() const {
  static constexpr char kKey[] = "<key>com.apple.security.cs.allow-dyld-environment-variables</key>";
  const size_t key = entitlements.find(kKey);
  if (key == std::string::npos) return false;
  const size_t value = entitlements.find_first_not_of(" \t\r\n", key + sizeof kKey - 1);
  return value != std::string::npos && entitlements.compare(value, 7, "<true/>") == 0;
}

Status ReadCodeSignatures(const ReadAtFn& read, std::vector<SliceSignature>* out) {
  out->clear();
  std::string head;
  GUARD_RETURN_IF_ERROR(read(0, 8, &head));
  const uint32_t be = Be32(head, 0);
  if (be != kFatMagic && be != kFatMagic64) {
    SliceSignature slice;
    GUARD_RETURN_IF_ERROR(ReadSlice(read, 0, &slice));
    out->push_back(std::move(slice));
    return Status::Ok();
  }
  const uint32_t count = Be32(head, 4);
  if (count == 0 || count > kMaxArchs) return Malformed("universal header with " + std::to_string(count) + " architectures");
  const size_t entry = be == kFatMagic ? 20 : 32;
  std::string archs;
  GUARD_RETURN_IF_ERROR(read(8, count * entry, &archs));
  for (uint32_t i = 0; i < count; ++i) {
    const size_t at = i * entry;
    const uint64_t offset = be == kFatMagic ? Be32(archs, at + 8) : Be64(archs, at + 8);
    SliceSignature slice;
    GUARD_RETURN_IF_ERROR(ReadSlice(read, offset, &slice));
    if (slice.cpu_type != Be32(archs, at)) return Malformed("universal entry names another architecture");
    out->push_back(std::move(slice));
  }
  return Status::Ok();
}

Status ReadCodeSignaturesOfFile(const std::string& path, std::vector<SliceSignature>* out) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::FromErrno(path, errno);
  ReadAtFn read = [&fd, &path](uint64_t offset, size_t size, std::string* bytes) {
    bytes->assign(size, '\0');
    size_t done = 0;
    while (done < size) {
      ssize_t got = pread(fd.get(), bytes->data() + done, size - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return Status::FromErrno(path, errno);
      if (got == 0) return Malformed(path + ": a structure runs past the end of the file");
      done += static_cast<size_t>(got);
    }
    return Status::Ok();
  };
  Status s = ReadCodeSignatures(read, out);
  if (!s.ok() && s.code() == Status::Code::kInvalidArgument) return Status::InvalidArgument(path + ": " + s.message());
  return s;
}

std::string CpuTypeName(uint32_t cpu_type) {
  if (cpu_type == 0x0100000c) return "arm64";
  if (cpu_type == 0x01000007) return "x86_64";
  return "cpu type " + std::to_string(cpu_type);
}

}  // namespace guard
