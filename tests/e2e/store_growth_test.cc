// What a session costs the store, for the two shapes of file that made it
// grow without measure (issue 37, points 10 and 12): a large sparse file
// truncated by one `echo y > s` (docs/format.md Part II, "Holes"), and a
// large log appended to while the work saver saves it again and again
// ("Append objects"). Each test checks the state directory's growth on
// disk (`du`), that undo and replay put back exact content, and prints the
// figures. Unit twins: tests/unit/common/sparse_file_test.cc,
// blob_append_test.cc, store_gc_test.cc (AnAppendObjectKeepsItsBaseAlive).
#define BOOST_TEST_MODULE store_growth
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/unique_fd.h"
#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/store_checks.h"

namespace guard::e2e {
namespace {

namespace fs = std::filesystem;

constexpr off_t kSparseSize = off_t{1} << 30;  // 1 GiB
constexpr off_t kMiB = 1 << 20;

// Disk use of everything under `dir` (st_blocks, each inode once), as
// `du -s --block-size=1` counts it.
uint64_t DiskUse(const std::string& dir) {
  uint64_t total = 0;
  std::set<std::pair<dev_t, ino_t>> seen;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st;
    if (::lstat(it->path().c_str(), &st) != 0 || !seen.insert({st.st_dev, st.st_ino}).second) continue;
    total += static_cast<uint64_t>(st.st_blocks) * 512;
  }
  return total;
}

uint64_t Allocated(const std::string& path) {
  struct stat st;
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

// The data the sparse file holds: a few KiB at three places.
const std::vector<std::pair<off_t, std::string>>& SparseData() {
  static const std::vector<std::pair<off_t, std::string>> data = {
      {0, "header of a sparse file\n"},
      {300 * kMiB + 12345, std::string(3000, 'm')},
      {kSparseSize - 5000, "near the end\n"}};
  return data;
}

// Whether `path` holds exactly the sparse file's content: read through,
// every byte outside the data zero.
bool HoldsSparseContent(const std::string& path, std::string* why) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return *why = "cannot open", false;
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || st.st_size != kSparseSize) return *why = "size " + std::to_string(st.st_size), false;
  std::string expected(static_cast<size_t>(kMiB), '\0'), got(static_cast<size_t>(kMiB), '\0');
  for (off_t off = 0; off < kSparseSize; off += kMiB) {
    std::fill(expected.begin(), expected.end(), '\0');
    for (const auto& [at, bytes] : SparseData()) {
      for (size_t i = 0; i < bytes.size(); ++i) {
        off_t p = at + static_cast<off_t>(i);
        if (p >= off && p < off + kMiB) expected[static_cast<size_t>(p - off)] = bytes[i];
      }
    }
    if (::pread(fd.get(), got.data(), got.size(), off) != kMiB) return *why = "short read", false;
    if (got != expected) return *why = "content differs in MiB " + std::to_string(off / kMiB), false;
  }
  return true;
}

BOOST_AUTO_TEST_CASE(ASparseFileTruncatedInASessionCostsItsDataAndComesBackSparse) {
  Workspace ws;
  const std::string s = ws.Path("s");
  {
    UniqueFd fd(::open(s.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    BOOST_REQUIRE(fd.valid());
    for (const auto& [at, bytes] : SparseData())
      BOOST_REQUIRE(::pwrite(fd.get(), bytes.data(), bytes.size(), at) == static_cast<ssize_t>(bytes.size()));
    BOOST_REQUIRE(::ftruncate(fd.get(), kSparseSize) == 0);
  }
  const uint64_t original_blocks = Allocated(s);
  if (original_blocks > 4 * kMiB) {
    BOOST_TEST_MESSAGE("skipped: the file system of " << ws.tree() << " makes no holes");
    return;
  }
  // A session first, so that the state directory exists and its own
  // files are in the "before" figure.
  GuardResult warm = RunGuardBash(ws, "true");
  BOOST_REQUIRE_MESSAGE(warm.exit_code == 0, DescribeResult(warm));
  const uint64_t before = DiskUse(ws.home());
  GuardResult r = RunGuardBash(ws, "echo y > s");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE(ws.Read("s") == "y\n");
  const uint64_t growth = DiskUse(ws.home()) - before;
  BOOST_TEST_MESSAGE("sparse: state directory grew by " << growth << " bytes for a " << kSparseSize
                                                       << "-byte file holding " << original_blocks << " bytes");
  BOOST_TEST(growth < static_cast<uint64_t>(8 * kMiB), "the store grew by " << growth << " bytes");

  auto start = std::chrono::steady_clock::now();
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0, DescribeResult(undo));
  const uint64_t restored_blocks = Allocated(s);
  BOOST_TEST_MESSAGE("sparse: undo took " << seconds << " s; the restored file has " << restored_blocks
                                          << " bytes allocated, the original " << original_blocks);
  std::string why;
  BOOST_TEST(HoldsSparseContent(s, &why), why);
  // As few blocks as the original, within what a file system may add
  // (block size, preallocation, metadata blocks).
  BOOST_TEST(restored_blocks <= original_blocks + 256 * 1024, restored_blocks << " against " << original_blocks);
}

std::string Lines(size_t bytes, const std::string& tag) {
  std::string s;
  for (size_t i = 0; s.size() < bytes; ++i) s += tag + " line " + std::to_string(i) + " of a large log\n";
  return s;
}

size_t CountAppendObjects(const std::string& guard_home) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(guard_home + "/store/objects", ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".app") ++n;
  }
  return n;
}

