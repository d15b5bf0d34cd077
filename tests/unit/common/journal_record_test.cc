// The record encoding: every kind and field round-trips, defaults cost
// nothing, unknown tags are skipped and every malformed form is refused.
#define BOOST_TEST_MODULE journal_record
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "common/journal_record.h"
#include "common/coding.h"

namespace guard {
namespace {

const std::vector<OpKind> kAllKinds = {
    OpKind::kCreate, OpKind::kModify,  OpKind::kRename,  OpKind::kExchange,     OpKind::kDelete,
    OpKind::kMkdir,  OpKind::kRmdir,   OpKind::kSymlink, OpKind::kLink,         OpKind::kChmod,
    OpKind::kMknod,  OpKind::kOutcome, OpKind::kFinal,   OpKind::kBlobResolved, OpKind::kSessionEnd,
    OpKind::kMark,
};

const std::string kNul("nul\0inside", 10);

FileState FullState(FileType type, int salt) {
  FileState s;
  s.type = type;
  s.mode = 04755 + static_cast<uint32_t>(salt);
  s.size = (uint64_t{1} << 40) + static_cast<uint64_t>(salt);
  s.mtime_ns = -1234567890123 - salt;
  s.symlink_target = "../t\n" + kNul + "\xff";
  s.blob.kind = BlobRef::Kind::kPending;
  s.blob.key = BlobKey{0x0123456789abcdefULL + static_cast<uint64_t>(salt), 0xfedcba9876543210ULL};
  s.blob.pending = "pending-" + std::to_string(salt);
  s.dev = 0xfd01 + static_cast<uint64_t>(salt);
  s.ino = (uint64_t{1} << 63) + static_cast<uint64_t>(salt);
  s.ctime_ns = -987654321 - salt;
  return s;
}

// A record with every field set to something other than its default.
Record FullRecord(OpKind kind) {
  Record r;
  r.kind = kind;
  r.seq = 0xfffffffffffffff0ULL;
  r.wall_ns = 1700000000123456789;
  r.mono_ns = -5;
  r.pid = -42;
  r.comm = "cc1plus";
  r.syscall = "renameat2";
  r.flags = kOutsideRoot | kNoFollow | (1u << 31);
  r.path = "a\nb";
  r.path2 = "\xff\xfe";
  r.target = kNul;
  r.before = FullState(FileType::kRegular, 1);
  r.before2 = FullState(FileType::kSymlink, 2);
  r.after = FullState(FileType::kUnknown, 3);
  r.new_mode = 0777;
  r.ref_seq = 77;
  r.result_errno = -2;
  r.pending = "tmp.0001";
  r.key = BlobKey{1, 2};
  r.label = "prompt: fix\n" + kNul;
  return r;
}

std::string Encode(const Record& r) {
  std::string out;
  EncodeRecord(r, &out);
  return out;
}

// Appends a hand-made field: tag, length, raw value.
void PutField(std::string* out, uint64_t tag, std::string_view value) {
  PutVarint64(out, tag);
  PutVarint64(out, value.size());
  out->append(value);
}

std::string Varint(uint64_t v) {
  std::string out;
  PutVarint64(&out, v);
  return out;
}

// A bare record of kind kModify followed by `fields`.
std::string Crafted(std::string_view fields) {
  std::string out(1, static_cast<char>(OpKind::kModify));
  out.append(fields);
  return out;
}

void CheckCorrupt(std::string_view encoding, std::string_view why) {
  Record r;
  Status s = DecodeRecord(encoding, &r);
  BOOST_TEST_CONTEXT(why) { BOOST_TEST(s.IsCorruption(), s.ToString()); }
}

BOOST_AUTO_TEST_CASE(EveryKindRoundTripsWithAllFields) {
  for (OpKind kind : kAllKinds) {
    const Record in = FullRecord(kind);
    Record out;
    Status s = DecodeRecord(Encode(in), &out);
    BOOST_TEST_CONTEXT(OpKindName(kind)) {
      BOOST_TEST(s.ok(), s.ToString());
      BOOST_TEST((out == in));
    }
  }
}

BOOST_AUTO_TEST_CASE(DefaultRecordIsOneByteAndRoundTrips) {
  for (OpKind kind : kAllKinds) {
    Record in;
    in.kind = kind;
    const std::string enc = Encode(in);
    BOOST_TEST(enc.size() == 1u);
    Record out = FullRecord(OpKind::kCreate);  // decoding must reset every field
    BOOST_TEST(DecodeRecord(enc, &out).ok());
    BOOST_TEST((out == in));
  }
}

BOOST_AUTO_TEST_CASE(DefaultFileStateIsOmitted) {
  Record r;
  r.kind = OpKind::kCreate;
  r.path = "x";
  const size_t without = Encode(r).size();
  r.before.type = FileType::kAbsent;  // still the default: nothing written
  BOOST_TEST(Encode(r).size() == without);
  r.before.mode = 0644;
  BOOST_TEST(Encode(r).size() > without);
}

BOOST_AUTO_TEST_CASE(BinaryStringsSurviveUnchanged) {
  const std::vector<std::string> paths = {
      "a\nb", "\xff\xfe", kNul, std::string(1, '\0'), "\xc3\x28", std::string(100000, '\x80'),
  };
  for (const std::string& p : paths) {
    Record in;
    in.kind = OpKind::kDelete;
    in.path = p;
    in.before.symlink_target = p;
    Record out;
    BOOST_TEST(DecodeRecord(Encode(in), &out).ok());
    BOOST_TEST((out.path == p));
    BOOST_TEST((out.before.symlink_target == p));
  }
}

BOOST_AUTO_TEST_CASE(ExtremeIntegersRoundTrip) {
  Record in;
  in.kind = OpKind::kOutcome;
  in.seq = std::numeric_limits<uint64_t>::max();
  in.wall_ns = std::numeric_limits<int64_t>::min();
  in.mono_ns = std::numeric_limits<int64_t>::max();
  in.pid = std::numeric_limits<int32_t>::min();
  in.result_errno = std::numeric_limits<int32_t>::max();
  in.flags = std::numeric_limits<uint32_t>::max();
  in.new_mode = std::numeric_limits<uint32_t>::max();
  in.after.size = std::numeric_limits<uint64_t>::max();
  in.after.mtime_ns = std::numeric_limits<int64_t>::min();
  in.key = BlobKey{~0ULL, ~0ULL};
  Record out;
  BOOST_TEST(DecodeRecord(Encode(in), &out).ok());
  BOOST_TEST((out == in));
}

BOOST_AUTO_TEST_CASE(ZigZagAndVarintAgreeWithTheSpec) {
  BOOST_TEST(ZigZagEncode(0) == 0u);
  BOOST_TEST(ZigZagEncode(-1) == 1u);
  BOOST_TEST(ZigZagEncode(1) == 2u);
  BOOST_TEST(ZigZagEncode(-2) == 3u);
  BOOST_TEST(ZigZagEncode(std::numeric_limits<int64_t>::min()) == ~0ULL);
  BOOST_TEST(ZigZagDecode(~0ULL) == std::numeric_limits<int64_t>::min());
  BOOST_TEST((Varint(300) == std::string("\xac\x02", 2)));
  BOOST_TEST(Varint(~0ULL).size() == 10u);
  BOOST_TEST(Varint64Length(~0ULL) == 10u);
  std::string_view overlong("\x80\x00", 2);  // zero, written long: accepted
  uint64_t v = 1;
  BOOST_TEST(GetVarint64(&overlong, &v));
  BOOST_TEST(v == 0u);
}

BOOST_AUTO_TEST_CASE(UnknownTagsAreSkipped) {
  Record in = FullRecord(OpKind::kRename);
  std::string enc = Encode(in);
  PutField(&enc, 99, "from a newer writer");
  PutField(&enc, uint64_t{1} << 40, "");
  PutField(&enc, ~0ULL, std::string("\x01\x02\x03", 3));

  // And inside a nested FileState: rebuild `before` with an extra field.
  FileState st;
  st.type = FileType::kDirectory;
  st.mode = 0700;
  std::string nested;
  PutField(&nested, 1, Varint(static_cast<uint64_t>(FileType::kDirectory)));
  PutField(&nested, 42, "future");
  PutField(&nested, 2, Varint(0700));
  PutField(&enc, 11, nested);  // tag 11 (before), given again: the last one wins
  in.before = st;

  Record out;
  Status s = DecodeRecord(enc, &out);
  BOOST_TEST(s.ok(), s.ToString());
  BOOST_TEST((out == in));
}

// 1.5: kinds 64-127 change no path: one a later version adds is read (and
// then ignored by every rule), not reported as malformed; `thinned` (65)
// carries its key.
BOOST_AUTO_TEST_CASE(KindsThatChangeNoPathAreReadEvenWhenUnknown) {
  Record thinned;
  thinned.kind = OpKind::kThinned;
  thinned.seq = 9;
  thinned.key = BlobKey{7, 8};
  std::string enc;
  EncodeRecord(thinned, &enc);
  Record out;
  Status s = DecodeRecord(enc, &out);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  BOOST_TEST((out == thinned));
  BOOST_TEST(std::string(OpKindName(OpKind::kThinned)) == "thinned");
  for (int kind : {66, 100, 127}) {
    s = DecodeRecord(std::string(1, static_cast<char>(kind)), &out);
    BOOST_TEST(s.ok(), "kind " << kind << ": " << s.ToString());
    BOOST_TEST(!IsOperation(out.kind));
  }
}

BOOST_AUTO_TEST_CASE(MalformedEncodingsAreCorruption) {
  CheckCorrupt("", "empty input");
  CheckCorrupt(std::string(1, '\0'), "kind 0");
  CheckCorrupt("\x0c", "kind 12 (between operations and bookkeeping)");
  CheckCorrupt("\x25", "kind 37 (after kMark)");
  CheckCorrupt("\xff", "kind 255");
  CheckCorrupt("\x80", "kind 128 (past the range that changes no path)");
  CheckCorrupt(Crafted("\x80"), "tag varint cut off");
  CheckCorrupt(Crafted(std::string(11, '\xff')), "tag varint longer than 10 bytes");
  CheckCorrupt(Crafted(std::string(9, '\xff') + "\x02"), "tag varint past 64 bits");
  CheckCorrupt(Crafted("\x08"), "no length after the tag");
  CheckCorrupt(Crafted("\x08\x80"), "length varint cut off");
  CheckCorrupt(Crafted("\x08\x05" "abc"), "length past the end");
  CheckCorrupt(Crafted(std::string("\x00\x01x", 3)), "tag 0");
  CheckCorrupt(Crafted("\x01\x00"), "empty integer field");
  CheckCorrupt(Crafted("\x01\x01\x80"), "integer varint cut off inside its field");
  CheckCorrupt(Crafted("\x01\x02\x01\x01"), "bytes after an integer");
  std::string f;
  PutField(&f, 7, Varint(uint64_t{1} << 32));
  CheckCorrupt(Crafted(f), "flags above 32 bits");
  f.clear();
  PutField(&f, 4, Varint(ZigZagEncode(int64_t{1} << 31)));
  CheckCorrupt(Crafted(f), "pid above int32");
  f.clear();
  PutField(&f, 16, Varint(ZigZagEncode(-(int64_t{1} << 31) - 1)));
  CheckCorrupt(Crafted(f), "errno below int32");
  f.clear();
  PutField(&f, 18, std::string(15, 'k'));
  CheckCorrupt(Crafted(f), "blob key of 15 bytes");

  // Nested FileState damage.
  std::string nested;
  PutField(&nested, 1, Varint(6));
  f.clear();
  PutField(&f, 11, nested);
  CheckCorrupt(Crafted(f), "FileType 6");
  nested.clear();
  PutField(&nested, 6, Varint(3));
  f.clear();
  PutField(&f, 12, nested);
  CheckCorrupt(Crafted(f), "blob kind 3");
  f.clear();
  PutField(&f, 13, "\x05\x09" "abc");
  CheckCorrupt(Crafted(f), "nested length past the end of the nested value");
  f.clear();
  PutField(&f, 11, "\x03\x01\xff");
  CheckCorrupt(Crafted(f), "nested varint cut off");
  f.clear();
  PutField(&f, 11, "\x07\x10" + std::string(16, 'k') + "\x80");
  CheckCorrupt(Crafted(f), "garbage after a valid nested field");
}

BOOST_AUTO_TEST_CASE(EveryPrefixDecodesOrIsCorruption) {
  const std::string enc = Encode(FullRecord(OpKind::kExchange));
  size_t ok = 0;
  for (size_t n = 0; n < enc.size(); ++n) {
    Record r;
    Status s = DecodeRecord(std::string_view(enc).substr(0, n), &r);
    BOOST_TEST((s.ok() || s.IsCorruption()));
    ok += s.ok();
  }
  // A prefix ending between fields is a valid, shorter record.
  BOOST_TEST(ok > 0u);
  BOOST_TEST(ok < enc.size() / 2);
}

BOOST_AUTO_TEST_CASE(NamesAndOperationClass) {
  BOOST_TEST(std::string(OpKindName(OpKind::kBlobResolved)) == "blob-resolved");
  BOOST_TEST(std::string(OpKindName(static_cast<OpKind>(200))) == "invalid");
  BOOST_TEST(std::string(FileTypeName(FileType::kSymlink)) == "symlink");
  BOOST_TEST(std::string(FileTypeName(static_cast<FileType>(9))) == "invalid");
  for (OpKind k : kAllKinds) {
    BOOST_TEST(IsOperation(k) == (static_cast<int>(k) <= static_cast<int>(OpKind::kMknod)));
  }
  BOOST_TEST(!IsOperation(static_cast<OpKind>(0)));
}

BOOST_AUTO_TEST_CASE(EveryKindHasItsOwnNameAndAPastTense) {
  std::set<std::string> names;
  for (OpKind k : kAllKinds) {
    BOOST_TEST_CONTEXT(static_cast<int>(k)) {
      BOOST_TEST(std::string(OpKindName(k)) != "invalid");
      BOOST_TEST(names.insert(OpKindName(k)).second);
      BOOST_TEST(std::string(OpKindPastTense(k)) != "invalid");
      if (!IsOperation(k)) BOOST_TEST(std::string(OpKindPastTense(k)) == OpKindName(k));
    }
  }
  BOOST_TEST(std::string(OpKindPastTense(OpKind::kCreate)) == "created");
  BOOST_TEST(std::string(OpKindPastTense(OpKind::kModify)) == "modified");
  BOOST_TEST(std::string(OpKindPastTense(OpKind::kRename)) == "renamed");
  BOOST_TEST(std::string(OpKindPastTense(OpKind::kMkdir)) == "mkdir");
  BOOST_TEST(std::string(OpKindPastTense(static_cast<OpKind>(200))) == "invalid");
}

}  // namespace
}  // namespace guard

