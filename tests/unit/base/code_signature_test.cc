// The Mach-O code signature reader (supervisor/base/code_signature.h): a
// real program's signing data (Claude Code 2.1.332 for macOS arm64, cut as
// data/make_signature_fixture.py says), and a table of made-up files:
// signed or not, hardened or not, thin or universal, and damaged ones, each
// refused without reading past what it holds.
#define BOOST_TEST_MODULE code_signature
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "supervisor/base/code_signature.h"

namespace guard {
namespace {

constexpr uint32_t kArm64 = 0x0100000c;
constexpr uint32_t kX86_64 = 0x01000007;

std::string Fixture(const std::string& name) { return std::string(GUARD_TEST_DATA_DIR) + "/" + name; }

void Le(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>(v >> (8 * i)));
}
void Be(std::string* s, uint32_t v) {
  for (int i = 3; i >= 0; --i) s->push_back(static_cast<char>(v >> (8 * i)));
}
void SetLe(std::string* s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
}
void SetBe(std::string* s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * (3 - i)));
}

// A SuperBlob with a CodeDirectory of `flags` (unless `flags` < 0) and, when
// given, an entitlements blob.
std::string SuperBlob(int64_t flags, const std::string& entitlements) {
  std::vector<std::string> blobs;
  if (flags >= 0) {
    std::string cd;
    Be(&cd, 0xfade0c02);
    Be(&cd, 44);
    Be(&cd, 0x20400);
    Be(&cd, static_cast<uint32_t>(flags));
    cd.resize(44, '\0');
    blobs.push_back(cd);
  }
  if (!entitlements.empty()) {
    std::string e;
    Be(&e, 0xfade7171);
    Be(&e, static_cast<uint32_t>(8 + entitlements.size()));
    blobs.push_back(e + entitlements);
  }
  std::string index, body;
  uint32_t at = 12 + 8 * static_cast<uint32_t>(blobs.size());
  for (size_t i = 0; i < blobs.size(); ++i) {
    Be(&index, i == 0 && flags >= 0 ? 0 : 5);
    Be(&index, at);
    at += static_cast<uint32_t>(blobs[i].size());
    body += blobs[i];
  }
  std::string out;
  Be(&out, 0xfade0cc0);
  Be(&out, at);
  Be(&out, static_cast<uint32_t>(blobs.size()));
  return out + index + body;
}

// A thin 64-bit Mach-O: its header, a segment-like command, and
// LC_CODE_SIGNATURE naming `signature` (none when empty).
std::string Thin(uint32_t cpu, const std::string& signature) {
  std::string cmds;
  Le(&cmds, 0x19);  // LC_SEGMENT_64, its body unread
  Le(&cmds, 72);
  cmds.resize(72, '\0');
  if (!signature.empty()) {
    Le(&cmds, 0x1d);
    Le(&cmds, 16);
    Le(&cmds, static_cast<uint32_t>(32 + cmds.size() + 8));  // right after the commands
    Le(&cmds, static_cast<uint32_t>(signature.size()));
  }
  std::string out;
  Le(&out, 0xfeedfacf);
  Le(&out, cpu);
  Le(&out, 0);
  Le(&out, 2);  // MH_EXECUTE
  Le(&out, signature.empty() ? 1 : 2);
  Le(&out, static_cast<uint32_t>(cmds.size()));
  Le(&out, 0);
  Le(&out, 0);
  return out + cmds + signature;
}

// A universal file of `slices` (FAT_MAGIC, or FAT_MAGIC_64 when `wide`).
std::string Universal(const std::vector<std::pair<uint32_t, std::string>>& slices, bool wide) {
  std::string out;
  Be(&out, wide ? 0xcafebabf : 0xcafebabe);
  Be(&out, static_cast<uint32_t>(slices.size()));
  uint32_t at = 4096;
  std::string body;
  for (const auto& [cpu, slice] : slices) {
    Be(&out, cpu);
    Be(&out, 0);
    if (wide) Be(&out, 0);
    Be(&out, at);
    if (wide) Be(&out, 0);
    Be(&out, static_cast<uint32_t>(slice.size()));
    Be(&out, 12);
    if (wide) Be(&out, 0);
    body.resize(at - 4096, '\0');
    body += slice;
    at = static_cast<uint32_t>(4096 + ((body.size() + 4095) & ~size_t{4095}));
  }
  out.resize(4096, '\0');
  return out + body;
}

Status Read(const std::string& file, std::vector<SliceSignature>* out) {
  ReadAtFn read = [&file](uint64_t offset, size_t size, std::string* bytes) {
    if (offset > file.size() || size > file.size() - offset) return Status::InvalidArgument("past the end");
    *bytes = file.substr(offset, size);
    return Status::Ok();
  };
  return ReadCodeSignatures(read, out);
}

const std::string kNoDyld =
    "<plist><dict><key>com.apple.security.cs.allow-jit</key><true/></dict></plist>";
const std::string kDyldTrue =
    "<plist><dict>\n  <key>com.apple.security.cs.allow-dyld-environment-variables</key>\n  <true/>\n</dict></plist>";
const std::string kDyldFalse =
    "<plist><dict><key>com.apple.security.cs.allow-dyld-environment-variables</key><false/></dict></plist>";

