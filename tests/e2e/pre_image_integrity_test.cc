// A pre-image must stay what the file held at the moment of the change, even
// when another process keeps writing to the file afterwards, and even when
// the change takes the file out of the root.
#define BOOST_TEST_MODULE pre_image_integrity
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <unistd.h>

#include "common/unique_fd.h"
#include "tests/e2e/support/expect_capture.h"

namespace guard::e2e {
namespace {

constexpr OpKind kRename = OpKind::kRename, kDelete = OpKind::kDelete;

// An fd the test itself (outside guard) holds open for appending to `path`,
// as an editor, a server or the shell that started guard may.
UniqueFd OpenForAppend(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  BOOST_REQUIRE(fd.valid());
  return fd;
}

void Append(const UniqueFd& fd, const std::string& text) {
  BOOST_REQUIRE_EQUAL(write(fd.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

BOOST_AUTO_TEST_CASE(FileDeletedWhileAnotherProcessWritesToItKeepsItsPreImage) {
  Workspace ws;
  ws.Write("log", "written before the session\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  UniqueFd writer = OpenForAppend(ws.Path("log"));

  GuardResult r = RunGuardBash(ws, "rm log");
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  // The writer goes on after the file is gone (and after the session).
  Append(writer, "written after the delete\n");

  SessionView s = ExpectCapture(ws, r, before, {{kDelete, "log"}});
  ExpectPreImagesOf(s, before, {"log"});
}

BOOST_AUTO_TEST_CASE(FileRenamedOverWhileAnotherProcessWritesToItKeepsItsPreImage) {
  Workspace ws;
  ws.Write("target", "what the rename replaces\n");
  ws.Write("replacement", "the new content\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  UniqueFd writer = OpenForAppend(ws.Path("target"));
  Append(writer, "");  // held, not yet written

  GuardResult r = RunGuardBash(ws, "mv replacement target");
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  Append(writer, "written to the replaced inode after the rename\n");

  SessionView s = ExpectCapture(ws, r, before, {{kRename, "replacement", "target"}});
  ExpectPreImagesOf(s, before, {"target"});
}

BOOST_AUTO_TEST_CASE(WritesAfterADeleteDoNotCorruptTheSameContentInALaterSession) {
  // The store keeps one object per content. If a deleted file that someone
  // still writes to became that object, a later session saving the same
  // content would share it, and lose it with the next write.
  Workspace ws;
  ws.Write("held", "the same content\n");
  UniqueFd writer = OpenForAppend(ws.Path("held"));
  GuardResult first = RunGuardBash(ws, "rm held");
  BOOST_REQUIRE_EQUAL(first.exit_code, 0);

  ws.Write("a", "the same content\n");
  TreeSnapshot before = SnapshotTree(ws.tree());
  GuardResult second = RunGuardBash(ws, "echo changed > a");
  BOOST_REQUIRE_EQUAL(second.exit_code, 0);
  Append(writer, "written after the delete\n");

  SessionView s = OnlyNewSession(ws, second);
  ExpectPreImagesOf(s, before, {"a"});
}

}  // namespace
}  // namespace guard::e2e
