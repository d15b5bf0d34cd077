#define BOOST_TEST_MODULE pack_writer
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <dirent.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "common/file_io.h"
#include "supervisor/git/git_handles.h"
#include "supervisor/git/pack_writer.h"
#include "tests/unit/support/test_history.h"

namespace guard {
namespace {

using testing::TempDir;

struct Object {
  git_object_t type;
  std::string data;
  git_oid id;
};

Object Make(git_object_t type, std::string data) {
  Object o{type, std::move(data), {}};
  git_odb_hash(&o.id, o.data.data(), o.data.size(), type);
  return o;
}

// A blob, a tree holding it and a commit of that tree: the objects of a
// small checkpoint, in the order a checkpoint writes them.
std::vector<Object> SmallCheckpoint(const std::string& content) {
  std::vector<Object> out;
  out.push_back(Make(GIT_OBJECT_BLOB, content));
  std::string tree = "100644 f";
  tree += '\0';
  tree.append(reinterpret_cast<const char*>(out[0].id.id), GIT_OID_RAWSZ);
  out.push_back(Make(GIT_OBJECT_TREE, tree));
  out.push_back(Make(GIT_OBJECT_COMMIT, "tree " + OidHex(out[1].id) +
                                            "\nauthor a <a@x> 0 +0000\ncommitter a <a@x> 0 +0000\n\nm\n"));
  return out;
}

// Content zlib cannot shrink much, so that it spans several output calls.
std::string Noise(size_t n) {
  std::string s(n, '\0');
  uint64_t x = 88172645463325252ull;
  for (char& c : s) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  return s;
}

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  BOOST_REQUIRE(d != nullptr);
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.insert(n);
  }
  ::closedir(d);
  return out;
}

struct Fixture {
  Fixture() {
    InitGitLibrary();
    root = tmp.path + "/repo";
    git_repository* r = nullptr;
    BOOST_REQUIRE(git_repository_init(&r, root.c_str(), 1) == 0);
    repo.reset(r);
    pack_dir = root + "/objects/pack";
  }

  std::string Write(const std::vector<Object>& objects) {
    PackWriter w;
    Status s = w.Begin(pack_dir, static_cast<uint32_t>(objects.size()));
    for (const Object& o : objects) {
      if (s.ok()) s = w.Add(o.id, o.type, o.data.data(), o.data.size());
    }
    std::string name, keep;
    if (s.ok()) s = w.Finish(&name, &keep);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    if (!keep.empty()) ::unlink(keep.c_str());  // as its ref would be written now
    return name;
  }

  TempDir tmp;
  std::string root, pack_dir;
  GitRepository repo;
};

BOOST_FIXTURE_TEST_CASE(WrittenObjectsAreReadBackByLibgit2, Fixture) {
  std::vector<Object> objects = SmallCheckpoint("hello\n");
  objects.push_back(Make(GIT_OBJECT_BLOB, Noise(700 << 10)));  // several deflate calls, a 4-byte size header
  objects.push_back(Make(GIT_OBJECT_BLOB, ""));
  std::string name = Write(objects);
  git_odb* odb = nullptr;
  BOOST_REQUIRE(git_repository_odb(&odb, repo.get()) == 0);
  GitOdb owned(odb);
  BOOST_REQUIRE(git_odb_refresh(odb) == 0);
  for (const Object& o : objects) {
    git_odb_object* obj = nullptr;
    BOOST_REQUIRE_MESSAGE(git_odb_read(&obj, odb, &o.id) == 0, OidHex(o.id));
    BOOST_TEST(git_odb_object_type(obj) == o.type);
    BOOST_TEST(std::string(static_cast<const char*>(git_odb_object_data(obj)), git_odb_object_size(obj)) == o.data);
    git_odb_object_free(obj);
  }
  BOOST_TEST(Names(pack_dir) == (std::set<std::string>{name + ".idx", name + ".pack"}));
}

// libgit2's own indexer, given the pack, must produce the very index guard
// wrote: same ids, CRCs, offsets, checksums.
BOOST_FIXTURE_TEST_CASE(IndexIsTheOneGitIndexerBuildsFromThePack, Fixture) {
  std::vector<Object> objects = SmallCheckpoint("some content\n");
  for (int i = 0; i < 300; ++i) objects.push_back(Make(GIT_OBJECT_BLOB, "file " + std::to_string(i) + "\n"));
  std::string name = Write(objects);
  std::string pack;
  BOOST_REQUIRE(ReadFileToString(pack_dir + "/" + name + ".pack", &pack).ok());
  std::string other = tmp.path + "/indexed";
  BOOST_REQUIRE(MakeDirs(other, 0755).ok());
  git_indexer* idx = nullptr;
  git_indexer_options opts = GIT_INDEXER_OPTIONS_INIT;
  BOOST_REQUIRE(git_indexer_new(&idx, other.c_str(), 0, nullptr, &opts) == 0);
  git_indexer_progress stats{};
  BOOST_REQUIRE(git_indexer_append(idx, pack.data(), pack.size(), &stats) == 0);
  BOOST_REQUIRE_MESSAGE(git_indexer_commit(idx, &stats) == 0, git_error_last()->message);
  BOOST_TEST(stats.indexed_objects == objects.size());
  git_indexer_free(idx);
  // (libgit2 may name the pack otherwise: git has used two conventions.)
  std::string their_idx;
  for (const std::string& n : Names(other)) {
    if (n.size() > 4 && n.substr(n.size() - 4) == ".idx") their_idx = n;
  }
  std::string ours, theirs;
  BOOST_REQUIRE(ReadFileToString(pack_dir + "/" + name + ".idx", &ours).ok());
  BOOST_REQUIRE(ReadFileToString(other + "/" + their_idx, &theirs).ok());
  BOOST_TEST((ours == theirs));
}