BOOST_AUTO_TEST_CASE(ClaudeCodesMacBinaryIsHardenedWithoutTheDyldEntitlement) {
  std::vector<SliceSignature> slices;
  Status s = ReadCodeSignaturesOfFile(Fixture("claude-2.1.332-darwin-arm64.sig"), &slices);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_REQUIRE_EQUAL(slices.size(), 1u);
  BOOST_TEST(CpuTypeName(slices[0].cpu_type) == "arm64");
  BOOST_TEST(slices[0].signed_code);
  BOOST_TEST(slices[0].flags == 0x10000u);
  BOOST_TEST(slices[0].hardened());
  BOOST_TEST(slices[0].entitlements.find("com.apple.security.cs.disable-library-validation") != std::string::npos);
  BOOST_TEST(!slices[0].AllowsDyldEnvironment());
  BOOST_TEST(!slices[0].InjectionReaches());
}

struct Case {
  const char* name;
  std::string file;
  bool ok;
  std::vector<bool> hardened;  // per slice
  std::vector<bool> reaches;   // InjectionReaches, per slice
};

BOOST_AUTO_TEST_CASE(SignaturesAreReadFromEveryKindOfFile) {
  const std::string hardened = Thin(kArm64, SuperBlob(0x10000, kNoDyld));
  const std::string adhoc = Thin(kX86_64, SuperBlob(0x20002, ""));
  const std::vector<Case> cases = {
      {"hardened, no dyld entitlement", hardened, true, {true}, {false}},
      {"hardened, dyld entitlement true", Thin(kArm64, SuperBlob(0x10000, kDyldTrue)), true, {true}, {true}},
      {"hardened, dyld entitlement false", Thin(kArm64, SuperBlob(0x10000, kDyldFalse)), true, {true}, {false}},
      {"ad hoc, linker-signed", adhoc, true, {false}, {true}},
      {"unsigned", Thin(kArm64, ""), true, {false}, {true}},
      {"universal", Universal({{kArm64, hardened}, {kX86_64, adhoc}}, false), true, {true, false}, {false, true}},
      {"universal, 64-bit offsets", Universal({{kX86_64, adhoc}, {kArm64, hardened}}, true), true, {false, true},
       {true, false}},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      std::vector<SliceSignature> slices;
      Status s = Read(c.file, &slices);
      BOOST_TEST(s.ok() == c.ok, s.ToString());
      BOOST_REQUIRE_EQUAL(slices.size(), c.hardened.size());
      for (size_t i = 0; i < slices.size(); ++i) {
        BOOST_TEST(slices[i].hardened() == c.hardened[i]);
        BOOST_TEST(slices[i].InjectionReaches() == c.reaches[i]);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(DamagedFilesAreRefusedWithoutReadingPastThem) {
  const std::string good = Thin(kArm64, SuperBlob(0x10000, kNoDyld));
  const size_t sig_cmd = 32 + 72;       // LC_CODE_SIGNATURE
  const size_t sig = 32 + 72 + 16;  // the SuperBlob, right after the commands
  struct Damage {
    const char* name;
    std::string file;
  };
  std::vector<Damage> damages;
  damages.push_back({"an ELF file", std::string("\x7f" "ELF\x02\x01\x01\0", 8) + std::string(64, '\0')});
  damages.push_back({"cut inside the header", good.substr(0, 20)});
  damages.push_back({"cut inside the signature", good.substr(0, good.size() - 10)});
  std::string f = good;
  SetLe(&f, 20, 1u << 30);  // sizeofcmds
  damages.push_back({"load commands larger than the file", f});
  f = good;
  SetLe(&f, 32 + 4, 0);  // the first command's size
  damages.push_back({"a load command of size 0", f});
  f = good;
  SetLe(&f, sig_cmd + 8, 0xfffffff0);  // dataoff
  damages.push_back({"the signature's offset past the end", f});
  f = good;
  SetBe(&f, sig + 8, 0x7fffffff);  // the SuperBlob's count
  damages.push_back({"a SuperBlob count past its length", f});
  f = good;
  SetBe(&f, sig + 12 + 4, 0x10000);  // the first blob's offset
  damages.push_back({"a blob offset past the SuperBlob", f});
  f = good;
  SetBe(&f, sig + 12 + 16 + 4, 0xffff);  // the CodeDirectory's length
  damages.push_back({"a blob length past the SuperBlob", f});
  damages.push_back({"a signature without a CodeDirectory", Thin(kArm64, SuperBlob(-1, kNoDyld))});
  std::string u = Universal({{kArm64, good}}, false);
  SetBe(&u, 8, kX86_64);
  damages.push_back({"a universal entry naming another architecture", u});
  u = Universal({{kArm64, good}}, false);
  SetBe(&u, 4, 100000);
  damages.push_back({"a universal header with 100000 architectures", u});
  for (const Damage& d : damages) {
    BOOST_TEST_CONTEXT(d.name) {
      std::vector<SliceSignature> slices;
      Status s = Read(d.file, &slices);
      BOOST_TEST(!s.ok());
      BOOST_TEST((s.code() == Status::Code::kInvalidArgument), s.ToString());
    }
  }
}

}  // namespace
}  // namespace guard
