// Marks in a session's history: found by number (@N) or label, turn
// boundaries that skip steps, and journals from before marks (format 1.1)
// read as sessions without any.
#define BOOST_TEST_MODULE session_marks
#include <boost/test/unit_test.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/journal_format.h"
#include "common/journal_reader.h"
#include "common/journal_writer.h"
#include "common/session_history.h"
#include "common/session_marks.h"

namespace guard {
namespace {

Record Op(uint64_t seq, const std::string& path) {
  Record r;
  r.kind = OpKind::kCreate;
  r.seq = seq;
  r.path = path;
  return r;
}

Record Outcome(uint64_t seq, uint64_t of) {
  Record r;
  r.kind = OpKind::kOutcome;
  r.seq = seq;
  r.ref_seq = of;
  return r;
}

Record MarkRecord(uint64_t seq, const std::string& label, bool step = false) {
  Record r;
  r.kind = OpKind::kMark;
  r.seq = seq;
  r.label = label;
  if (step) r.flags |= kStepMark;
  return r;
}

// Ops 1, 4, 7, 10 (each with its outcome) around marks:
//   op1 | @1 "one" (3) | op4 | @2 step "Bash" (6) | op7 | @3 "two" (9) | op10 | @4 "Bash" step (12)
SessionHistory Scripted() {
  std::vector<Record> records = {
      Op(1, "a"),  Outcome(2, 1),  MarkRecord(3, "one"),  Op(4, "b"),  Outcome(5, 4),
      MarkRecord(6, "Bash", true), Op(7, "c"),  Outcome(8, 7),   MarkRecord(9, "two"),
      Op(10, "d"), Outcome(11, 10), MarkRecord(12, "Bash", true),
  };
  return SessionHistory::FromRecords(SessionMeta{}, records);
}

BOOST_AUTO_TEST_CASE(MarksAreReadInSequenceOrderApartFromOperations) {
  SessionHistory h = Scripted();
  BOOST_TEST(h.ops().size() == 4u);
  BOOST_REQUIRE(h.marks().size() == 4u);
  BOOST_TEST(h.marks()[0].label == "one");
  BOOST_TEST(h.marks()[2].seq == 9u);
}

BOOST_AUTO_TEST_CASE(MarkIsFoundByNumberOrUniqueLabel) {
  SessionHistory h = Scripted();
  uint64_t seq = 0;
  BOOST_TEST(MarkSeq(h, "@1", &seq).ok());
  BOOST_TEST(seq == 3u);
  BOOST_TEST(MarkSeq(h, "two", &seq).ok());
  BOOST_TEST(seq == 9u);
  BOOST_TEST(MarkSeq(h, "@4", &seq).ok());
  BOOST_TEST(seq == 12u);
}

BOOST_AUTO_TEST_CASE(AmbiguousUnknownOrOutOfRangeMarkIsRefused) {
  SessionHistory h = Scripted();
  uint64_t seq = 0;
  Status s = MarkSeq(h, "Bash", &seq);
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.message().find("@2, @4") != std::string::npos, s.message());
  BOOST_TEST(!MarkSeq(h, "three", &seq).ok());
  BOOST_TEST(!MarkSeq(h, "@0", &seq).ok());
  BOOST_TEST(!MarkSeq(h, "@5", &seq).ok());
  // A number past every integer type is refused, never thrown.
  for (const char* huge : {"@99999999999999999999", "@18446744073709551616", "@18446744073709551615"}) {
    Status big = MarkSeq(h, huge, &seq);
    BOOST_TEST(!big.ok(), huge);
    BOOST_TEST(big.message().find("marks @1 to @4") != std::string::npos, big.message());
  }
  BOOST_TEST(!MarkSeq(SessionHistory::FromRecords(SessionMeta{}, {Op(1, "a")}), "@1", &seq).ok());
}

BOOST_AUTO_TEST_CASE(PlainNumberIsASequenceNumberNotAMark) {
  BOOST_TEST(!IsMarkSpec("12"));
  BOOST_TEST(IsMarkSpec("@12"));
  BOOST_TEST(IsMarkSpec("prompt: 12"));
  BOOST_TEST(IsMarkSpec(""));
}

BOOST_AUTO_TEST_CASE(TurnsCountMarksWithoutStepsFromTheEnd) {
  SessionHistory h = Scripted();
  uint64_t seq = 0;
  BOOST_TEST(TurnsStartSeq(h, 1, &seq).ok());
  BOOST_TEST(seq == 9u);  // "two", not the trailing step
  BOOST_TEST(TurnsStartSeq(h, 2, &seq).ok());
  BOOST_TEST(seq == 3u);
  Status s = TurnsStartSeq(h, 3, &seq);
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.message().find("2 marked turns") != std::string::npos, s.message());
  BOOST_TEST(!TurnsStartSeq(h, 0, &seq).ok());
}

