// JournalReader: reassembles records from checksummed fragments, as LevelDB's
// db/log_reader.cc does (format: journal_format.h, docs/format.md (Part I)).
//
// How damage is told apart from a torn tail. Every byte after the file header
// is part of a record that is returned, part of a block trailer, or *damaged*:
// a fragment with a bad checksum, an impossible length or an unknown type,
// zero-filled space, or the fragments of a record whose other fragments are
// missing. Damaged bytes open a span that lasts until the next physically
// valid record (one whose fragments all verify) begins:
//  - a span followed by such a record is corruption: one Reporter call, from
//    the span's first byte to the start of that record;
//  - a span that runs to the end of the file is the torn tail: the end of an
//    append cut short by a crash, or space the filesystem left zero-filled,
//    look exactly like this. It is not reported; tail_bytes() counts it and
//    JournalWriter::OpenForAppend cuts it off.
// So a journal that was only ever cut short reads back with no report at
// all, whatever the cut point, and damage anywhere before a good record is
// always reported. After a damaged fragment the rest of its block is skipped
// (its length cannot be trusted) and reading resumes at the next block, where
// the writer always starts a fragment.
//
// A physically valid record whose payload DecodeRecord refuses is reported on
// its own and skipped, but it still counts as the last record for
// end_of_last_record(): its bytes are intact, and an appender must not cut
// intact data that a fixed reader could decode.
#include "common/journal_reader.h"

#include <fcntl.h>

#include <string_view>

#include "common/coding.h"
#include "common/file_io.h"
#include "common/journal_format.h"

namespace guard {
namespace {

using journal::kBlockSize;
using journal::kFileHeaderSize;
using journal::kFragmentHeaderSize;

Status CheckHeader(std::string_view header, const std::string& name, uint16_t* minor) {
  if (header.empty()) {
    return Status::Corruption(name + ": empty file, not a journal (its creation was cut short?)");
  }
  if (header.size() < kFileHeaderSize) {
    return Status::Corruption(name + ": journal header truncated (" + std::to_string(header.size()) +
                              " of " + std::to_string(kFileHeaderSize) + " bytes)");
  }
  if (header.substr(0, sizeof journal::kMagic) != std::string_view(journal::kMagic, sizeof journal::kMagic)) {
    return Status::Corruption(name + ": bad magic, not a guard journal");
  }
  const uint64_t major = DecodeFixed16(header.data() + 8);
  const uint64_t block_size = DecodeFixed32(header.data() + 12);
  if (major > journal::kMajorVersion) {
    return Status::Unsupported("journal format version " + std::to_string(major) +
                               " is newer than this guard understands (" +
                               std::to_string(journal::kMajorVersion) + ")");
  }
  if (major == 0) return Status::Corruption(name + ": journal format version 0 does not exist");
  // Version 1 fixes the block size; the field exists so a later version can vary it.
  if (block_size != kBlockSize) {
    return Status::Corruption(name + ": journal block size " + std::to_string(block_size) +
                              ", version 1 requires " + std::to_string(kBlockSize));
  }
  *minor = DecodeFixed16(header.data() + 10);
  return Status::Ok();
}

struct Fragment {
  uint8_t type;
  std::string_view payload;
  uint64_t offset;  // of the fragment header in the file
};

}  // namespace

struct JournalReader::Impl {
  Reporter* reporter = nullptr;
  std::string name;  // path or "journal image", for messages

  // Source: a file read one block at a time, or a whole image in memory.
  UniqueFd fd;
  std::string image;
  bool from_image = false;
  std::string block_buf;  // file: the current block

  std::string_view block;   // the current block; shorter than kBlockSize only at the end
  uint64_t block_start = 0; // file offset of block[0]
  size_t pos = 0;           // next unread byte of block
  uint64_t next_block_start = kFileHeaderSize;
  bool last_block = false;  // block is the file's last (it is short)
  uint64_t eof_offset = 0;  // the file's length, once the end was reached
  bool done = false;