// A 16 MiB log appended to for 10 s: the work saver saves it about every
// 3 s. Each save after the first is the appended bytes (an append object),
// not a copy: the store grows by the pre-image, one full copy and the
// lines. Undo, replay (through the append objects) and diff are exact.
BOOST_AUTO_TEST_CASE(ALogAppendedToInASessionIsStoredAsItsAppendedBytes) {
  Workspace ws;
  const std::string original = Lines(16 * kMiB, "old");
  ws.Write("log", original);
  GuardResult warm = RunGuardBash(ws, "true");
  BOOST_REQUIRE_MESSAGE(warm.exit_code == 0, DescribeResult(warm));
  const uint64_t before = DiskUse(ws.home());
  // One writer that keeps the log open, as a logging program does (each
  // `>>` would be an open of its own, with a pre-image of its own).
  GuardResult r = RunGuardBash(
      ws, "exec 3>>log; for i in $(seq 200); do echo \"new line $i\" >&3; sleep 0.05; done; exec 3>&-; sleep 2.5");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  const std::string final_content = ws.Read("log");
  BOOST_REQUIRE(final_content.size() > original.size());
  const uint64_t growth = DiskUse(ws.home()) - before;
  BOOST_TEST_MESSAGE("log: state directory grew by " << growth << " bytes for a " << original.size()
                                                    << "-byte log appended to for 10 s");
  BOOST_TEST(CountAppendObjects(ws.home()) > 0u, "no append object was stored");
  // The pre-image and one whole copy (the first save), then lines: less
  // than three copies. A copy per save would be five or more.
  BOOST_TEST(growth < 3 * original.size(), "the store grew by " << growth << " bytes");

  GuardResult diff = RunGuardCommand(ws, {"diff"});
  BOOST_TEST(diff.exit_code == 0, DescribeResult(diff));
  BOOST_TEST(diff.out.find("+new line 200") != std::string::npos, DescribeResult(diff));
  BOOST_TEST(diff.out.find("+new line 1\n") != std::string::npos, DescribeResult(diff));

  const std::string id = r.new_sessions.at(0);
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes", "--session", id});
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST((ws.Read("log") == original), "undo did not put back the original log");
  GuardResult replay = RunGuardCommand(ws, {"replay", "--yes", "--session", id});
  BOOST_REQUIRE_MESSAGE(replay.exit_code == 0, DescribeResult(replay));
  BOOST_TEST((ws.Read("log") == final_content), "replay did not put back the appended log");
  std::vector<std::string> missing = UnreadableBlobs(ws.home(), id);
  BOOST_TEST(missing.empty(), "unreadable blobs: " << (missing.empty() ? "" : missing[0]));
}

// 200 `echo x >> log` on a 16 MiB log: each `>>` is an open for writing
// with a pre-image of its own. The first is a whole copy; each later one
// is stored after the version before it, as the bytes appended (by the
// tracer, which hashes the file where it would have copied it, and from
// the shim's copy alike). A copy per open grew the state directory by
// 3.37 GB. Undo to the start and to a point in the middle are exact.
BOOST_AUTO_TEST_CASE(ManyAppendOpensOfALogStoreTheirAppendedBytes) {
  Workspace ws;
  const std::string original = Lines(16 * kMiB, "old");
  ws.Write("log", original);
  GuardResult warm = RunGuardBash(ws, "true");
  BOOST_REQUIRE_MESSAGE(warm.exit_code == 0, DescribeResult(warm));
  const uint64_t before = DiskUse(ws.home());
  GuardResult r = RunGuardBash(ws, "for i in $(seq 200); do echo x$i >> log; done");
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  std::string expected = original, at_100 = original;
  for (int i = 1; i <= 200; ++i) {
    expected += "x" + std::to_string(i) + "\n";
    if (i == 99) at_100 = expected;
  }
  BOOST_REQUIRE(ws.Read("log") == expected);
  const uint64_t growth = DiskUse(ws.home()) - before;
  BOOST_TEST_MESSAGE("200 appends: state directory grew by " << growth << " bytes for a " << original.size()
                                                             << "-byte log");
  // The pre-image, at most one more whole copy (the end state, when no
  // version could be chained on), and the lines: under three copies.
  BOOST_TEST(growth < 3 * original.size(), "the store grew by " << growth << " bytes");

  const std::string id = r.new_sessions.at(0);
  GuardResult show = RunGuardCommand(ws, {"show", "--session", id, "--json"});
  BOOST_REQUIRE_MESSAGE(show.exit_code == 0, DescribeResult(show));
  std::vector<uint64_t> seqs;
  for (const auto& e : nlohmann::json::parse(show.out)) {
    if (e.value("op", "") == "modify") seqs.push_back(e["seq"].get<uint64_t>());
  }
  BOOST_REQUIRE_EQUAL(seqs.size(), 200u);
  GuardResult undo = RunGuardCommand(ws, {"undo", "--yes", "--session", id});
  BOOST_REQUIRE_MESSAGE(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST((ws.Read("log") == original), "undo did not put back the original log");
  // Just after the 99th open: the pre-image of the 100th, a chained one.
  GuardResult middle = RunGuardCommand(ws, {"replay", "--yes", "--session", id, "--to", std::to_string(seqs[98])});
  BOOST_REQUIRE_MESSAGE(middle.exit_code == 0, DescribeResult(middle));
  BOOST_TEST((ws.Read("log") == at_100), "replay to the 99th open is not exact");
  std::vector<std::string> missing = UnreadableBlobs(ws.home(), id);
  BOOST_TEST(missing.empty(), "unreadable blobs: " << (missing.empty() ? "" : missing[0]));
}

}  // namespace
}  // namespace guard::e2e