BOOST_AUTO_TEST_CASE(StateAtAMarkIsTheStateAfterTheOperationsBeforeIt) {
  SessionHistory h = Scripted();
  uint64_t seq = 0;
  BOOST_REQUIRE(MarkSeq(h, "two", &seq).ok());
  // Just after "two": a, b, c exist, d does not yet.
  BOOST_TEST(h.TouchedPaths(0, seq).size() == 3u);
  FileState st;
  BOOST_TEST(h.StateAfter("d", seq, &st));
  BOOST_TEST((st.type == FileType::kAbsent));
  // A mark is no call: the call bounds of its seq are itself.
  BOOST_TEST(h.CallStart(seq) == seq);
  BOOST_TEST(h.CallEnd(seq) == seq);
}

struct TempFile {
  std::string path;
  TempFile() {
    char tmpl[] = "/tmp/session-marks-test-XXXXXX";
    int fd = mkstemp(tmpl);
    BOOST_REQUIRE(fd >= 0);
    close(fd);
    path = tmpl;
    unlink(path.c_str());
  }
  ~TempFile() { unlink(path.c_str()); }
};

BOOST_AUTO_TEST_CASE(JournalOfFormatOneOneReadsAsASessionWithoutMarks) {
  TempFile f;
  {
    std::unique_ptr<JournalWriter> w;
    BOOST_REQUIRE(JournalWriter::Create(f.path, &w).ok());
    for (const Record& r : {Op(1, "a"), Outcome(2, 1), Op(3, "b"), Outcome(4, 3)}) BOOST_REQUIRE(w->Append(r).ok());
  }
  // Rewrite the header's minor version to 1, as a guard before marks wrote it.
  std::FILE* fp = std::fopen(f.path.c_str(), "r+b");
  BOOST_REQUIRE(fp != nullptr);
  const unsigned char minor[2] = {1, 0};
  std::fseek(fp, 10, SEEK_SET);
  std::fwrite(minor, 1, 2, fp);
  std::fclose(fp);

  std::unique_ptr<JournalReader> reader;
  BOOST_REQUIRE(JournalReader::Open(f.path, nullptr, &reader).ok());
  BOOST_TEST(reader->minor_version() == 1);
  std::vector<Record> records;
  std::vector<std::string> problems;
  BOOST_REQUIRE(ReadAllRecords(f.path, &records, &problems).ok());
  BOOST_TEST(problems.empty());
  SessionHistory h = SessionHistory::FromRecords(SessionMeta{}, records);
  BOOST_TEST(h.ops().size() == 2u);
  BOOST_TEST(h.marks().empty());
  uint64_t seq = 0;
  BOOST_TEST(!TurnsStartSeq(h, 1, &seq).ok());
}

BOOST_AUTO_TEST_CASE(WriterStampsTheCurrentMinorVersion) {
  TempFile f;
  {
    std::unique_ptr<JournalWriter> w;
    BOOST_REQUIRE(JournalWriter::Create(f.path, &w).ok());
  }
  std::unique_ptr<JournalReader> reader;
  BOOST_REQUIRE(JournalReader::Open(f.path, nullptr, &reader).ok());
  BOOST_TEST(reader->minor_version() == 5);  // 1.5: kObserved, the `thinned` record
  BOOST_TEST(journal::kMinorVersion == 5);
}

}  // namespace
}  // namespace guard
