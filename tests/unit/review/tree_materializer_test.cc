#define BOOST_TEST_MODULE tree_materializer
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "common/file_io.h"
#include "supervisor/review/tree_materializer.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

namespace fs = std::filesystem;
using testing::HistoryBuilder;
using testing::TempDir;

// Bytes that do not compress.
std::string Noise(size_t n, uint64_t seed) {
  std::string out(n, '\0');
  for (char& c : out) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    c = static_cast<char>(seed >> 56);
  }
  return out;
}

struct Fixture {
  Fixture() : builder(tmp.path + "/store") {
    BOOST_REQUIRE(MakeDirs(tree(), 0700).ok());
    BOOST_REQUIRE(TreeMaterializer::Open(tree(), builder.store(), TreeMaterializer::Options(), &m).ok());
  }
  std::string tree() const { return tmp.path + "/tree"; }
  std::string Read(const std::string& rel) const {
    std::string s;
    BOOST_REQUIRE(ReadFileToString(tree() + "/" + rel, &s).ok());
    return s;
  }
  uint32_t ModeOf(const std::string& rel) const {
    struct stat st;
    BOOST_REQUIRE(::lstat((tree() + "/" + rel).c_str(), &st) == 0);
    return st.st_mode & 07777;
  }

  TempDir tmp;
  HistoryBuilder builder;
  TreeMaterializer m;
};

BOOST_FIXTURE_TEST_CASE(PutWritesContentModeAndMissingParents, Fixture) {
  FileState f = builder.File("#!/bin/sh\necho hi\n", 0751);
  f.mtime_ns = 1600000000123456789;
  BOOST_REQUIRE(m.Put("deep/er/run.sh", f).ok());
  BOOST_TEST(Read("deep/er/run.sh") == "#!/bin/sh\necho hi\n");
  BOOST_TEST(ModeOf("deep/er/run.sh") == 0751u);
  struct stat st;
  BOOST_REQUIRE(::lstat((tree() + "/deep/er/run.sh").c_str(), &st) == 0);
  BOOST_TEST(st.st_mtim.tv_sec == 1600000000);
  BOOST_TEST(fs::is_directory(tree() + "/deep/er"));
}

BOOST_FIXTURE_TEST_CASE(PutWritesSymlinksAsTheyAreAndAbsentAsNothing, Fixture) {
  BOOST_REQUIRE(m.Put("link", HistoryBuilder::Link("../../etc/passwd")).ok());
  BOOST_TEST(fs::read_symlink(tree() + "/link").string() == "../../etc/passwd");
  BOOST_REQUIRE(m.Put("gone", HistoryBuilder::Absent()).ok());
  BOOST_TEST(!fs::exists(fs::symlink_status(tree() + "/gone")));
}

BOOST_FIXTURE_TEST_CASE(PutNeverWritesThroughASymlinkParent, Fixture) {
  TempDir elsewhere;
  BOOST_REQUIRE(m.Put("d", HistoryBuilder::Link(elsewhere.path)).ok());
  Status s = m.Put("d/escaped", builder.File("x"));
  BOOST_TEST(s.code() == Status::Code::kInvalidArgument);
  BOOST_TEST(!fs::exists(elsewhere.path + "/escaped"));
}

BOOST_FIXTURE_TEST_CASE(PutRefusesNamesThatLeaveTheTree, Fixture) {
  for (const char* bad : {"../x", "a/../../x", "/abs", "a//b", "a/./b", ""}) {
    BOOST_TEST(m.Put(bad, builder.File("x")).code() == Status::Code::kInvalidArgument, bad);
  }
}

BOOST_FIXTURE_TEST_CASE(ContentNotRecordedIsNotFoundAndLeavesNothing, Fixture) {
  Status s = m.Put("f", HistoryBuilder::Meta(0644, 10));
  BOOST_TEST(s.IsNotFound());
  BOOST_TEST(!fs::exists(tree() + "/f"));
}

BOOST_FIXTURE_TEST_CASE(DamagedBlobIsCorruptionAndLeavesNothing, Fixture) {
  FileState f = builder.File(Noise(5000, 1));  // incompressible: stored raw
  std::string object = builder.store()->ObjectPath(f.blob.key);
  BOOST_REQUIRE(!object.empty());
  // Same length, other bytes: only the hash check can notice.
  BOOST_REQUIRE(WriteFileAtomic(object, Noise(5000, 2), 0600).ok());
  Status s = m.Put("f", f);
  BOOST_TEST(s.IsCorruption(), s.ToString());
  BOOST_TEST(!fs::exists(tree() + "/f"));
}

BOOST_FIXTURE_TEST_CASE(MissingBlobIsNotFound, Fixture) {
  FileState f = builder.File("x");
  f.blob.key.low ^= 1;  // a key nothing was stored under
  BOOST_TEST(m.Put("f", f).IsNotFound());
}

BOOST_FIXTURE_TEST_CASE(SpecialFilesAreUnsupported, Fixture) {
  FileState fifo;
  fifo.type = FileType::kOther;
  fifo.mode = 0644;
  BOOST_TEST(m.Put("p", fifo).code() == Status::Code::kUnsupported);
}

BOOST_FIXTURE_TEST_CASE(FinishGivesDirectoriesTheirModesAfterFillingThem, Fixture) {
  BOOST_REQUIRE(m.Put("ro", HistoryBuilder::Dir(0555)).ok());
  BOOST_REQUIRE(m.Put("ro/inner", HistoryBuilder::Dir(0500)).ok());
  BOOST_REQUIRE(m.Put("ro/inner/f", builder.File("content")).ok());
  BOOST_REQUIRE(m.Finish().ok());
  BOOST_TEST(ModeOf("ro") == 0555u);
  BOOST_TEST(ModeOf("ro/inner") == 0500u);
  BOOST_TEST(Read("ro/inner/f") == "content");
  fs::permissions(tree() + "/ro", fs::perms::owner_all, fs::perm_options::add);
  fs::permissions(tree() + "/ro/inner", fs::perms::owner_all, fs::perm_options::add);
}

BOOST_FIXTURE_TEST_CASE(RemoveTakesAwayAFileButKeepsADirectory, Fixture) {
  BOOST_REQUIRE(m.Put("f", builder.File("x")).ok());
  BOOST_REQUIRE(m.Put("d", HistoryBuilder::Dir()).ok());
  BOOST_REQUIRE(m.Remove("f").ok());
  BOOST_REQUIRE(m.Remove("d").ok());
  BOOST_REQUIRE(m.Remove("never/was").ok());
  BOOST_TEST(!fs::exists(tree() + "/f"));
  BOOST_TEST(fs::is_directory(tree() + "/d"));
}

BOOST_AUTO_TEST_CASE(OwnerCanReadAddsOwnerBitsOnly) {
  TempDir tmp;
  HistoryBuilder builder(tmp.path + "/store");
  BOOST_REQUIRE(MakeDirs(tmp.path + "/tree", 0700).ok());
  TreeMaterializer m;
  TreeMaterializer::Options options;
  options.owner_can_read = true;
  BOOST_REQUIRE(TreeMaterializer::Open(tmp.path + "/tree", builder.store(), options, &m).ok());
  BOOST_REQUIRE(m.Put("secret", builder.File("s", 0000)).ok());
  BOOST_REQUIRE(m.Put("tool", builder.File("t", 0111)).ok());
  struct stat st;
  BOOST_REQUIRE(::lstat((tmp.path + "/tree/secret").c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 07777) == 0600u);
  BOOST_REQUIRE(::lstat((tmp.path + "/tree/tool").c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 07777) == 0711u);
}

}  // namespace
}  // namespace guard
