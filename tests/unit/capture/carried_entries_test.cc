#define BOOST_TEST_MODULE carried_entries
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <map>

#include "common/blob_store.h"
#include "common/file_io.h"
#include "supervisor/capture/carried_entries.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

using testing::TempDir;

struct Fixture {
  Fixture() {
    BOOST_REQUIRE(MakeDirs(root(), 0700).ok());
    BOOST_REQUIRE(MakeDirs(outside(), 0700).ok());
    BOOST_REQUIRE(BlobStore::Open(tmp.path + "/store", &store).ok());
  }
  std::string root() const { return tmp.path + "/root"; }
  std::string outside() const { return tmp.path + "/outside"; }
  void Write(const std::string& abs, const std::string& content, mode_t mode = 0644) const {
    BOOST_REQUIRE(WriteFileAtomic(abs, content, mode).ok());
  }
  void Mkdir(const std::string& abs, mode_t mode = 0755) const {
    BOOST_REQUIRE(::mkdir(abs.c_str(), mode) == 0);
    BOOST_REQUIRE(::chmod(abs.c_str(), mode) == 0);
  }
  void Symlink(const std::string& target, const std::string& abs) const {
    BOOST_REQUIRE(::symlink(target.c_str(), abs.c_str()) == 0);
  }
  std::string Content(const Record& r) const {
    std::string s;
    BOOST_REQUIRE(store->ReadToString(r.before.blob, &s).ok());
    return s;
  }

  TempDir tmp;
  std::unique_ptr<BlobStore> store;
};

size_t IndexOf(const std::vector<Record>& records, const std::string& path) {
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].path == path) return i;
  }
  BOOST_FAIL("no record of " << path);
  return 0;
}

BOOST_FIXTURE_TEST_CASE(LeavingEntriesAreRemovalsDeepestFirstWithTheirContent, Fixture) {
  Mkdir(root() + "/d");
  Write(root() + "/d/f", "f\n", 0640);
  Mkdir(root() + "/d/sub", 0700);
  Write(root() + "/d/sub/g", "g\n");
  Symlink("../f", root() + "/d/sub/link");

  std::vector<Record> out;
  BOOST_REQUIRE(DescribeLeavingEntries(root(), "d", store.get(), &out).ok());
  BOOST_REQUIRE_EQUAL(out.size(), 4u);
  for (const Record& r : out) BOOST_TEST(r.flags == static_cast<uint32_t>(kCarried), r.path);
  BOOST_TEST(IndexOf(out, "d/sub/g") < IndexOf(out, "d/sub"));
  BOOST_TEST(IndexOf(out, "d/sub/link") < IndexOf(out, "d/sub"));

  const Record& f = out[IndexOf(out, "d/f")];
  BOOST_TEST(OpKindName(f.kind) == OpKindName(OpKind::kDelete));
  BOOST_TEST(f.before.mode == 0640u);
  BOOST_TEST(Content(f) == "f\n");
  const Record& sub = out[IndexOf(out, "d/sub")];
  BOOST_TEST(OpKindName(sub.kind) == OpKindName(OpKind::kRmdir));
  BOOST_TEST(FileTypeName(sub.before.type) == FileTypeName(FileType::kDirectory));
  BOOST_TEST(sub.before.mode == 0700u);
  const Record& link = out[IndexOf(out, "d/sub/link")];
  BOOST_TEST(OpKindName(link.kind) == OpKindName(OpKind::kDelete));
  BOOST_TEST(FileTypeName(link.before.type) == FileTypeName(FileType::kSymlink));
  BOOST_TEST(link.before.symlink_target == "../f");
}

BOOST_FIXTURE_TEST_CASE(LeavingEntriesNeverFollowASymlink, Fixture) {
  Mkdir(outside() + "/private");
  Write(outside() + "/private/secret", "a secret outside the root\n");
  Mkdir(root() + "/d");
  Symlink(outside() + "/private", root() + "/d/link");

  std::vector<Record> out;
  BOOST_REQUIRE(DescribeLeavingEntries(root(), "d", store.get(), &out).ok());
  BOOST_REQUIRE_EQUAL(out.size(), 1u);
  BOOST_TEST(out[0].path == "d/link");
  BOOST_TEST(FileTypeName(out[0].before.type) == FileTypeName(FileType::kSymlink));

  // Nor a symlink where the directory itself is expected.
  Symlink(outside() + "/private", root() + "/e");
  out.clear();
  BOOST_TEST(!DescribeLeavingEntries(root(), "e", store.get(), &out).ok());
  BOOST_TEST(out.empty());
}

BOOST_FIXTURE_TEST_CASE(AnUnreadableDirectoryIsACaptureFailure, Fixture) {
  if (::geteuid() == 0) return;  // root reads it anyway
  Mkdir(root() + "/d");
  Mkdir(root() + "/d/closed", 0755);
  Write(root() + "/d/closed/f", "f\n");
  BOOST_REQUIRE(::chmod((root() + "/d/closed").c_str(), 0) == 0);
  std::vector<Record> out;
  Status s = DescribeLeavingEntries(root(), "d", store.get(), &out);
  BOOST_REQUIRE(::chmod((root() + "/d/closed").c_str(), 0755) == 0);
  BOOST_TEST(!s.ok());
  BOOST_REQUIRE_EQUAL(out.size(), 1u);
  BOOST_TEST((out[0].flags & kNotCaptured) != 0);
}

BOOST_FIXTURE_TEST_CASE(ArrivingEntriesAreCreationsParentsFirstAtTheirNewName, Fixture) {
  Mkdir(outside() + "/src");
  Write(outside() + "/src/f", "f\n", 0600);
  Mkdir(outside() + "/src/sub", 0750);
  Write(outside() + "/src/sub/g", "g\n");
  Symlink("../f", outside() + "/src/sub/link");

  std::vector<Record> out;
  BOOST_REQUIRE(DescribeArrivingEntries(outside() + "/src", "in", &out).ok());
  BOOST_REQUIRE_EQUAL(out.size(), 4u);
  std::map<std::string, const Record*> by_path;
  for (const Record& r : out) {
    by_path[r.path] = &r;
    BOOST_TEST(r.flags == static_cast<uint32_t>(kCarried), r.path);
    BOOST_TEST(FileTypeName(r.before.type) == FileTypeName(FileType::kAbsent), r.path);
  }
  BOOST_TEST(IndexOf(out, "in/sub") < IndexOf(out, "in/sub/g"));
  BOOST_TEST(IndexOf(out, "in/sub") < IndexOf(out, "in/sub/link"));
  BOOST_TEST(OpKindName(by_path["in/f"]->kind) == OpKindName(OpKind::kCreate));
  BOOST_TEST(by_path["in/f"]->new_mode == 0600u);
  BOOST_TEST(OpKindName(by_path["in/sub"]->kind) == OpKindName(OpKind::kMkdir));
  BOOST_TEST(by_path["in/sub"]->new_mode == 0750u);
  BOOST_TEST(OpKindName(by_path["in/sub/link"]->kind) == OpKindName(OpKind::kSymlink));
  BOOST_TEST(by_path["in/sub/link"]->target == "../f");
}

BOOST_FIXTURE_TEST_CASE(ArrivingEntriesOfADirectoryThatCannotBeOpenedAreAFailure, Fixture) {
  std::vector<Record> out;
  BOOST_TEST(DescribeArrivingEntries(outside() + "/missing", "in", &out).IsNotFound());
  BOOST_TEST(out.empty());
}

}  // namespace
}  // namespace guard
