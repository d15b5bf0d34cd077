// The journal file: writer and reader together, and the reader against every
// kind of damage a crash or a disk can do.
#define BOOST_TEST_MODULE journal
#include <boost/test/unit_test.hpp>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/file_io.h"
#include "common/journal_format.h"
#include "common/journal_reader.h"
#include "common/journal_record.h"
#include "common/journal_writer.h"
#include "tests/unit/support/blocked_thread.h"
#include "tests/unit/support/temp_dir.h"

namespace guard {

// How failed checks print records and codes (found by argument lookup).
std::ostream& operator<<(std::ostream& os, const Record& r) {
  return os << OpKindName(r.kind) << " seq " << r.seq << " path of " << r.path.size() << " bytes";
}
std::ostream& operator<<(std::ostream& os, Status::Code c) { return os << "code " << static_cast<int>(c); }

namespace {

using journal::kBlockSize;
using journal::kFileHeaderSize;
using journal::kFragmentHeaderSize;

// ---- Fixtures and helpers ----

using testing::TempDir;

struct Report {
  uint64_t offset;
  uint64_t bytes;
  Status reason;
};

class CollectingReporter : public JournalReader::Reporter {
 public:
  void Corruption(uint64_t offset, uint64_t bytes, const Status& reason) override {
    reports.push_back({offset, bytes, reason});
  }
  std::vector<Report> reports;
};

// What a reader made of a journal.
struct ReadResult {
  Status open;
  std::vector<Record> records;
  std::vector<Report> reports;
  uint64_t end_of_last_record = 0;
  uint64_t tail_bytes = 0;
};

ReadResult Drain(Status open, JournalReader* reader, CollectingReporter* reporter) {
  ReadResult res;
  res.open = open;
  if (!open.ok()) return res;
  Record r;
  while (reader->ReadRecord(&r)) res.records.push_back(r);
  BOOST_TEST(!reader->ReadRecord(&r));  // the end stays the end
  res.reports = reporter->reports;
  res.end_of_last_record = reader->end_of_last_record();
  res.tail_bytes = reader->tail_bytes();
  return res;
}

ReadResult ReadImage(std::string image) {
  CollectingReporter reporter;
  std::unique_ptr<JournalReader> reader;
  Status s = JournalReader::OpenBuffer(std::move(image), &reporter, &reader);
  return Drain(s, reader.get(), &reporter);
}

ReadResult ReadFile(const std::string& path) {
  CollectingReporter reporter;
  std::unique_ptr<JournalReader> reader;
  Status s = JournalReader::Open(path, &reporter, &reader);
  return Drain(s, reader.get(), &reporter);
}

std::string Slurp(const std::string& path) {
  std::string data;
  BOOST_REQUIRE(ReadFileToString(path, &data).ok());
  return data;
}

void Spit(const std::string& path, std::string_view data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
  BOOST_REQUIRE(f.good());
}

// A record of kind `kind` whose path is `path_size` bytes of varied content.
Record MakeRecord(uint64_t seq, OpKind kind, size_t path_size) {
  Record r;
  r.kind = kind;
  r.seq = seq;
  r.wall_ns = 1700000000000000000 + static_cast<int64_t>(seq);
  r.mono_ns = static_cast<int64_t>(seq * 1000);
  r.pid = 4000 + static_cast<int32_t>(seq % 7);
  r.comm = "writer";
  r.syscall = IsOperation(kind) ? "openat" : "";
  r.path.resize(path_size);
  for (size_t i = 0; i < path_size; ++i) r.path[i] = static_cast<char>((seq * 131 + i * 7) & 0xff);
  if (kind == OpKind::kRename || kind == OpKind::kExchange || kind == OpKind::kLink) r.path2 = "dst\n" + r.path.substr(0, 3);
  if (kind == OpKind::kSymlink) r.target = std::string("\xff\0t", 3);
  r.before.type = FileType::kRegular;
  r.before.size = seq * 100;
  r.before.blob.kind = BlobRef::Kind::kKey;
  r.before.blob.key = BlobKey::OfBytes(r.path);
  if (kind == OpKind::kOutcome) {
    r.ref_seq = seq - 1;
    r.result_errno = seq % 3 == 0 ? 2 : 0;
    r.after.type = FileType::kDirectory;
  }
  if (kind == OpKind::kBlobResolved) {
    r.pending = "p" + std::to_string(seq);
    r.key = BlobKey{seq, ~seq};
  }
  return r;
}

const std::vector<OpKind> kAllKinds = {
    OpKind::kCreate, OpKind::kModify,  OpKind::kRename,  OpKind::kExchange,     OpKind::kDelete,
    OpKind::kMkdir,  OpKind::kRmdir,   OpKind::kSymlink, OpKind::kLink,         OpKind::kChmod,
    OpKind::kMknod,  OpKind::kOutcome, OpKind::kFinal,   OpKind::kBlobResolved, OpKind::kSessionEnd,
};

// Records of varied sizes: small ones, ones near a block, one over two blocks.
std::vector<Record> VariedRecords(size_t count, size_t big_every, size_t big_size) {
  std::vector<Record> out;
  for (size_t i = 0; i < count; ++i) {
    size_t size = (i * 37) % 300;
    if (big_every != 0 && i % big_every == big_every - 1) size = big_size + i;
    out.push_back(MakeRecord(i + 1, kAllKinds[i % kAllKinds.size()], size));
  }
  return out;
}

// A journal written by JournalWriter. ends[i] is the file offset just past record i.
struct Written {
  std::string path;
  std::vector<Record> records;
  std::vector<uint64_t> ends;
};

Written WriteJournal(const std::string& path, const std::vector<Record>& records) {
  Written w{path, records, {}};
  std::unique_ptr<JournalWriter> writer;
  Status s = JournalWriter::Create(path, &writer);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
  for (const Record& r : records) {
    BOOST_REQUIRE(writer->Append(r).ok());
    w.ends.push_back(writer->size());
  }
  BOOST_REQUIRE(writer->Sync().ok());
  return w;
}

// A second, independent framing of fragments, straight from the spec, for
// images the writer would never produce.
void AppendFragment(std::string* image, uint8_t type, std::string_view payload) {
  std::string checked(1, static_cast<char>(type));
  checked.push_back(static_cast<char>(payload.size() & 0xff));
  checked.push_back(static_cast<char>(payload.size() >> 8));
  checked.append(payload);
  const uint64_t sum = XXH3_64bits(checked.data(), checked.size());
  for (int i = 0; i < 8; ++i) image->push_back(static_cast<char>(sum >> (8 * i)));
  image->append(checked, 1, 2);  // length LE
  image->push_back(static_cast<char>(type));
  image->append(payload);
}

std::string Header(uint16_t major, uint16_t minor) {
  std::string h(journal::kMagic, sizeof journal::kMagic);
  h.push_back(static_cast<char>(major & 0xff));
  h.push_back(static_cast<char>(major >> 8));
  h.push_back(static_cast<char>(minor & 0xff));
  h.push_back(static_cast<char>(minor >> 8));
  for (int i = 0; i < 4; ++i) h.push_back(static_cast<char>(kBlockSize >> (8 * i)));
  return h;
}

std::string Encoded(const Record& r) {
  std::string s;
  EncodeRecord(r, &s);
  return s;
}

// Corruption helpers.
void FlipBit(std::string* image, size_t offset, int bit) { (*image)[offset] ^= static_cast<char>(1 << bit); }
void Overwrite(std::string* image, size_t offset, std::string_view bytes) {
  image->replace(offset, bytes.size(), bytes);
}

// Where the writer puts the first fragment of the record after one ending at
// `prev_end`: right there, or past the zero trailer of the block.
uint64_t FirstFragmentOffset(uint64_t prev_end) {
  const uint64_t left = kBlockSize - (prev_end - kFileHeaderSize) % kBlockSize;
  return left < kFragmentHeaderSize ? prev_end + left : prev_end;
}

// Checks that `got` is `want` with some records left out, in order and unchanged.
void CheckSubsequence(const std::vector<Record>& got, const std::vector<Record>& want) {
  size_t j = 0;
  for (const Record& r : got) {
    while (j < want.size() && !(want[j] == r)) ++j;
    BOOST_REQUIRE_MESSAGE(j < want.size(), "a record came back that was never written");
    ++j;
  }
}

// ---- Round trips and layout ----

BOOST_AUTO_TEST_CASE(RecordsRoundTripThroughFile) {
  TempDir dir;
  std::vector<Record> records;
  for (OpKind k : kAllKinds) records.push_back(MakeRecord(records.size() + 1, k, 20));
  records.push_back(MakeRecord(100, OpKind::kModify, 100 * 1024));  // FIRST, MIDDLE..., LAST
  records.push_back(MakeRecord(101, OpKind::kCreate, 0));
  records.push_back(MakeRecord(102, OpKind::kDelete, kBlockSize));
  Written w = WriteJournal(dir.File("j"), records);

  std::vector<Record> got;
  std::vector<std::string> problems;
  BOOST_TEST(ReadAllRecords(w.path, &got, &problems).ok());
  BOOST_TEST(problems.empty());
  BOOST_TEST(got.size() == records.size());
  BOOST_TEST((got == records));

  // The big record really was spread over blocks: each block starts with a
  // fragment, and some of those continue a record.
  const std::string image = Slurp(w.path);
  std::set<int> types_at_block_start;
  for (size_t b = kFileHeaderSize; b + kFragmentHeaderSize <= image.size(); b += kBlockSize) {
    types_at_block_start.insert(static_cast<uint8_t>(image[b + 10]));
  }
  BOOST_TEST(types_at_block_start.count(journal::kMiddleType) == 1u);
  BOOST_TEST(types_at_block_start.count(journal::kLastType) == 1u);

  ReadResult res = ReadFile(w.path);
  BOOST_TEST(res.tail_bytes == 0u);
  BOOST_TEST(res.end_of_last_record == image.size());
}

BOOST_AUTO_TEST_CASE(CreateWritesSpecifiedHeaderPrivatelyAndOnlyOnce) {
  TempDir dir;
  const std::string path = dir.File("j");
  std::unique_ptr<JournalWriter> writer;
  BOOST_REQUIRE(JournalWriter::Create(path, &writer).ok());
  BOOST_TEST(writer->size() == kFileHeaderSize);
  BOOST_TEST(!writer->dirty());
  BOOST_TEST((Slurp(path) == std::string("GUARDJNL\x01\x00\x05\x00\x00\x80\x00\x00", 16)));
  struct stat st;
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 07777) == 0600u);