  // The record being assembled from FIRST and MIDDLE fragments.
  bool in_record = false;
  uint64_t record_start = 0;
  std::string record;

  // The open damaged span, if any (see the top of the file).
  bool damaged = false;
  uint64_t damage_start = 0;
  std::string damage_reason;

  void Report(uint64_t offset, uint64_t bytes, const Status& why) {
    if (reporter != nullptr) reporter->Corruption(offset, bytes, why);
  }

  // Marks the bytes from `offset` on as damaged. A record in progress cannot
  // be completed any more: the span then starts where it started.
  void Damage(uint64_t offset, std::string_view reason) {
    if (in_record) {
      offset = record_start;
      in_record = false;
    }
    if (!damaged) {
      damaged = true;
      damage_start = offset;
      damage_reason.assign(reason);
    }
  }

  // Loads the block at next_block_start. False at the end of the file.
  bool LoadNextBlock() {
    block_start = next_block_start;
    next_block_start += kBlockSize;
    pos = 0;
    if (from_image) {
      block = block_start < image.size() ? std::string_view(image).substr(block_start, kBlockSize)
                                         : std::string_view();
    } else {
      size_t got = 0;
      Status s = PreadFull(fd.get(), block_buf.data(), kBlockSize, static_cast<off_t>(block_start),
                           &got, name);
      if (!s.ok()) {
        // Not corruption: the bytes may be fine. Stop here; the code tells
        // callers (ReadAllRecords, OpenForAppend) that the read was incomplete.
        Report(block_start, 0, s);
        got = 0;
      }
      block = std::string_view(block_buf.data(), got);
    }
    last_block = block.size() < kBlockSize;
    if (last_block) eof_offset = block_start + block.size();
    return !block.empty();
  }

