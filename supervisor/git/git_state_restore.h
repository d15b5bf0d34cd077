// GitStateRestore: the refs and index entries of a restore plan
// (restore/git_state_plan.h), put back through libgit2 as git would.
//
//  - A ref goes back (or away) only while it holds what the session left
//    it with (for an undo; what the session found, for a replay): the
//    move is a compare-and-swap on the ref, with a reflog message.
//  - The index: only the entries of the paths whose entries the session
//    changed are set, each while it still holds what the session left;
//    the user's staging of every other path is kept.
//  - Anything that moved since is a conflict for that ref or entry alone,
//    named with the git command that would finish it; it never stops the
//    rest of the restore.
// Objects are not its business: the plan never removes them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/blob_store.h"
#include "common/status.h"
#include "supervisor/capture/mutation.h"
#include "supervisor/restore/git_state_plan.h"

namespace guard {

class GitStateRestore {
 public:
  // One line of the plan: "move ref", "refs/heads/main", "1a2b3c4 -> 5d6e7f8".
  struct Change {
    std::string action;
    std::string what;  // root-relative: ".git/refs/heads/main", ".git/index"
    std::string detail;
  };

  // Reads the repositories under `root` as they are now and decides, for
  // each goal of `plan`, what to change and what is a conflict.
  static Status Prepare(const std::string& root, const GitStatePlan& plan, const BlobStore& store,
                        GitStateRestore* out);

  const std::vector<Change>& changes() const { return changes_; }
  // "what: why; `git ...` finishes it", one per ref or index entry left as it is.
  const std::vector<std::string>& conflicts() const { return conflicts_; }

  // Makes the changes, each against the state Prepare saw: a ref or entry
  // that moved in between becomes a conflict (added to conflicts()). Each
  // file libgit2 writes is told to `sink` (null: none) first, so that the
  // restore's own session records it. `message`: the reflog message.
  // Returns how many refs and index files changed; failures in *failed.
  size_t Apply(MutationSink* sink, const std::string& message, std::vector<std::string>* failed);

  // An index entry, as far as a restore compares them.
  struct Entry {
    int stage = 0;
    uint32_t mode = 0;
    std::string oid;  // hex
    bool operator==(const Entry&) const = default;
  };
  using Entries = std::vector<Entry>;  // by stage; empty: no entry

 private:
  struct RefStep {
    std::string git_dir, name, current, target;
    // The ref holds its target already, from packed-refs alone, where the
    // target is a loose ref: the file-level restore may take packed-refs
    // back to a state without it (a session that ran `git gc`, which packs
    // the refs), and Apply then writes the ref.
    bool packed_only = false;
  };
  struct IndexStep {
    std::string git_dir;
    std::map<std::string, Entries> current;  // the session's paths: what Prepare saw
    std::map<std::string, Entries> target;
  };
  std::string root_;
  std::vector<RefStep> refs_;
  std::vector<IndexStep> indexes_;
  std::vector<Change> changes_;
  std::vector<std::string> conflicts_;
};

}  // namespace guard
