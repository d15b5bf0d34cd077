// PackWriter: git objects written as one pack file with its index into a
// repository's objects/pack directory, as `git index-pack` leaves them, each
// object whole (no delta), deflated at zlib's fastest level.
//
// A blob is added whole (Add) or streamed (AddStream): a checkpoint's
// memory never holds a file's content whole.
//
// Why not libgit2's git_packbuilder: its write always runs a delta search (a
// window of 10 over every object; no setting of libgit2 1.5 turns it off),
// which took most of a large checkpoint's time (docs/measurements.md §5),
// and it builds the index with git_indexer, which inflates and hashes every
// object once more. guard already has every object's id (it created them)
// and their content in memory. Deltas are git gc's work: it finds them
// against the whole history, where a window over one checkpoint finds few.
//
// The formats are git's (gitformat-pack(5), version 2 of both):
//   .pack: "PACK", version, object count (32-bit big-endian); per object a
//     header (type in bits 4-6 of the first byte, the size in 4 + 7n bits,
//     low bits first, a byte's top bit saying another follows) and the zlib
//     stream of its content; then the SHA-1 of everything before it.
//   .idx: "\377tOc", version, a fan-out table (256 counts: objects whose id
//     starts with a byte <= i), the sorted ids, the CRC-32 of each object's
//     bytes in the pack, its offset (31 bits; with the top bit set, an index
//     into a table of 64-bit offsets that follows), the pack's SHA-1, and
//     the SHA-1 of the .idx before it.
// Both are written under temporary names (tmp_pack_*, tmp_idx_*, which git
// gc removes if guard dies), fsynced, made read-only and renamed, the .pack
// first: git and libgit2 use a pack only once its .idx exists, so no reader
// sees half of one, and a ref written after Finish names durable objects.
// Until that ref is written, no ref names the pack's objects: a `git gc
// --prune=now` between the two would drop them (repack -A -d leaves
// unreachable objects loose, prune removes them). So Finish first writes
// the pack's .keep (git's own guard for a pack a fetch or push has not
// named yet: repack leaves a kept pack alone), and the caller removes it
// once the ref names the objects (ObjectPack).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "supervisor/git/git2_api.h"
#include "supervisor/git/sha1.h"

namespace guard {

class PackWriter {
 public:
  PackWriter();
  ~PackWriter();  // removes the temporary file of a pack not finished
  PackWriter(const PackWriter&) = delete;
  PackWriter& operator=(const PackWriter&) = delete;

  // Starts a pack of exactly `count` objects in `pack_dir`.
  Status Begin(const std::string& pack_dir, uint32_t count);
  // Appends an object; `id` must be the git id of (type, data) and appear
  // only once in the pack.
  Status Add(const git_oid& id, git_object_t type, const void* data, size_t size);
  // The same for content of `size` bytes that `produce` hands to the sink
  // it is given, in pieces (a blob streamed from guard's store): memory
  // stays bounded whatever its size. Content of another size is an error.
  using Sink = std::function<Status(const char*, size_t)>;
  using Producer = std::function<Status(const Sink&)>;
  Status AddStream(const git_oid& id, git_object_t type, uint64_t size, const Producer& produce);
  // Writes the trailer and the index and puts both in place, kept (above).
  // *name is the pack's name without extension ("pack-<40 hex digits>");
  // *keep the .keep file to remove once a ref names the objects ("" when
  // a .keep of that pack was already there, another writer's).
  Status Finish(std::string* name, std::string* keep);

 private:
  struct Entry {
    git_oid id;
    uint32_t crc;
    uint64_t offset;
  };
  Status BeginObject(const git_oid& id, git_object_t type, uint64_t size);
  Status Feed(const void* data, size_t size, bool last);
  Status EndObject();
  Status Emit(const void* data, size_t size);  // to the pack, hashed
  Status Flush();

  std::string dir_;
  std::string tmp_pack_;  // "" once renamed or never created
  UniqueFd fd_;
  uint32_t count_ = 0;
  uint64_t offset_ = 0;
  std::string buffer_;
  std::vector<Entry> entries_;
  std::vector<unsigned char> zbuf_;
  std::unique_ptr<Sha1> sha1_;  // of the pack so far (sha1.h)
  z_stream zstream_{};
  bool zstream_ready_ = false;
  uLong crc_ = 0;             // of the object being added
  uint64_t object_size_ = 0;  // announced in its header
  uint64_t object_fed_ = 0;
};

}  // namespace guard