  // The next checksum-valid fragment of a known type. Bad fragments are
  // marked as damage on the way. False at the end of the file.
  bool NextFragment(Fragment* f) {
    for (;;) {
      const size_t avail = block.size() - pos;
      if (avail < kFragmentHeaderSize) {
        // A full block ends in a trailer (< kFragmentHeaderSize bytes, never
        // checked, as in LevelDB); a short one is the end of the file, and a
        // partial header there is part of the tail.
        if (last_block || !LoadNextBlock()) return false;
        continue;
      }
      const char* h = block.data() + pos;
      const uint64_t offset = block_start + pos;
      const uint64_t checksum = DecodeFixed64(h);
      const size_t length = DecodeFixed16(h + 8);
      const uint8_t type = static_cast<uint8_t>(h[10]);
      if (type == journal::kZeroType && length == 0 && checksum == 0) {
        Damage(offset, "zero-filled space");
        pos = block.size();
        continue;
      }
      if (length > avail - kFragmentHeaderSize) {
        Damage(offset, "fragment length " + std::to_string(length) + " past the end of its block");
        pos = block.size();
        continue;
      }
      const std::string_view payload = block.substr(pos + kFragmentHeaderSize, length);
      if (journal::FragmentChecksum(type, payload) != checksum) {
        Damage(offset, "fragment checksum mismatch");
        pos = block.size();
        continue;
      }
      // The checksum vouches for the length, so reading can go on right after.
      pos += kFragmentHeaderSize + length;
      if (type == journal::kZeroType || type > journal::kMaxFragmentType) {
        Damage(offset, "unknown fragment type " + std::to_string(type));
        continue;
      }
      *f = Fragment{type, payload, offset};
      return true;
    }
  }
};

JournalReader::JournalReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JournalReader::~JournalReader() = default;

Status JournalReader::Open(const std::string& path, Reporter* reporter,
                           std::unique_ptr<JournalReader>* out) {
  auto impl = std::make_unique<Impl>();
  GUARD_RETURN_IF_ERROR(OpenFile(path, O_RDONLY, 0, &impl->fd));
  char header[kFileHeaderSize];
  size_t got = 0;
  GUARD_RETURN_IF_ERROR(PreadFull(impl->fd.get(), header, sizeof header, 0, &got, path));
  uint16_t minor = 0;
  GUARD_RETURN_IF_ERROR(CheckHeader(std::string_view(header, got), path, &minor));
  impl->reporter = reporter;
  impl->name = path;
  impl->block_buf.resize(kBlockSize);
  out->reset(new JournalReader(std::move(impl)));
  (*out)->minor_ = minor;
  (*out)->end_of_last_record_ = kFileHeaderSize;
  return Status::Ok();
}

Status JournalReader::OpenBuffer(std::string data, Reporter* reporter,
                                 std::unique_ptr<JournalReader>* out) {
  auto impl = std::make_unique<Impl>();
  impl->name = "journal image";
  uint16_t minor = 0;
  GUARD_RETURN_IF_ERROR(CheckHeader(std::string_view(data).substr(0, kFileHeaderSize), impl->name, &minor));
  impl->reporter = reporter;
  impl->image = std::move(data);
  impl->from_image = true;
  out->reset(new JournalReader(std::move(impl)));
  (*out)->minor_ = minor;
  (*out)->end_of_last_record_ = kFileHeaderSize;
  return Status::Ok();
}

bool JournalReader::ReadRecord(Record* r) {
  Impl& m = *impl_;
  while (!m.done) {
    Fragment f;
    if (!m.NextFragment(&f)) {
      // Whatever follows the last valid record is the torn tail.
      m.done = true;
      m.in_record = false;
      m.damaged = false;
      m.record = std::string();
      tail_bytes_ = m.eof_offset - end_of_last_record_;
      return false;
    }
    std::string_view payload;
    uint64_t start = f.offset;
    switch (f.type) {
      case journal::kFullType:
        if (m.in_record) m.Damage(m.record_start, "record without its LAST fragment");
        payload = f.payload;
        break;
      case journal::kFirstType:
        if (m.in_record) m.Damage(m.record_start, "record without its LAST fragment");
        m.in_record = true;
        m.record_start = f.offset;
        m.record.assign(f.payload);
        continue;
      case journal::kMiddleType:
      case journal::kLastType:
        if (!m.in_record) {
          // The start of this record was lost (or skipped after damage).
          m.Damage(f.offset, "fragment of a record whose FIRST fragment is missing");
          continue;
        }
        m.record.append(f.payload);
        if (f.type == journal::kMiddleType) continue;
        payload = m.record;
        start = m.record_start;
        m.in_record = false;
        break;
    }

    // A physically valid record: any damage before it is corruption.
    const uint64_t end = f.offset + kFragmentHeaderSize + f.payload.size();
    if (m.damaged) {
      m.Report(m.damage_start, start - m.damage_start, Status::Corruption(m.damage_reason));
      m.damaged = false;
    }
    end_of_last_record_ = end;
    Status s = DecodeRecord(payload, r);
    if (s.ok()) return true;
    m.Report(start, end - start, Status::Corruption("undecodable record: " + s.message()));
  }
  return false;
}

namespace {

class ProblemCollector : public JournalReader::Reporter {
 public:
  explicit ProblemCollector(std::vector<std::string>* problems) : problems_(problems) {}
  void Corruption(uint64_t offset, uint64_t bytes, const Status& reason) override {
    if (!reason.IsCorruption() && error_.ok()) error_ = reason;
    if (problems_ != nullptr) {
      problems_->push_back("offset " + std::to_string(offset) + ": " + std::to_string(bytes) +
                           " bytes dropped: " + reason.ToString());
    }
  }
  const Status& error() const { return error_; }

 private:
  std::vector<std::string>* problems_;
  Status error_;  // the first failure that was not corruption (a read error)
};

}  // namespace

Status ReadAllRecords(const std::string& path, std::vector<Record>* out,
                      std::vector<std::string>* problems) {
  ProblemCollector collector(problems);
  std::unique_ptr<JournalReader> reader;
  GUARD_RETURN_IF_ERROR(JournalReader::Open(path, &collector, &reader));
  Record r;
  while (reader->ReadRecord(&r)) out->push_back(std::move(r));
  return collector.error();
}

}  // namespace guard
