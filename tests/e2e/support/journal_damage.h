// Damaging a session's journal and blob store on purpose, the way a bad
// disk, a stray truncate or a cleaning script would, for the tests that
// check every command survives it. The damage is placed by the byte layout
// of common/journal_format.h (docs/format.md, Part I), read here
// independently of guard's own reader.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace guard::e2e {

// Where one logical record lies in an intact journal: from the start of its
// first fragment's header to the end of its last fragment's payload.
struct RecordSpan {
  uint64_t begin = 0;
  uint64_t end = 0;
  int fragments = 0;
};

// The records of the journal held in `bytes`, in order. Throws
// std::runtime_error if the bytes are not an intact version-1 journal.
std::vector<RecordSpan> JournalRecordSpans(const std::string& bytes);

// The block (of kBlockSize bytes after the header) holding file offset `off`:
// [first byte, one past the last) of that block.
std::pair<uint64_t, uint64_t> BlockAround(uint64_t off);

// Cuts `path` to `size` bytes.
void TruncateFileTo(const std::string& path, uint64_t size);
// Inverts bit `bit` (0-7) of the byte at `offset` of `path`.
void FlipBit(const std::string& path, uint64_t offset, int bit);

// Object files of the store under `guard_home` (store/objects/XX/...),
// sorted, as paths relative to store/objects.
std::vector<std::string> StoreObjects(const std::string& guard_home);

}  // namespace guard::e2e
