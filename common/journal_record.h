// The logical records of a session's journal: what happened to which path,
// when, by whom, and what the path held before. Encoded as tagged fields so
// that a newer writer can add fields an older reader skips. The encoding is
// specified in docs/format.md ("Records").
//
// Invariant kept by the supervisor: an operation record (kCreate..kMknod) is
// appended before the mutation it describes is allowed to happen; its
// kOutcome record is appended once the syscall has returned.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/blob_key.h"
#include "common/status.h"

namespace guard {

enum class FileType : uint8_t {
  kAbsent = 0,  // nothing at the path
  kRegular = 1,
  kDirectory = 2,
  kSymlink = 3,
  kOther = 4,    // fifo, socket, device node
  kUnknown = 5,  // could not be examined (outside the root, or lstat failed)
};
const char* FileTypeName(FileType t);

// Where a regular file's content lives in the blob store.
struct BlobRef {
  enum class Kind : uint8_t { kNone = 0, kKey = 1, kPending = 2 };
  Kind kind = Kind::kNone;
  BlobKey key;          // kKey
  std::string pending;  // kPending: name under store/pending/, resolved by a kBlobResolved record
  bool operator==(const BlobRef&) const = default;
};

// The state of one path at one moment.
struct FileState {
  FileType type = FileType::kAbsent;
  uint32_t mode = 0;       // st_mode & 07777
  uint64_t size = 0;       // st_size
  int64_t mtime_ns = 0;    // st_mtim, nanoseconds since the epoch
  std::string symlink_target;  // kSymlink
  BlobRef blob;            // kRegular, when the content was captured
  // The stat signature the state was read with (post-images and final
  // states only, else 0): with st_mtim, st_size and st_mode it tells, by
  // one lstat, whether the path still holds this state (format 1.1).
  uint64_t dev = 0;        // st_dev
  uint64_t ino = 0;        // st_ino
  int64_t ctime_ns = 0;    // st_ctim, nanoseconds since the epoch
  bool operator==(const FileState&) const = default;
};

enum class OpKind : uint8_t {
  // Operations: each describes one mutating syscall, recorded before it runs.
  kCreate = 1,    // a regular file created at `path` (open O_CREAT, creat, mknod of a file)
  kModify = 2,    // `path`'s content may change (open for write, O_TRUNC, truncate): before = pre-image
  kRename = 3,    // `path` renamed to `path2`; before2 = what path2 held (replaced if not absent)
  kExchange = 4,  // RENAME_EXCHANGE of `path` and `path2`
  kDelete = 5,    // non-directory `path` unlinked; before holds its content
  kMkdir = 6,     // directory created at `path`
  kRmdir = 7,     // directory `path` removed; before holds its mode
  kSymlink = 8,   // symlink created at `path` pointing to `target`
  kLink = 9,      // hard link `path2` made to existing `path`
  kChmod = 10,    // `path`'s mode set to `new_mode`
  kMknod = 11,    // fifo, socket or device node created at `path`

