// The record encoding (docs/format.md (Part I), "Records"):
//
//   record := kind u8 | field*
//   field  := tag varint | length varint | value[length]
//
// A value is a varint (unsigned), a zigzagged varint (signed), raw bytes
// (strings: any bytes at all), 16 bytes (a BlobKey: high u64 LE, low u64 LE)
// or a nested field sequence (a FileState). Every value carries its length,
// so a reader skips a tag it does not know without understanding it: that is
// what lets a newer minor version add fields. A field equal to its default
// (0, empty, FileState{}) is not written.
#include "common/journal_record.h"

#include <climits>
#include <string>

#include "common/coding.h"

namespace guard {
namespace {

// Field tags. They are part of the on-disk format: never renumber or reuse
// one; a new field gets a new number (see docs/format.md (Part I)). Tag 0 is
// never written, so that zeros cannot pass for a field.
enum RecordTag : uint64_t {
  kTagSeq = 1,
  kTagWallNs = 2,
  kTagMonoNs = 3,
  kTagPid = 4,
  kTagComm = 5,
  kTagSyscall = 6,
  kTagFlags = 7,
  kTagPath = 8,
  kTagPath2 = 9,
  kTagTarget = 10,
  kTagBefore = 11,
  kTagBefore2 = 12,
  kTagAfter = 13,
  kTagNewMode = 14,
  kTagRefSeq = 15,
  kTagResultErrno = 16,
  kTagPending = 17,
  kTagKey = 18,
  kTagLabel = 19,  // 1.2: a mark's label; 1.4: what an `incomplete` record saw
};

enum FileStateTag : uint64_t {
  kTagType = 1,
  kTagMode = 2,
  kTagSize = 3,
  kTagMtimeNs = 4,
  kTagSymlinkTarget = 5,
  kTagBlobKind = 6,
  kTagBlobKey = 7,
  kTagBlobPending = 8,
  // 1.1: the stat signature of post-images and final states.
  kTagDev = 9,
  kTagIno = 10,
  kTagCtimeNs = 11,
};

constexpr size_t kBlobKeyBytes = 16;

// ---- Encoding ----

void PutFieldHeader(std::string* out, uint64_t tag, size_t length) {
  PutVarint64(out, tag);
  PutVarint64(out, length);
}

void PutUnsigned(std::string* out, uint64_t tag, uint64_t v) {
  if (v == 0) return;
  PutFieldHeader(out, tag, Varint64Length(v));
  PutVarint64(out, v);
}

void PutSigned(std::string* out, uint64_t tag, int64_t v) { PutUnsigned(out, tag, ZigZagEncode(v)); }

void PutBytes(std::string* out, uint64_t tag, std::string_view s) {
  if (s.empty()) return;
  PutFieldHeader(out, tag, s.size());
  out->append(s);
}

void PutKey(std::string* out, uint64_t tag, const BlobKey& key) {
  if (key == BlobKey{}) return;
  PutFieldHeader(out, tag, kBlobKeyBytes);
  PutFixed64(out, key.high);
  PutFixed64(out, key.low);
}

void EncodeFileState(const FileState& s, std::string* out) {
  PutUnsigned(out, kTagType, static_cast<uint64_t>(s.type));
  PutUnsigned(out, kTagMode, s.mode);
  PutUnsigned(out, kTagSize, s.size);
  PutSigned(out, kTagMtimeNs, s.mtime_ns);
  PutBytes(out, kTagSymlinkTarget, s.symlink_target);
  PutUnsigned(out, kTagBlobKind, static_cast<uint64_t>(s.blob.kind));
  PutKey(out, kTagBlobKey, s.blob.key);
  PutBytes(out, kTagBlobPending, s.blob.pending);
  PutUnsigned(out, kTagDev, s.dev);
  PutUnsigned(out, kTagIno, s.ino);
  PutSigned(out, kTagCtimeNs, s.ctime_ns);
}

void PutFileState(std::string* out, uint64_t tag, const FileState& s) {
  if (s == FileState{}) return;
  std::string nested;
  EncodeFileState(s, &nested);
  PutBytes(out, tag, nested);
}

// ---- Decoding ----
// Each Parse* takes the whole value of one field and must consume all of it:
// a value longer than its varint is as malformed as a truncated one.

Status FieldError(uint64_t tag, std::string_view what) {
  return Status::Corruption("field " + std::to_string(tag) + ": " + std::string(what));
}

Status ParseUnsigned(uint64_t tag, std::string_view value, uint64_t max, uint64_t* out) {
  uint64_t v = 0;
  if (!GetVarint64(&value, &v)) return FieldError(tag, "truncated or overlong varint");
  if (!value.empty()) return FieldError(tag, "bytes after the varint");
  if (v > max) return FieldError(tag, "value " + std::to_string(v) + " out of range");
  *out = v;
  return Status::Ok();
}

Status ParseU64(uint64_t tag, std::string_view value, uint64_t* out) {
  return ParseUnsigned(tag, value, UINT64_MAX, out);
}

Status ParseU32(uint64_t tag, std::string_view value, uint32_t* out) {
  uint64_t v = 0;
  GUARD_RETURN_IF_ERROR(ParseUnsigned(tag, value, UINT32_MAX, &v));
  *out = static_cast<uint32_t>(v);
  return Status::Ok();
}

Status ParseI64(uint64_t tag, std::string_view value, int64_t* out) {
  uint64_t v = 0;
  GUARD_RETURN_IF_ERROR(ParseUnsigned(tag, value, UINT64_MAX, &v));
  *out = ZigZagDecode(v);
  return Status::Ok();
}

Status ParseI32(uint64_t tag, std::string_view value, int32_t* out) {
  int64_t v = 0;
  GUARD_RETURN_IF_ERROR(ParseI64(tag, value, &v));
  if (v < INT32_MIN || v > INT32_MAX) return FieldError(tag, "value out of range for int32");
  *out = static_cast<int32_t>(v);
  return Status::Ok();
}

Status ParseKey(uint64_t tag, std::string_view value, BlobKey* out) {
  if (value.size() != kBlobKeyBytes) return FieldError(tag, "a blob key is 16 bytes");
  out->high = DecodeFixed64(value.data());
  out->low = DecodeFixed64(value.data() + 8);
  return Status::Ok();
}

// Splits the next field off the front of *in.
Status NextField(std::string_view* in, uint64_t* tag, std::string_view* value) {
  uint64_t length = 0;
  if (!GetVarint64(in, tag)) return Status::Corruption("truncated field tag");
  if (*tag == 0) return Status::Corruption("field tag 0");
  if (!GetVarint64(in, &length)) return FieldError(*tag, "truncated field length");
  if (length > in->size()) {
    return FieldError(*tag, "length " + std::to_string(length) + " past the end (" +
                                std::to_string(in->size()) + " bytes left)");
  }
  *value = in->substr(0, length);
  in->remove_prefix(length);
  return Status::Ok();
}

Status DecodeFileState(std::string_view in, FileState* s) {
  *s = FileState{};
  while (!in.empty()) {
    uint64_t tag = 0;
    std::string_view value;
    GUARD_RETURN_IF_ERROR(NextField(&in, &tag, &value));
    uint64_t v = 0;
    switch (tag) {
      case kTagType:
        GUARD_RETURN_IF_ERROR(ParseUnsigned(tag, value, static_cast<uint64_t>(FileType::kUnknown), &v));
        s->type = static_cast<FileType>(v);
        break;
      case kTagMode: GUARD_RETURN_IF_ERROR(ParseU32(tag, value, &s->mode)); break;
      case kTagSize: GUARD_RETURN_IF_ERROR(ParseU64(tag, value, &s->size)); break;
      case kTagMtimeNs: GUARD_RETURN_IF_ERROR(ParseI64(tag, value, &s->mtime_ns)); break;
      case kTagSymlinkTarget: s->symlink_target.assign(value); break;
      case kTagBlobKind:
        GUARD_RETURN_IF_ERROR(
            ParseUnsigned(tag, value, static_cast<uint64_t>(BlobRef::Kind::kPending), &v));
        s->blob.kind = static_cast<BlobRef::Kind>(v);
        break;
      case kTagBlobKey: GUARD_RETURN_IF_ERROR(ParseKey(tag, value, &s->blob.key)); break;
      case kTagBlobPending: s->blob.pending.assign(value); break;
      case kTagDev: GUARD_RETURN_IF_ERROR(ParseU64(tag, value, &s->dev)); break;
      case kTagIno: GUARD_RETURN_IF_ERROR(ParseU64(tag, value, &s->ino)); break;
      case kTagCtimeNs: GUARD_RETURN_IF_ERROR(ParseI64(tag, value, &s->ctime_ns)); break;
      default: break;  // a field from a newer minor version
    }
  }
  return Status::Ok();
}

Status ParseFileState(uint64_t tag, std::string_view value, FileState* out) {
  Status s = DecodeFileState(value, out);
  if (!s.ok()) return FieldError(tag, "file state: " + s.message());
  return Status::Ok();
}

bool IsKnownKind(uint8_t k) {
  return (k >= static_cast<uint8_t>(OpKind::kCreate) && k <= static_cast<uint8_t>(OpKind::kMknod)) ||
         (k >= static_cast<uint8_t>(OpKind::kOutcome) && k <= static_cast<uint8_t>(OpKind::kMark)) ||
         // 64-127 describe no change to a path (1.5: a kind of this range a
         // later version adds is read, and then ignored, without a report).
         (k >= static_cast<uint8_t>(OpKind::kIncomplete) && k <= 127);
}

}  // namespace

const char* FileTypeName(FileType t) {
  switch (t) {
    case FileType::kAbsent: return "absent";
    case FileType::kRegular: return "regular";
    case FileType::kDirectory: return "directory";
    case FileType::kSymlink: return "symlink";
    case FileType::kOther: return "other";
    case FileType::kUnknown: return "unknown";
  }
  return "invalid";
}

namespace {

// Each kind's two words, in one table: its name and the word a timeline
// says of an operation that ran (guard show: "created", "renamed"; a word
// that is not a verb, such as "mkdir", stays as it is).
struct OpKindWords {
  const char* name;
  const char* past;
};

OpKindWords WordsOf(OpKind k) {
  switch (k) {
    case OpKind::kCreate: return {"create", "created"};
    case OpKind::kModify: return {"modify", "modified"};
    case OpKind::kRename: return {"rename", "renamed"};
    case OpKind::kExchange: return {"exchange", "exchanged"};
    case OpKind::kDelete: return {"delete", "deleted"};
    case OpKind::kMkdir: return {"mkdir", "mkdir"};
    case OpKind::kRmdir: return {"rmdir", "rmdir"};
    case OpKind::kSymlink: return {"symlink", "symlink"};
    case OpKind::kLink: return {"link", "link"};
    case OpKind::kChmod: return {"chmod", "chmod"};
    case OpKind::kMknod: return {"mknod", "mknod"};
    case OpKind::kOutcome: return {"outcome", "outcome"};
    case OpKind::kFinal: return {"final", "final"};
    case OpKind::kBlobResolved: return {"blob-resolved", "blob-resolved"};
    case OpKind::kSessionEnd: return {"session-end", "session-end"};
    case OpKind::kMark: return {"mark", "mark"};
    case OpKind::kIncomplete: return {"incomplete", "incomplete"};
    case OpKind::kThinned: return {"thinned", "thinned"};
  }
  return {"invalid", "invalid"};
}

}  // namespace

const char* OpKindName(OpKind k) { return WordsOf(k).name; }

const char* OpKindPastTense(OpKind k) { return WordsOf(k).past; }

bool IsOperation(OpKind k) { return k >= OpKind::kCreate && k <= OpKind::kMknod; }

bool MovesDirectoryWithinRoot(const Record& r) {
  const bool inside = !(r.flags & kOutsideRoot);
  const bool inside2 = !r.path2.empty() && !(r.flags & kOutsideRoot2);
  return (r.kind == OpKind::kRename || r.kind == OpKind::kExchange) && inside && inside2 &&
         (r.before.type == FileType::kDirectory || r.before2.type == FileType::kDirectory);
}

void EncodeRecord(const Record& r, std::string* out) {
  out->push_back(static_cast<char>(r.kind));
  PutUnsigned(out, kTagSeq, r.seq);
  PutSigned(out, kTagWallNs, r.wall_ns);
  PutSigned(out, kTagMonoNs, r.mono_ns);
  PutSigned(out, kTagPid, r.pid);
  PutBytes(out, kTagComm, r.comm);
  PutBytes(out, kTagSyscall, r.syscall);
  PutUnsigned(out, kTagFlags, r.flags);
  PutBytes(out, kTagPath, r.path);
  PutBytes(out, kTagPath2, r.path2);
  PutBytes(out, kTagTarget, r.target);
  PutFileState(out, kTagBefore, r.before);
  PutFileState(out, kTagBefore2, r.before2);
  PutFileState(out, kTagAfter, r.after);
  PutUnsigned(out, kTagNewMode, r.new_mode);
  PutUnsigned(out, kTagRefSeq, r.ref_seq);
  PutSigned(out, kTagResultErrno, r.result_errno);
  PutBytes(out, kTagPending, r.pending);
  PutKey(out, kTagKey, r.key);
  PutBytes(out, kTagLabel, r.label);
}

Status DecodeRecord(std::string_view in, Record* r) {
  *r = Record{};
  if (in.empty()) return Status::Corruption("empty record");
  const uint8_t kind = static_cast<uint8_t>(in[0]);
  // An unknown kind is refused rather than skipped: a reader that cannot tell
  // what an operation did cannot undo it, so a new kind needs a new major
  // version (docs/format.md (Part I), "Versions").
  if (!IsKnownKind(kind)) return Status::Corruption("unknown record kind " + std::to_string(kind));
  r->kind = static_cast<OpKind>(kind);
  in.remove_prefix(1);

  // A repeated tag is not an error: the last occurrence wins.
  while (!in.empty()) {
    uint64_t tag = 0;
    std::string_view value;
    GUARD_RETURN_IF_ERROR(NextField(&in, &tag, &value));
    switch (tag) {
      case kTagSeq: GUARD_RETURN_IF_ERROR(ParseU64(tag, value, &r->seq)); break;
      case kTagWallNs: GUARD_RETURN_IF_ERROR(ParseI64(tag, value, &r->wall_ns)); break;
      case kTagMonoNs: GUARD_RETURN_IF_ERROR(ParseI64(tag, value, &r->mono_ns)); break;
      case kTagPid: GUARD_RETURN_IF_ERROR(ParseI32(tag, value, &r->pid)); break;
      case kTagComm: r->comm.assign(value); break;
      case kTagSyscall: r->syscall.assign(value); break;
      case kTagFlags: GUARD_RETURN_IF_ERROR(ParseU32(tag, value, &r->flags)); break;
      case kTagPath: r->path.assign(value); break;
      case kTagPath2: r->path2.assign(value); break;
      case kTagTarget: r->target.assign(value); break;
      case kTagBefore: GUARD_RETURN_IF_ERROR(ParseFileState(tag, value, &r->before)); break;
      case kTagBefore2: GUARD_RETURN_IF_ERROR(ParseFileState(tag, value, &r->before2)); break;
      case kTagAfter: GUARD_RETURN_IF_ERROR(ParseFileState(tag, value, &r->after)); break;
      case kTagNewMode: GUARD_RETURN_IF_ERROR(ParseU32(tag, value, &r->new_mode)); break;
      case kTagRefSeq: GUARD_RETURN_IF_ERROR(ParseU64(tag, value, &r->ref_seq)); break;
      case kTagResultErrno: GUARD_RETURN_IF_ERROR(ParseI32(tag, value, &r->result_errno)); break;
      case kTagPending: r->pending.assign(value); break;
      case kTagKey: GUARD_RETURN_IF_ERROR(ParseKey(tag, value, &r->key)); break;
      case kTagLabel: r->label.assign(value); break;
      default: break;  // a field from a newer minor version
    }
  }
  return Status::Ok();
}

}  // namespace guard