BOOST_FIXTURE_TEST_CASE(UnfinishedPackLeavesNothingBehind, Fixture) {
  std::vector<Object> objects = SmallCheckpoint("x\n");
  {
    PackWriter w;
    BOOST_REQUIRE(w.Begin(pack_dir, 3).ok());
    BOOST_REQUIRE(w.Add(objects[0].id, objects[0].type, objects[0].data.data(), objects[0].data.size()).ok());
  }
  BOOST_TEST(Names(pack_dir).empty());
}

// Until a ref names its objects a pack is kept (its .keep), so that a
// `git gc --prune=now` in between leaves it alone; a pack already kept by
// another writer is not the caller's to let go.
BOOST_FIXTURE_TEST_CASE(AFinishedPackIsKeptUntilItsCallerLetsGo, Fixture) {
  std::vector<Object> objects = SmallCheckpoint("kept\n");
  std::string name, keep;
  for (int round = 0; round < 2; ++round) {
    PackWriter w;
    BOOST_REQUIRE(w.Begin(pack_dir, static_cast<uint32_t>(objects.size())).ok());
    for (const Object& o : objects) BOOST_REQUIRE(w.Add(o.id, o.type, o.data.data(), o.data.size()).ok());
    std::string again;
    BOOST_REQUIRE(w.Finish(round == 0 ? &name : &again, &keep).ok());
    if (round == 0) {
      BOOST_TEST(keep == pack_dir + "/" + name + ".keep");
    } else {
      BOOST_TEST(again == name);
      BOOST_TEST(keep.empty());  // the first one's
    }
    BOOST_TEST(::access((pack_dir + "/" + name + ".keep").c_str(), F_OK) == 0);
  }
}

BOOST_FIXTURE_TEST_CASE(ObjectCountMustMatchTheHeader, Fixture) {
  std::vector<Object> objects = SmallCheckpoint("x\n");
  PackWriter w;
  BOOST_REQUIRE(w.Begin(pack_dir, 2).ok());
  BOOST_REQUIRE(w.Add(objects[0].id, objects[0].type, objects[0].data.data(), objects[0].data.size()).ok());
  std::string name, keep;
  BOOST_TEST(!w.Finish(&name, &keep).ok());
  BOOST_TEST(keep.empty());
}

BOOST_FIXTURE_TEST_CASE(ObjectAddedTwiceIsRefused, Fixture) {
  std::vector<Object> objects = SmallCheckpoint("x\n");
  {
    PackWriter w;
    BOOST_REQUIRE(w.Begin(pack_dir, 2).ok());
    for (int i = 0; i < 2; ++i) {
      BOOST_REQUIRE(w.Add(objects[0].id, objects[0].type, objects[0].data.data(), objects[0].data.size()).ok());
    }
    std::string name, keep;
    BOOST_TEST(!w.Finish(&name, &keep).ok());
  }
  BOOST_TEST(Names(pack_dir).empty());
}

// A blob streamed in pieces (AddStream, as a checkpoint packs a file from
// the store) is the very object Add writes from memory.
BOOST_FIXTURE_TEST_CASE(StreamedObjectIsReadBackWholeAndEqualToOneAddedWhole, Fixture) {
  Object big = Make(GIT_OBJECT_BLOB, Noise(900 << 10));
  std::string name;
  {
    PackWriter w;
    BOOST_REQUIRE(w.Begin(pack_dir, 1).ok());
    Status s = w.AddStream(big.id, GIT_OBJECT_BLOB, big.data.size(), [&](const PackWriter::Sink& sink) {
      for (size_t at = 0; at < big.data.size(); at += 4096 + 7) {
        GUARD_RETURN_IF_ERROR(sink(big.data.data() + at, std::min<size_t>(4096 + 7, big.data.size() - at)));
      }
      return Status::Ok();
    });
    BOOST_REQUIRE_MESSAGE(s.ok(), s.ToString());
    std::string keep;
    BOOST_REQUIRE(w.Finish(&name, &keep).ok());
    BOOST_TEST(keep == pack_dir + "/" + name + ".keep");
    ::unlink(keep.c_str());
  }
  std::string streamed;
  BOOST_REQUIRE(ReadFileToString(pack_dir + "/" + name + ".pack", &streamed).ok());
  std::string whole_name = Write({big});
  BOOST_TEST(whole_name == name);  // the same bytes, so the same name
  git_odb* odb = nullptr;
  BOOST_REQUIRE(git_repository_odb(&odb, repo.get()) == 0);
  GitOdb owned(odb);
  git_odb_object* obj = nullptr;
  BOOST_REQUIRE(git_odb_read(&obj, odb, &big.id) == 0);
  BOOST_TEST(std::string(static_cast<const char*>(git_odb_object_data(obj)), git_odb_object_size(obj)) == big.data);
  git_odb_object_free(obj);
}

BOOST_FIXTURE_TEST_CASE(StreamedObjectOfAnotherSizeThanAnnouncedIsRefused, Fixture) {
  Object o = Make(GIT_OBJECT_BLOB, "twelve bytes");
  for (size_t announced : {o.data.size() - 1, o.data.size() + 1}) {
    PackWriter w;
    BOOST_REQUIRE(w.Begin(pack_dir, 1).ok());
    Status s = w.AddStream(o.id, GIT_OBJECT_BLOB, announced,
                           [&](const PackWriter::Sink& sink) { return sink(o.data.data(), o.data.size()); });
    BOOST_TEST(!s.ok(), "announced " << announced);
  }
  BOOST_TEST(Names(pack_dir).empty());
}

}  // namespace
}  // namespace guard
