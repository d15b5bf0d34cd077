#define BOOST_TEST_MODULE change_patch
#include <boost/test/unit_test.hpp>

#include <fcntl.h>

#include "common/file_io.h"
#include "supervisor/review/change_patch.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

using testing::HistoryBuilder;
using testing::TempDir;

struct Fixture {
  Fixture() : builder(tmp.path + "/store") {}

  // The diff of the whole session, as `guard diff` (or `guard export` with
  // `binary`) would print it.
  std::string Diff(bool binary = false) {
    SessionChanges changes = SessionChanges::Collect(builder.Build(), kSessionEnd, {});
    std::string scratch = tmp.path + "/scratch" + std::to_string(runs++);
    BOOST_REQUIRE(MakeDirs(scratch, 0700).ok());
    Status s = ChangePatch::Prepare(changes, builder.store(), scratch, "at the end", &patch);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    UniqueFd out;
    BOOST_REQUIRE(OpenFile(scratch + "/out", O_RDWR | O_CREAT | O_TRUNC, 0600, &out).ok());
    GitTreeDiff::Style style;
    style.binary = binary;
    s = patch.Write(style, out.get());
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    std::string text;
    BOOST_REQUIRE(ReadFileToString(scratch + "/out", &text).ok());
    return text;
  }
  static bool Has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  TempDir tmp;
  HistoryBuilder builder;
  ChangePatch patch;
  int runs = 0;
};

BOOST_FIXTURE_TEST_CASE(DiffShowsEachKindOfChange, Fixture) {
  builder.Op(OpKind::kModify, "edited", builder.File("one\ntwo\n"));
  builder.Op(OpKind::kCreate, "created", HistoryBuilder::Absent());
  builder.Op(OpKind::kDelete, "deleted", builder.File("bye\n"));
  builder.Op(OpKind::kRename, "from", HistoryBuilder::Meta(0644, 13), "to", HistoryBuilder::Absent());
  builder.Op(OpKind::kChmod, "tool", builder.File("#!/bin/sh\n", 0644));
  builder.Op(OpKind::kSymlink, "link", HistoryBuilder::Absent());
  builder.Final("edited", builder.File("one\nthree\n"));
  builder.Final("created", builder.File("hello\n"));
  builder.Final("deleted", HistoryBuilder::Absent());
  builder.Final("from", HistoryBuilder::Absent());
  builder.Final("to", builder.File("moved intact\n"));
  builder.Final("tool", builder.File("#!/bin/sh\n", 0755));
  builder.Final("link", HistoryBuilder::Link("edited"));
  std::string d = Diff();
  BOOST_TEST(Has(d, "diff --git a/edited b/edited\n"), d);
  BOOST_TEST(Has(d, "-two\n+three\n"), d);
  BOOST_TEST(Has(d, "diff --git a/created b/created\nnew file mode 100644\n"), d);
  BOOST_TEST(Has(d, "diff --git a/deleted b/deleted\ndeleted file mode 100644\n"), d);
  BOOST_TEST(Has(d, "rename from from\nrename to to\n"), d);
  BOOST_TEST(Has(d, "old mode 100644\nnew mode 100755\n"), d);
  BOOST_TEST(Has(d, "new file mode 120000\n"), d);
  BOOST_TEST(patch.trees().unknown().empty());
}

BOOST_FIXTURE_TEST_CASE(AttributesAndIgnoreFilesInTheTreeChangeNothing, Fixture) {
  builder.Op(OpKind::kModify, ".gitattributes", builder.File("* text eol=crlf\n*.txt -diff\n"));
  builder.Op(OpKind::kModify, ".gitignore", builder.File("*\n"));
  builder.Op(OpKind::kModify, "notes.txt", builder.File("a\nb\n"));
  builder.Final(".gitattributes", builder.File("* text eol=crlf\n*.txt -diff\n"));
  builder.Final(".gitignore", builder.File("*\n"));
  builder.Final("notes.txt", builder.File("a\nc\n"));
  std::string d = Diff();
  BOOST_TEST(Has(d, "diff --git a/notes.txt b/notes.txt\n"), d);
  BOOST_TEST(Has(d, "-b\n+c\n"), d);  // a text diff, no CR added, not called binary
  BOOST_TEST(!Has(d, "\r"), d);
}