  std::unique_ptr<JournalWriter> again;
  BOOST_TEST(!JournalWriter::Create(path, &again).ok());  // O_EXCL: never clobbers a journal
  BOOST_TEST(Slurp(path).size() == kFileHeaderSize);

  BOOST_REQUIRE(writer->Append(MakeRecord(1, OpKind::kMkdir, 3)).ok());
  BOOST_TEST(writer->dirty());
  BOOST_TEST(writer->Sync().ok());
  BOOST_TEST(!writer->dirty());
}

// For every way a record can meet the end of a block (0 to 12 bytes left
// before it), the block tail is zero-padded or carries an empty FIRST
// fragment, and everything reads back.
BOOST_AUTO_TEST_CASE(RecordsMeetingBlockEndsRoundTrip) {
  TempDir dir;
  const size_t base = Encoded(MakeRecord(1, OpKind::kCreate, 0)).size();
  for (size_t left = 0; left <= kFragmentHeaderSize + 1; ++left) {
    // The first record fills block 0 up to `left` bytes; its path makes up the size.
    size_t payload = kBlockSize - kFragmentHeaderSize - left;
    size_t path_size = payload - base;
    Record first = MakeRecord(1, OpKind::kCreate, path_size);
    // The path length's varint grows with the path: shrink until the payload fits exactly.
    while (Encoded(first).size() > payload) first = MakeRecord(1, OpKind::kCreate, --path_size);
    BOOST_REQUIRE(Encoded(first).size() == payload);
    std::vector<Record> records = {first, MakeRecord(2, OpKind::kModify, 50), MakeRecord(3, OpKind::kFinal, 5)};
    Written w = WriteJournal(dir.File("j" + std::to_string(left)), records);
    const std::string image = Slurp(w.path);
    BOOST_TEST_CONTEXT("bytes left in block 0: " << left) {
      BOOST_TEST(w.ends[0] == kFileHeaderSize + kBlockSize - left);
      if (left < kFragmentHeaderSize) {
        BOOST_TEST((image.substr(w.ends[0], left) == std::string(left, '\0')));
      } else {
        // Record 2 does not fit in what is left: it starts with a FIRST
        // fragment, an empty one when only its header fits.
        BOOST_TEST(static_cast<uint8_t>(image[w.ends[0] + 10]) == journal::kFirstType);
      }
      ReadResult res = ReadImage(image);
      BOOST_TEST((res.records == records));
      BOOST_TEST(res.reports.empty());
      BOOST_TEST(res.tail_bytes == 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(AppendAllWritesTheSameBytesAsOneAppendEach) {
  // Records of every size around a block, several blocks' worth: AppendAll
  // of them in runs of 1, 2, 7 and all makes the very file one Append each
  // makes, and it reads back as they were.
  TempDir dir;
  std::vector<Record> records;
  for (uint64_t i = 0; i < 60; ++i) {
    records.push_back(MakeRecord(i + 1, i % 3 == 0 ? OpKind::kFinal : OpKind::kModify, (i * 1237) % (kBlockSize + 700)));
  }
  const std::string one_each = Slurp(WriteJournal(dir.File("each"), records).path);
  for (size_t run : {size_t{1}, size_t{2}, size_t{7}, records.size()}) {
    BOOST_TEST_CONTEXT("runs of " << run) {
      const std::string path = dir.File("all" + std::to_string(run));
      std::unique_ptr<JournalWriter> writer;
      BOOST_REQUIRE(JournalWriter::Create(path, &writer).ok());
      for (size_t at = 0; at < records.size(); at += run) {
        std::vector<const Record*> part;
        for (size_t i = at; i < std::min(records.size(), at + run); ++i) part.push_back(&records[i]);
        BOOST_REQUIRE(writer->AppendAll(part).ok());
      }
      BOOST_REQUIRE(writer->Sync().ok());
      const std::string image = Slurp(path);
      BOOST_TEST((image == one_each));
      ReadResult res = ReadImage(image);
      BOOST_TEST((res.records == records));
      BOOST_TEST(res.reports.empty());
    }
  }
}

// ---- Torn tails ----

BOOST_AUTO_TEST_CASE(JournalCutAtEveryByteReadsBackCompletedRecords) {
  TempDir dir;
  Written w = WriteJournal(dir.File("j"), VariedRecords(20, 6, 25000));
  const std::string image = Slurp(w.path);
  BOOST_REQUIRE(image.size() > kFileHeaderSize + 2 * kBlockSize);

  size_t complete = 0;  // records whose last byte is before the cut
  for (size_t cut = 0; cut <= image.size(); ++cut) {
    while (complete < w.ends.size() && w.ends[complete] <= cut) ++complete;
    ReadResult res = ReadImage(image.substr(0, cut));
    if (cut < kFileHeaderSize) {
      BOOST_REQUIRE(res.open.IsCorruption());
      continue;
    }
    BOOST_REQUIRE_MESSAGE(res.open.ok(), res.open.ToString());
    const uint64_t end = complete == 0 ? kFileHeaderSize : w.ends[complete - 1];
    BOOST_REQUIRE_MESSAGE(res.records.size() == complete, "cut at " << cut);
    BOOST_REQUIRE(std::equal(res.records.begin(), res.records.end(), w.records.begin()));
    BOOST_REQUIRE_MESSAGE(res.reports.empty(), "cut at " << cut << " reported corruption");
    BOOST_REQUIRE(res.end_of_last_record == end);
    BOOST_REQUIRE(res.tail_bytes == cut - end);
  }

  // The same through real files, at a few cuts: in a header, a fragment
  // header, a payload, a block boundary, a multi-block record.
  const std::vector<size_t> cuts = {0,  7,  kFileHeaderSize, kFileHeaderSize + 5, w.ends[0] + 3,
                                    w.ends[4] + 200, kFileHeaderSize + kBlockSize,
                                    kFileHeaderSize + 2 * kBlockSize + 1, image.size() - 1};
  for (size_t cut : cuts) {
    const std::string path = dir.File("cut" + std::to_string(cut));
    Spit(path, image.substr(0, cut));
    ReadResult from_file = ReadFile(path);
    ReadResult from_memory = ReadImage(image.substr(0, cut));
    BOOST_TEST_CONTEXT("cut at " << cut) {
      BOOST_TEST(from_file.open.code() == from_memory.open.code());
      BOOST_TEST((from_file.records == from_memory.records));
      BOOST_TEST(from_file.reports.empty());
      BOOST_TEST(from_file.tail_bytes == from_memory.tail_bytes);
      BOOST_TEST(from_file.end_of_last_record == from_memory.end_of_last_record);
    }
  }
  std::vector<Record> got;
  std::vector<std::string> problems;
  Spit(dir.File("empty"), "");
  Status s = ReadAllRecords(dir.File("empty"), &got, &problems);
  BOOST_TEST(s.IsCorruption());
  BOOST_TEST(s.message().find("empty") != std::string::npos, s.ToString());
}

BOOST_AUTO_TEST_CASE(ZeroFilledTailReadsAsEnd) {
  TempDir dir;
  Written w = WriteJournal(dir.File("j"), VariedRecords(8, 4, 9000));
  const std::string image = Slurp(w.path);
  for (size_t zeros : {size_t{1}, kFragmentHeaderSize, size_t{100}, size_t{kBlockSize}, size_t{3 * kBlockSize + 17}}) {
    ReadResult res = ReadImage(image + std::string(zeros, '\0'));
    BOOST_TEST_CONTEXT(zeros << " zeros") {
      BOOST_TEST((res.records == w.records));
      BOOST_TEST(res.reports.empty());
      BOOST_TEST(res.tail_bytes == zeros);
      BOOST_TEST(res.end_of_last_record == image.size());
    }
  }
  // Zeros where a record was being written, as after a crash on a
  // filesystem that allocated the blocks but never wrote the data.
  std::string crashed = image;
  std::fill(crashed.begin() + static_cast<long>(w.ends[5]), crashed.end(), '\0');
  ReadResult res = ReadImage(crashed);
  BOOST_TEST(res.records.size() == 6u);
  BOOST_TEST(res.reports.empty());
  BOOST_TEST(res.tail_bytes == image.size() - w.ends[5]);
}

BOOST_AUTO_TEST_CASE(GarbageTailIsReportedNotCrashed) {
  TempDir dir;
  Written w = WriteJournal(dir.File("j"), VariedRecords(8, 4, 9000));
  const std::string image = Slurp(w.path);
  std::mt19937 rng(7);
  for (size_t size : {size_t{3}, size_t{11}, size_t{500}, size_t{2 * kBlockSize + 3}}) {
    std::string garbage(size, '\0');
    for (char& c : garbage) c = static_cast<char>(rng());
    ReadResult res = ReadImage(image + garbage);
    BOOST_TEST_CONTEXT(size << " bytes of garbage") {
      BOOST_TEST((res.records == w.records));
      BOOST_TEST(res.reports.empty());  // it is the tail, not corruption
      BOOST_TEST(res.tail_bytes == size);
    }
  }
  // Garbage over the last record: that record is gone, the rest reads.
  std::string damaged = image;
  Overwrite(&damaged, w.ends[6] + 4, "garbage!");
  ReadResult res = ReadImage(damaged);
  BOOST_TEST(res.records.size() == 7u);
  BOOST_TEST(res.reports.empty());
  BOOST_TEST(res.tail_bytes == image.size() - w.ends[6]);
}

// ---- Corruption ----

BOOST_AUTO_TEST_CASE(CorruptionInMiddleSkipsToNextBlock) {
  TempDir dir;
  // Small records, so that block 0 holds many.
  std::vector<Record> records;
  for (uint64_t i = 1; i <= 300; ++i) records.push_back(MakeRecord(i, OpKind::kModify, 200));
  Written w = WriteJournal(dir.File("j"), records);
  std::string image = Slurp(w.path);
  BOOST_REQUIRE(image.size() > kFileHeaderSize + 2 * kBlockSize);

  const size_t victim = 10;  // damage record 10's payload
  FlipBit(&image, w.ends[victim] - 5, 3);
  ReadResult res = ReadImage(image);

  // Records 0..9 read; 10 and the rest of block 0 are dropped, and so is the
  // record straddling into block 1 (its LAST fragment has lost its FIRST).
  const uint64_t block1 = kFileHeaderSize + kBlockSize;
  size_t straddler = 0;
  while (w.ends[straddler] <= block1) ++straddler;
  const size_t resume = FirstFragmentOffset(w.ends[straddler - 1]) < block1 ? straddler + 1 : straddler;
  BOOST_REQUIRE(res.records.size() == victim + (records.size() - resume));
  BOOST_TEST(std::equal(res.records.begin(), res.records.begin() + victim, records.begin()));
  BOOST_TEST(std::equal(res.records.begin() + victim, res.records.end(), records.begin() + resume));
  BOOST_REQUIRE(res.reports.size() == 1u);
  BOOST_TEST(res.reports[0].offset == w.ends[victim - 1]);
  BOOST_TEST(res.reports[0].bytes == FirstFragmentOffset(w.ends[resume - 1]) - w.ends[victim - 1]);
  BOOST_TEST(res.reports[0].reason.IsCorruption());
  BOOST_TEST(res.tail_bytes == 0u);

  // ReadAllRecords says the same in one line.
  const std::string path = dir.File("damaged");
  Spit(path, image);
  std::vector<Record> got;
  std::vector<std::string> problems;
  BOOST_TEST(ReadAllRecords(path, &got, &problems).ok());
  BOOST_TEST(got.size() == res.records.size());
  BOOST_REQUIRE(problems.size() == 1u);
  BOOST_TEST(problems[0].find("offset " + std::to_string(w.ends[victim - 1])) == 0u, problems[0]);
}

BOOST_AUTO_TEST_CASE(ZerosBeforeValidRecordsAreCorruption) {
  TempDir dir;
  std::vector<Record> records = VariedRecords(16, 5, 30000);
  Written w = WriteJournal(dir.File("j"), records);
  std::string image = Slurp(w.path);
  // Zero one whole block in the middle: later blocks still hold good records.
  const size_t block1 = kFileHeaderSize + kBlockSize;
  std::fill(image.begin() + block1, image.begin() + block1 + kBlockSize, '\0');
  ReadResult res = ReadImage(image);
  CheckSubsequence(res.records, records);
  BOOST_TEST(res.records.size() < records.size());
  BOOST_TEST(res.records.back() == records.back());
  BOOST_REQUIRE(res.reports.size() == 1u);
  BOOST_TEST(res.reports[0].offset <= block1);
  BOOST_TEST(res.reports[0].offset + res.reports[0].bytes >= block1 + kBlockSize);
}

BOOST_AUTO_TEST_CASE(BitFlipIsDetectedAndReported) {
  TempDir dir;
  Written w = WriteJournal(dir.File("j"), VariedRecords(12, 4, 12000));
  const std::string image = Slurp(w.path);
  BOOST_REQUIRE(image.size() > kFileHeaderSize + kBlockSize);

  auto check = [&](size_t offset, int bit) {
    std::string damaged = image;
    FlipBit(&damaged, offset, bit);
    ReadResult res = ReadImage(std::move(damaged));
    BOOST_TEST_CONTEXT("bit " << bit << " of byte " << offset) {
      if (offset < kFileHeaderSize) {
        // Only the minor version may change freely.
        if (offset != 10 && offset != 11) BOOST_REQUIRE(!res.open.ok());
        return;
      }
      BOOST_REQUIRE(res.open.ok());
      CheckSubsequence(res.records, w.records);
      if (res.records.size() == w.records.size()) {
        // Nothing lost: only the unchecked zero trailer of a block can take a flip.
        BOOST_REQUIRE((offset - kFileHeaderSize) % kBlockSize >= kBlockSize - kFragmentHeaderSize);
        return;
      }
      // A loss is reported, or, when no good record follows, it is the tail.
      const bool last_lost = res.records.empty() || !(res.records.back() == w.records.back());
      if (last_lost) {
        BOOST_REQUIRE(res.reports.empty());
        BOOST_REQUIRE(res.tail_bytes > 0u);
      } else {
        BOOST_REQUIRE(res.reports.size() == 1u);
        BOOST_REQUIRE(res.reports[0].offset <= offset);
        BOOST_REQUIRE(res.reports[0].offset + res.reports[0].bytes > offset);
        BOOST_REQUIRE(res.tail_bytes == 0u);
      }
    }
  };
  // One bit of every byte, and every bit of the first two records.
  for (size_t offset = 0; offset < image.size(); ++offset) check(offset, static_cast<int>(offset % 8));
  for (size_t offset = 0; offset < w.ends[1]; ++offset) {
    for (int bit = 0; bit < 8; ++bit) check(offset, bit);
  }
}

BOOST_AUTO_TEST_CASE(UndecodableRecordIsReportedAndSkipped) {
  std::string image = Header(1, 0);
  const Record a = MakeRecord(1, OpKind::kCreate, 10);
  const Record b = MakeRecord(2, OpKind::kFinal, 10);
  AppendFragment(&image, journal::kFullType, Encoded(a));
  const size_t bad_at = image.size();
  AppendFragment(&image, journal::kFullType, std::string("\x01\x08\x09" "short", 8));  // length past end
  const size_t bad_end = image.size();
  AppendFragment(&image, journal::kFullType, Encoded(b));
  ReadResult res = ReadImage(image);
  BOOST_TEST(res.records.size() == 2u);
  BOOST_REQUIRE(res.reports.size() == 1u);
  BOOST_TEST(res.reports[0].offset == bad_at);
  BOOST_TEST(res.reports[0].bytes == bad_end - bad_at);
  BOOST_TEST(res.reports[0].reason.IsCorruption());

  // As the last record it is still intact data: reported, and not tail.
  std::string ends_bad = Header(1, 0);
  AppendFragment(&ends_bad, journal::kFullType, Encoded(a));
  AppendFragment(&ends_bad, journal::kFullType, std::string(1, '\0'));  // kind 0
  res = ReadImage(ends_bad);
  BOOST_TEST(res.records.size() == 1u);
  BOOST_TEST(res.reports.size() == 1u);
  BOOST_TEST(res.tail_bytes == 0u);
  BOOST_TEST(res.end_of_last_record == ends_bad.size());
}

BOOST_AUTO_TEST_CASE(MisplacedFragmentsAreCorruption) {
  const Record a = MakeRecord(1, OpKind::kCreate, 10);
  const Record b = MakeRecord(2, OpKind::kModify, 10);
  const std::string ea = Encoded(a);
  const std::string eb = Encoded(b);

  // A FIRST never finished, then a FULL: the FIRST is dropped and reported.
  std::string image = Header(1, 0);
  AppendFragment(&image, journal::kFirstType, ea.substr(0, 5));
  AppendFragment(&image, journal::kFullType, eb);
  ReadResult res = ReadImage(image);
  BOOST_TEST(res.records.size() == 1u);
  BOOST_TEST((res.records[0] == b));
  BOOST_REQUIRE(res.reports.size() == 1u);
  BOOST_TEST(res.reports[0].offset == kFileHeaderSize);

  // A LAST and a MIDDLE without their FIRST.
  image = Header(1, 0);
  AppendFragment(&image, journal::kMiddleType, ea.substr(0, 5));
  AppendFragment(&image, journal::kLastType, ea.substr(5));
  AppendFragment(&image, journal::kFullType, eb);
  res = ReadImage(image);
  BOOST_TEST(res.records.size() == 1u);
  BOOST_REQUIRE(res.reports.size() == 1u);
  BOOST_TEST(res.reports[0].offset == kFileHeaderSize);

  // An unknown fragment type with a good checksum, inside a record.
  image = Header(1, 0);
  AppendFragment(&image, journal::kFirstType, ea.substr(0, 5));
  AppendFragment(&image, 9, "future");
  AppendFragment(&image, journal::kLastType, ea.substr(5));
  AppendFragment(&image, journal::kFullType, eb);
  res = ReadImage(image);
  BOOST_TEST(res.records.size() == 1u);
  BOOST_TEST(res.reports.size() == 1u);

  // Split by hand the way the writer would, the record reads.
  image = Header(1, 0);
  AppendFragment(&image, journal::kFirstType, ea.substr(0, 5));
  AppendFragment(&image, journal::kMiddleType, "");
  AppendFragment(&image, journal::kLastType, ea.substr(5));
  res = ReadImage(image);
  BOOST_TEST(res.records.size() == 1u);
  BOOST_TEST((res.records[0] == a));
  BOOST_TEST(res.reports.empty());
}

// ---- Headers ----

BOOST_AUTO_TEST_CASE(NewerMajorVersionIsRefused) {
  TempDir dir;
  const std::string path = dir.File("j");
  Spit(path, Header(2, 0));
  std::unique_ptr<JournalReader> reader;
  Status s = JournalReader::Open(path, nullptr, &reader);
  BOOST_TEST((s.code() == Status::Code::kUnsupported));
  BOOST_TEST(s.message() == "journal format version 2 is newer than this guard understands (1)");
  uint64_t dropped = 0;
  std::unique_ptr<JournalWriter> writer;
  BOOST_TEST((JournalWriter::OpenForAppend(path, &writer, &dropped).code() == Status::Code::kUnsupported));
  BOOST_TEST(Slurp(path).size() == kFileHeaderSize);  // and left alone

  // A newer minor version is read: it only adds what an older reader may skip.
  std::string image = Header(1, 7);
  AppendFragment(&image, journal::kFullType, Encoded(MakeRecord(1, OpKind::kMkdir, 4)) + "\x63\x01z");
  BOOST_TEST(JournalReader::OpenBuffer(image, nullptr, &reader).ok());
  BOOST_TEST(reader->minor_version() == 7);
  Record r;
  BOOST_TEST(reader->ReadRecord(&r));
  BOOST_TEST((r == MakeRecord(1, OpKind::kMkdir, 4)));
}

BOOST_AUTO_TEST_CASE(BadMagicIsCorruption) {
  std::string image = Header(1, 0);
  image[0] = 'X';
  std::unique_ptr<JournalReader> reader;
  BOOST_TEST(JournalReader::OpenBuffer(image, nullptr, &reader).IsCorruption());
  BOOST_TEST(JournalReader::OpenBuffer(Header(1, 0).substr(0, 15), nullptr, &reader).IsCorruption());
  BOOST_TEST(JournalReader::OpenBuffer("", nullptr, &reader).IsCorruption());
  BOOST_TEST(JournalReader::OpenBuffer(Header(0, 0), nullptr, &reader).IsCorruption());
  image = Header(1, 0);
  image[13] = 0x10;  // block size 4096
  BOOST_TEST(JournalReader::OpenBuffer(image, nullptr, &reader).IsCorruption());
  TempDir dir;
  BOOST_TEST(JournalReader::Open(dir.File("missing"), nullptr, &reader).IsNotFound());
}

// ---- Appending to an existing journal ----

BOOST_AUTO_TEST_CASE(OpenForAppendCutsTornTail) {
  TempDir dir;
  Written w = WriteJournal(dir.File("full"), VariedRecords(10, 4, 20000));
  const std::string image = Slurp(w.path);
  const std::vector<size_t> cuts = {w.ends[2] + 1, w.ends[3] + 15000, w.ends[6] - 1,
                                    kFileHeaderSize + kBlockSize + 3, w.ends[9] - 1, w.ends[9]};
  for (size_t cut : cuts) {
    BOOST_TEST_CONTEXT("cut at " << cut) {
      const std::string path = dir.File("cut" + std::to_string(cut));
      Spit(path, image.substr(0, cut));
      size_t kept = 0;
      while (kept < w.ends.size() && w.ends[kept] <= cut) ++kept;
      const uint64_t end = kept == 0 ? kFileHeaderSize : w.ends[kept - 1];

      std::unique_ptr<JournalWriter> writer;
      uint64_t dropped = 99;
      Status s = JournalWriter::OpenForAppend(path, &writer, &dropped);
      BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
      BOOST_TEST(dropped == cut - end);
      BOOST_TEST(writer->size() == end);
      BOOST_TEST(Slurp(path).size() == end);

      std::vector<Record> want(w.records.begin(), w.records.begin() + static_cast<long>(kept));
      for (uint64_t i = 0; i < 3; ++i) {
        want.push_back(MakeRecord(1000 + i, OpKind::kOutcome, i == 1 ? 40000 : 30));
        BOOST_REQUIRE(writer->Append(want.back()).ok());
      }
      BOOST_REQUIRE(writer->Sync().ok());
      ReadResult res = ReadFile(path);
      BOOST_TEST((res.records == want));
      BOOST_TEST(res.reports.empty());
      BOOST_TEST(res.tail_bytes == 0u);
    }
  }
}

BOOST_AUTO_TEST_CASE(OpenForAppendKeepsRecordsAfterMidFileCorruption) {
  TempDir dir;
  std::vector<Record> records;
  for (uint64_t i = 1; i <= 300; ++i) records.push_back(MakeRecord(i, OpKind::kModify, 200));
  Written w = WriteJournal(dir.File("j"), records);
  std::string image = Slurp(w.path);
  FlipBit(&image, w.ends[3] + 20, 0);
  Spit(w.path, image + "torn");
  std::unique_ptr<JournalWriter> writer;
  uint64_t dropped = 0;
  BOOST_REQUIRE(JournalWriter::OpenForAppend(w.path, &writer, &dropped).ok());
  BOOST_TEST(dropped == 4u);
  BOOST_REQUIRE(writer->Append(MakeRecord(999, OpKind::kSessionEnd, 0)).ok());
  ReadResult res = ReadFile(w.path);
  BOOST_TEST(res.reports.size() == 1u);
  BOOST_TEST((res.records.back() == MakeRecord(999, OpKind::kSessionEnd, 0)));
  BOOST_TEST((res.records[res.records.size() - 2] == records.back()));
}

// ---- Threads ----

BOOST_AUTO_TEST_CASE(ConcurrentAppendAndSync) {
  TempDir dir;
  std::unique_ptr<JournalWriter> writer;
  BOOST_REQUIRE(JournalWriter::Create(dir.File("j"), &writer).ok());
  constexpr int kPerThread = 400;
  std::atomic<bool> failed{false};
  std::atomic<int> appenders_done{0};
  auto append = [&](int who) {
    for (int i = 0; i < kPerThread; ++i) {
      Record r = MakeRecord(static_cast<uint64_t>(who * 100000 + i), OpKind::kModify,
                            i % 50 == 0 ? 40000 : static_cast<size_t>(i % 90));
      r.pid = who;
      if (!writer->Append(r).ok()) failed = true;
    }
    ++appenders_done;
  };
  std::thread a(append, 1);
  std::thread b(append, 2);
  std::thread syncer([&] {
    while (appenders_done < 2) {
      if (!writer->Sync().ok()) failed = true;
    }
  });
  a.join();
  b.join();
  syncer.join();
  BOOST_TEST(!failed);
  BOOST_TEST(writer->Sync().ok());
  BOOST_TEST(!writer->dirty());

  ReadResult res = ReadFile(dir.File("j"));
  BOOST_TEST(res.reports.empty());
  BOOST_TEST(res.tail_bytes == 0u);
  BOOST_REQUIRE(res.records.size() == 2u * kPerThread);
  uint64_t next[3] = {0, 100000, 200000};
  for (const Record& r : res.records) {
    BOOST_REQUIRE(r.seq == next[r.pid]);  // each thread's records in its order
    ++next[r.pid];
  }
  BOOST_TEST(res.end_of_last_record == writer->size());
}

BOOST_AUTO_TEST_CASE(SyncAfterHoldsOffAppendsUntilTheJournalIsSynced) {
  // The group commit syncs blobs in SyncAfter's hook: a record appended
  // meanwhile could name a blob the hook missed, so it must wait.
  TempDir dir;
  std::unique_ptr<JournalWriter> writer;
  BOOST_REQUIRE(JournalWriter::Create(dir.File("j"), &writer).ok());
  BOOST_REQUIRE(writer->Append(MakeRecord(1, OpKind::kModify, 10)).ok());
  std::atomic<bool> hook_running{false}, appended{false};
  std::atomic<pid_t> appender_tid{0};
  std::thread appender;
  Status s = writer->SyncAfter([&] {
    hook_running = true;
    appender = std::thread([&] {
      appender_tid = ::gettid();
      (void)writer->Append(MakeRecord(2, OpKind::kModify, 10));
      appended = true;
    });
    // Not a sleep: the kernel says when the append waits for the lock.
    BOOST_TEST(testing::WaitUntilBlockedInFutex(appender_tid));
    BOOST_TEST(!appended.load());  // held off while the hook runs
    return Status::Ok();
  });
  appender.join();
  BOOST_TEST(s.ok());
  BOOST_TEST(hook_running.load());
  BOOST_TEST(appended.load());
  BOOST_TEST(writer->dirty());  // the second record came after the sync
}

BOOST_AUTO_TEST_CASE(SyncAfterFailingHookLeavesTheJournalUnsynced) {
  TempDir dir;
  std::unique_ptr<JournalWriter> writer;
  BOOST_REQUIRE(JournalWriter::Create(dir.File("j"), &writer).ok());
  BOOST_REQUIRE(writer->Append(MakeRecord(1, OpKind::kModify, 10)).ok());
  Status s = writer->SyncAfter([] { return Status::IOError("blobs not durable"); });
  BOOST_TEST(!s.ok());
  BOOST_TEST(writer->dirty());
  bool ran = false;
  BOOST_TEST(writer->SyncAfter([&] { ran = true; return Status::Ok(); }).ok());
  BOOST_TEST(ran);
  BOOST_TEST(!writer->dirty());
  ran = false;
  BOOST_TEST(writer->SyncAfter([&] { ran = true; return Status::Ok(); }).ok());
  BOOST_TEST(!ran);  // nothing appended since: nothing to sync, no hook
}

}  // namespace
}  // namespace guard