  // Bookkeeping.
  kOutcome = 32,       // op `ref_seq` returned `result_errno` (0 = success); `after` = state then of
                       // path2 for kRename, kExchange and kLink, else of path (kUnknown outside the root)
  kFinal = 33,         // `path`'s state when the session ended (written when sealing), or,
                       // flagged kPostImage, while it ran (supervisor/session/work_saver.h)
  kBlobResolved = 34,  // pending blob `pending` has content key `key`
  kSessionEnd = 35,    // sealing done; `result_errno` unused, `comm` holds how it ended
  kMark = 36,          // (1.2) a labelled point in the session's timeline (`guard mark`): `label`;
                       // changes no path. `pid`, `comm`: the process that asked for it
  kIncomplete = 64,    // (1.4) guard saw what no honest producer makes (forged ring framing, a claim
                       // owned by no process of the session, a forged shim record): from `wall_ns`
                       // on the log may lack changes. `label`: what was seen, in plain words.
                       // Changes no path
  kThinned = 65,       // (1.5) the store's cap bound while the session ran: the object of `key`, an
                       // intermediate version of `path`, may be gone (docs/gc.md). Changes no path
};
// The kind's name ("create", "blob-resolved"): what dumps and JSON say.
const char* OpKindName(OpKind k);
// What a timeline says of an operation that ran ("created", "renamed"; "mkdir"
// and the like stay as they are; a bookkeeping kind is its name).
const char* OpKindPastTense(OpKind k);
bool IsOperation(OpKind k);

// Bits of Record::flags.
enum RecordFlags : uint32_t {
  kOutsideRoot = 1u << 0,  // path is absolute and outside the root: recorded by name only
  kNotCaptured = 1u << 1,  // the store failed and policy was `allow`: no pre-image
  kDenied = 1u << 2,       // guard refused the call (it targeted guard's own state)
  kNoFollow = 1u << 3,     // the syscall acted on a symlink itself
  kOutsideRoot2 = 1u << 4, // path2 is absolute and outside the root
  kCarried = 1u << 5,      // a path below a directory that the rename (or exchange) next to this
                           // record carries across the root boundary (supervisor/carried_entries.h)
  kSameInode = 1u << 6,    // another name, inside the root, of the inode that the write or chmod
                           // just before this record changes (supervisor/link_index.h)
  // kFinal records (format 1.1, docs/format.md Part IV "The session's work"):
  kPostImage = 1u << 7,    // written while the session ran: `after` is what `path` held then; a
                           // later operation naming it (or moving a directory above it) supersedes it
  kNoWriter = 1u << 8,     // post-image: no process had the file open for writing when it was saved
  kChangedAfterEnd = 1u << 9,  // final written by recovery: the tree held something else then,
                               // changed after the session ended; this is the session's saved state
  kEndNotSaved = 1u << 10,     // final written by recovery: the tree was changed after the session
                               // ended, before the session's last work on the path was saved: this
                               // state is the tree's
  // kMark records (format 1.2):
  kStepMark = 1u << 11,    // a step inside a turn (after a tool call), not the start of a turn:
                           // `guard undo --turns` does not count it
  // Operations (format 1.3):
  kAfterItRan = 1u << 12,  // recorded once its call had run (it was expected to fail: capture_late.cc),
                           // at any moment since guard looked at its paths: records before it may
                           // describe calls that ran after it
  // kBlobResolved records (format 1.4):
  kUnnamedPreImage = 1u << 13,  // no record names the pending blob (a pre-image whose CALL never
                                // reached the journal): kept by itself; `after` is the file as it
                                // lay in the pending area (size, mtime, ctime: when it was put there)
  // Operations, their outcomes and post-images (format 1.5):
  kObserved = 1u << 14,  // seen after it happened (watch mode: supervisor/watch/): no call was
                         // stopped; `before` is the state saved at the last look, `after` the one
                         // now, and several writes between two looks are one record
};


struct Record {
  OpKind kind = OpKind::kOutcome;
  uint64_t seq = 0;         // unique, increasing within a session
  int64_t wall_ns = 0;      // CLOCK_REALTIME
  int64_t mono_ns = 0;      // CLOCK_MONOTONIC
  int32_t pid = 0;          // thread id that made the call
  std::string comm;         // program name (/proc/PID/comm)
  std::string syscall;      // "openat", "renameat2", ... (empty for bookkeeping)
  uint32_t flags = 0;       // RecordFlags
  std::string path;         // relative to the root ("a/b"), or absolute if kOutsideRoot
  std::string path2;        // rename/exchange destination, link name
  std::string target;       // symlink text for kSymlink
  FileState before;         // path's state before the op
  FileState before2;        // path2's state before the op
  FileState after;          // kOutcome, kFinal: path's state afterwards
  uint32_t new_mode = 0;    // kChmod, kMkdir, kCreate: mode asked for
  uint64_t ref_seq = 0;     // kOutcome: the op it completes
  int32_t result_errno = 0; // kOutcome: 0 on success, else the errno
  std::string pending;      // kBlobResolved
  BlobKey key;              // kBlobResolved
  std::string label;        // kMark (format 1.2); kIncomplete: what was seen (1.4)

  bool operator==(const Record&) const = default;
};

// Whether `r` is a post-image (a kFinal written while the session ran).
inline bool IsPostImage(const Record& r) { return r.kind == OpKind::kFinal && (r.flags & kPostImage); }

// Whether operation `r` renames or exchanges a directory between two names
// inside the root (either name held a directory before the call): what was
// below one name is below the other afterwards, under no name an operation
// gave. The one definition for capture, recovery, the history and restore.
// A directory crossing the root boundary is not a move within it: its
// entries are recorded one by one (kCarried).
bool MovesDirectoryWithinRoot(const Record& r);

// Appends the encoding of `r` to `*out`.
void EncodeRecord(const Record& r, std::string* out);
// Decodes one logical record. Unknown tags are skipped; a malformed encoding
// is kCorruption and leaves *r unspecified.
Status DecodeRecord(std::string_view in, Record* r);

}  // namespace guard