BOOST_FIXTURE_TEST_CASE(BinaryFilesAreNamedOrPatchedInGitBinaryForm, Fixture) {
  builder.Op(OpKind::kModify, "image.bin", builder.File(std::string("\x89PNG\0\1\2", 7)));
  builder.Final("image.bin", builder.File(std::string("\x89PNG\0\3\4", 7)));
  std::string named = Diff();
  BOOST_TEST(Has(named, "Binary files a/image.bin and b/image.bin differ\n"), named);
  std::string patch_text = Diff(/*binary=*/true);
  BOOST_TEST(Has(patch_text, "GIT binary patch\n"), patch_text);
}

BOOST_FIXTURE_TEST_CASE(UnusualPathsAreQuotedAsGitQuotesThem, Fixture) {
  builder.Op(OpKind::kCreate, "new\nline", HistoryBuilder::Absent());
  builder.Op(OpKind::kCreate, "bad\xff", HistoryBuilder::Absent());
  builder.Op(OpKind::kCreate, "with space", HistoryBuilder::Absent());
  builder.Final("new\nline", builder.File("1\n"));
  builder.Final("bad\xff", builder.File("2\n"));
  builder.Final("with space", builder.File("3\n"));
  std::string d = Diff();
  BOOST_TEST(Has(d, "diff --git \"a/new\\nline\" \"b/new\\nline\"\n"), d);
  BOOST_TEST(Has(d, "diff --git \"a/bad\\377\" \"b/bad\\377\"\n"), d);
  BOOST_TEST(Has(d, "diff --git a/with space b/with space\n"), d);
}

BOOST_FIXTURE_TEST_CASE(UnknownContentIsLeftOutOfBothSides, Fixture) {
  builder.Op(OpKind::kModify, "lost", builder.File("before\n"));
  FileState missing = builder.File("after\n");
  missing.blob.key.high ^= 1;  // a copy the store does not have
  builder.Final("lost", missing);
  builder.Op(OpKind::kModify, "uncaptured", HistoryBuilder::Meta(0644, 3));
  builder.last_op().flags |= kNotCaptured;  // the store failed; policy allowed the change
  builder.Final("uncaptured", builder.File("new"));
  builder.Op(OpKind::kModify, "fine", builder.File("x\n"));
  builder.Final("fine", builder.File("y\n"));
  std::string d = Diff();
  BOOST_TEST(!Has(d, "lost"), d);
  BOOST_TEST(!Has(d, "uncaptured"), d);
  BOOST_TEST(Has(d, "diff --git a/fine b/fine"), d);
  BOOST_TEST(patch.trees().unknown().size() == 2u);
}

BOOST_FIXTURE_TEST_CASE(PathsInsideGitDirectoriesAreCountedNotCompared, Fixture) {
  builder.Op(OpKind::kModify, ".git/index", builder.File("i1"));
  builder.Op(OpKind::kCreate, "sub/.GIT/x", HistoryBuilder::Absent());
  builder.Final(".git/index", builder.File("i2"));
  builder.Final("sub/.GIT/x", builder.File("x"));
  std::string d = Diff();
  BOOST_TEST(d.empty(), d);
  BOOST_TEST(patch.trees().git_dir_paths() == 2u);
}

BOOST_FIXTURE_TEST_CASE(NothingChangedGivesAnEmptyDiff, Fixture) {
  builder.Op(OpKind::kModify, "same", builder.File("unchanged\n"));
  builder.Final("same", builder.File("unchanged\n"));
  BOOST_TEST(Diff().empty());
}

}  // namespace
}  // namespace guard
