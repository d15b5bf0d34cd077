// libFuzzer target for the journal reader and the record decoder.
//
// The first input byte picks how the rest is used:
//   bit 0 set: a valid file header is put in front (so the fuzzer spends its
//              time on blocks and fragments rather than on the magic);
//   bit 1 set: every fragment header that fits its block gets a correct
//              checksum, so mutations of lengths, types and fragment order
//              reach the reassembly logic instead of dying at the checksum.
// The rest is also decoded directly as one record payload, which is the only
// way a mutation of record bytes gets past the checksums.
//
// Checked: no crash, leak or hang (the sanitizers and libFuzzer), reports and
// offsets inside the image, and every decoded record surviving
// EncodeRecord/DecodeRecord unchanged.
#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "common/journal_format.h"
#include "common/journal_reader.h"
#include "common/journal_record.h"

namespace {

using guard::journal::kBlockSize;
using guard::journal::kFileHeaderSize;
using guard::journal::kFragmentHeaderSize;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_journal_reader: %s\n", what);
    std::abort();
  }
}

class BoundsReporter : public guard::JournalReader::Reporter {
 public:
  explicit BoundsReporter(uint64_t size) : size_(size) {}
  void Corruption(uint64_t offset, uint64_t bytes, const guard::Status& reason) override {
    Check(offset >= kFileHeaderSize && offset <= size_ && bytes <= size_ - offset,
          "report outside the image");
    Check(reason.IsCorruption(), "an in-memory image reported something other than corruption");
  }

 private:
  uint64_t size_;
};

void CheckRoundTrip(const guard::Record& r) {
  std::string enc;
  guard::EncodeRecord(r, &enc);
  guard::Record again;
  Check(guard::DecodeRecord(enc, &again).ok(), "re-encoded record does not decode");
  Check(again == r, "record changed in an encode/decode round trip");
  std::string enc2;
  guard::EncodeRecord(again, &enc2);
  Check(enc2 == enc, "encoding is not deterministic");
}

// Writes correct checksums into every fragment header whose payload fits its
// block, walking the image the way a reader does.
void FixChecksums(std::string* image) {
  for (size_t block = kFileHeaderSize; block < image->size(); block += kBlockSize) {
    const size_t block_end = std::min(image->size(), block + kBlockSize);
    size_t pos = block;
    while (block_end - pos >= kFragmentHeaderSize) {
      char* h = image->data() + pos;
      const size_t length = static_cast<uint8_t>(h[8]) | (static_cast<size_t>(static_cast<uint8_t>(h[9])) << 8);
      if (length > block_end - pos - kFragmentHeaderSize) break;
      std::string checked(1, h[10]);
      checked.append(h + 8, 2);
      checked.append(h + kFragmentHeaderSize, length);
      const uint64_t sum = XXH3_64bits(checked.data(), checked.size());
      for (int i = 0; i < 8; ++i) h[i] = static_cast<char>(sum >> (8 * i));
      pos += kFragmentHeaderSize + length;
    }
  }
}

std::string ValidHeader() {
  std::string h(guard::journal::kMagic, sizeof guard::journal::kMagic);
  h += std::string("\x01\x00\x00\x00", 4);
  for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>(kBlockSize >> (8 * i)));
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);

  guard::Record direct;
  if (guard::DecodeRecord(body, &direct).ok()) CheckRoundTrip(direct);

  std::string image = (mode & 1) ? ValidHeader() + body : body;
  if (mode & 2) FixChecksums(&image);
  const uint64_t image_size = image.size();
  BoundsReporter reporter(image_size);
  std::unique_ptr<guard::JournalReader> reader;
  if (!guard::JournalReader::OpenBuffer(std::move(image), &reporter, &reader).ok()) return 0;
  guard::Record r;
  uint64_t last_end = kFileHeaderSize;
  while (reader->ReadRecord(&r)) {
    CheckRoundTrip(r);
    Check(reader->end_of_last_record() > last_end, "end_of_last_record did not advance");
    last_end = reader->end_of_last_record();
  }
  Check(reader->end_of_last_record() <= image_size, "end_of_last_record past the image");
  Check(reader->end_of_last_record() + reader->tail_bytes() == image_size,
        "the tail does not reach the end of the image");
  return 0;
}