namespace guard {
namespace {

Record Move(OpKind kind, FileType first, FileType second, uint32_t flags = 0) {
  Record r;
  r.kind = kind;
  r.path = flags & kOutsideRoot ? "/elsewhere/a" : "a";
  r.path2 = flags & kOutsideRoot2 ? "/elsewhere/b" : "b";
  r.flags = flags;
  r.before.type = flags & kOutsideRoot ? FileType::kUnknown : first;
  r.before2.type = flags & kOutsideRoot2 ? FileType::kUnknown : second;
  return r;
}

BOOST_AUTO_TEST_CASE(ADirectoryMoveHasBothNamesInsideAndADirectoryOnOneSide) {
  using enum FileType;
  BOOST_TEST(MovesDirectoryWithinRoot(Move(OpKind::kRename, kDirectory, kAbsent)));
  BOOST_TEST(MovesDirectoryWithinRoot(Move(OpKind::kExchange, kRegular, kDirectory)));
  BOOST_TEST(!MovesDirectoryWithinRoot(Move(OpKind::kRename, kRegular, kRegular)));
  BOOST_TEST(!MovesDirectoryWithinRoot(Move(OpKind::kLink, kDirectory, kAbsent)));
  // Across the root boundary the entries are carried one by one instead.
  BOOST_TEST(!MovesDirectoryWithinRoot(Move(OpKind::kRename, kDirectory, kAbsent, kOutsideRoot2)));
  BOOST_TEST(!MovesDirectoryWithinRoot(Move(OpKind::kExchange, kDirectory, kDirectory, kOutsideRoot)));
  Record no_second = Move(OpKind::kRename, kDirectory, kAbsent);
  no_second.path2.clear();
  BOOST_TEST(!MovesDirectoryWithinRoot(no_second));
}

}  // namespace
}  // namespace guard
