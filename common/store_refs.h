// The blobs a session's journal names: what garbage collection must keep for
// a session it keeps (docs/format.md, Part II, "Garbage collection").
//
// Every FileState of every record counts, whatever the record's kind, so
// that a new kind carrying file states is covered without a change here;
// kBlobResolved records add the key a pending name resolved to.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/journal_record.h"
#include "common/status.h"

namespace guard {

struct SessionRefs {
  std::set<std::string> keys;     // content keys, 32 hex digits
  std::set<std::string> pending;  // names under store/pending/ (and store/resolved/)
};

// Adds what `r` names to *refs.
void AddRecordRefs(const Record& r, SessionRefs* refs);

// Reads every record of the journal at `path` into *refs. A missing journal
// names nothing (a session killed before it made one). Damage the reader
// had to skip is appended to *problems: records lost there may have named
// blobs, so a caller that deletes blobs must not trust *refs then.
Status ReadSessionRefs(const std::string& path, SessionRefs* refs, std::vector<std::string>* problems);

}  // namespace guard
