// Carried entries: what a directory rename carries across the root boundary,
// described as operation records of their own.
//
// A rename names one directory, and everything below it moves along. When
// the directory leaves the root (`mv d /elsewhere`), its entries leave the
// tree: each is recorded as the removal it amounts to, deepest first, before
// the rename record: kDelete with the file's content (or the symlink's
// target) for a non-directory, kRmdir with the mode for a directory. When a
// directory enters the root from outside (`mv /elsewhere/d d`), its entries
// appear in the tree: each is recorded as the creation it amounts to
// (kMkdir, kCreate, kSymlink, kMknod, `before` absent), parents first, after
// the rename record. Read in journal order, the records say what happened
// to every path, so the history and restore need no rule of their own for
// them. Every such record carries the flag kCarried (docs/format.md, Part
// IV), and the syscall, pid and program of the rename.
//
// Neither walk follows a symlink (WalkTree, supervisor/base/tree_walk.h):
// every directory is opened relative to its parent with O_NOFOLLOW, every
// entry examined with fstatat (AT_SYMLINK_NOFOLLOW). A directory leaving the
// root is opened from the root one component at a time, never through a
// symlink (OpenDirBeneath), so the walk reads nothing outside the root.
#pragma once

#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/journal_record.h"
#include "common/status.h"

namespace guard {

// Records the removal of everything below directory `rel_dir` (root-relative,
// not "."), deepest first; regular files have their content copied into
// `store` (copied, not adopted by hard link: the files live on outside the
// root, and a later write there must not change their pre-image). Returns
// the first failure to save a pre-image or to list a directory; the records
// concerned carry kNotCaptured, and the caller applies the capture failure
// policy. Only `kind`, `path`, `flags`, `before` and `target` are filled in.
Status DescribeLeavingEntries(const std::string& root, const std::string& rel_dir, BlobStore* store,
                              std::vector<Record>* out);

// Records the creation, below `rel_dest` (root-relative), of everything
// below directory `abs_src` (outside the root), parents first. Only names,
// types, modes and symlink targets are read: the content is recorded in the
// final states when the session is sealed. An entry that cannot be read is
// left out, and the first failure to open or list a directory is returned,
// as DescribeLeavingEntries returns its walk's; nothing is stored.
Status DescribeArrivingEntries(const std::string& abs_src, const std::string& rel_dest,
                               std::vector<Record>* out);

}  // namespace guard
