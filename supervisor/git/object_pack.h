// ObjectPack: the objects of one commit guard writes, kept in memory while
// it is built (trees, the commit, symlinks; a file's blob stays in guard's
// store and is streamed from there: stored_blob.h) and then written to the
// repository as one pack file of their own (.git/objects/pack/pack-*.pack),
// never as loose objects.
//
// Why a pack of its own: git (and libgit2) write an object only if no copy
// exists yet. A session that ran `git add` or `git commit` may have created
// the very blob or tree a checkpoint needs as a loose object; `guard undo`
// of that session removes the files the session created, and would take
// the checkpoint's objects with it. Every object a checkpoint introduces
// (relative to its parent's tree) is therefore in its own pack, which no
// session created and no undo removes. It also keeps the repository tidy: a
// failed checkpoint leaves nothing behind, and 100 checkpoints are 100
// compressed packs that `git gc` folds into one, with deltas.
//
// The pack holds every object whole (PackWriter): its cost follows the
// size of the change, with no delta search (docs/measurements.md §5).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "supervisor/git/git_handles.h"
#include "supervisor/git/stored_blob.h"

namespace guard {

class ObjectPack {
 public:
  ObjectPack() = default;
  ~ObjectPack();
  ObjectPack(const ObjectPack&) = delete;
  ObjectPack& operator=(const ObjectPack&) = delete;

  // From now on, objects written to `repo` go to memory.
  Status Attach(git_repository* repo);
  // Writes `objects` (found in memory or already in the repository; an id
  // given twice is written once) as one pack, durable before this returns,
  // then lets the repository see it. The pack stays kept from `git gc`
  // (pack_writer.h) until this ObjectPack goes: the caller writes the ref
  // that names the objects first. Nothing is written for none. An
  // object among `stored` (blobs SessionTree never put in memory) is
  // streamed from `store` instead.
  Status Write(const std::vector<git_oid>& objects, const std::vector<StoredBlob>& stored = {},
               const BlobStore* store = nullptr);

 private:
  git_repository* repo_ = nullptr;
  GitOdb odb_;
  git_odb_backend* mempack_ = nullptr;  // owned by odb_ once added
  std::string keep_;                    // the written pack's .keep, removed by the destructor
};

}  // namespace guard
