#include "tests/e2e/support/journal_damage.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/journal_format.h"

namespace guard::e2e {
namespace {

uint64_t LittleEndian(const std::string& b, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<size_t>(i)]);
  return v;
}

[[noreturn]] void Bad(const std::string& why, uint64_t off) {
  throw std::runtime_error("not an intact journal at offset " + std::to_string(off) + ": " + why);
}

}  // namespace

std::vector<RecordSpan> JournalRecordSpans(const std::string& bytes) {
  using namespace guard::journal;
  if (bytes.size() < kFileHeaderSize || bytes.compare(0, 8, kMagic, 8) != 0) Bad("no header", 0);
  std::vector<RecordSpan> out;
  bool open = false;
  RecordSpan cur;
  uint64_t pos = kFileHeaderSize;
  while (pos < bytes.size()) {
    uint64_t in_block = (pos - kFileHeaderSize) % kBlockSize;
    uint64_t block_left = kBlockSize - in_block;
    if (block_left < kFragmentHeaderSize) {  // the trailer
      pos += block_left;
      continue;
    }
    if (bytes.size() - pos < kFragmentHeaderSize) Bad("a cut-off fragment header", pos);
    uint64_t length = LittleEndian(bytes, pos + 8, 2);
    uint8_t type = static_cast<uint8_t>(bytes[pos + 10]);
    uint64_t end = pos + kFragmentHeaderSize + length;
    if (end > bytes.size() || length + kFragmentHeaderSize > block_left) Bad("a fragment past its block", pos);
    switch (type) {
      case kFullType:
        if (open) Bad("FULL inside a record", pos);
        out.push_back({pos, end, 1});
        break;
      case kFirstType:
        if (open) Bad("FIRST inside a record", pos);
        open = true;
        cur = {pos, end, 1};
        break;
      case kMiddleType:
      case kLastType:
        if (!open) Bad("MIDDLE or LAST outside a record", pos);
        cur.end = end;
        ++cur.fragments;
        if (type == kLastType) {
          out.push_back(cur);
          open = false;
        }
        break;
      default:
        Bad("fragment type " + std::to_string(type), pos);
    }
    pos = end;
  }
  if (open) Bad("a record left open at the end", pos);
  return out;
}

std::pair<uint64_t, uint64_t> BlockAround(uint64_t off) {
  using namespace guard::journal;
  uint64_t k = off < kFileHeaderSize ? 0 : (off - kFileHeaderSize) / kBlockSize;
  uint64_t begin = kFileHeaderSize + k * kBlockSize;
  return {begin, begin + kBlockSize};
}

void TruncateFileTo(const std::string& path, uint64_t size) {
  if (truncate(path.c_str(), static_cast<off_t>(size)) != 0) {
    throw std::runtime_error("truncate " + path + ": " + std::strerror(errno));
  }
}

void FlipBit(const std::string& path, uint64_t offset, int bit) {
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("open " + path + ": " + std::strerror(errno));
  unsigned char c = 0;
  bool ok = pread(fd, &c, 1, static_cast<off_t>(offset)) == 1;
  c ^= static_cast<unsigned char>(1u << bit);
  ok = ok && pwrite(fd, &c, 1, static_cast<off_t>(offset)) == 1;
  int err = errno;
  close(fd);
  if (!ok) throw std::runtime_error("flipping a bit of " + path + ": " + std::strerror(err));
}

std::vector<std::string> StoreObjects(const std::string& guard_home) {
  std::string objects = guard_home + "/store/objects";
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(objects)) {
    if (e.is_regular_file()) out.push_back(std::filesystem::relative(e.path(), objects).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace guard::e2e
