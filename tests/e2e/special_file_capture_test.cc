// Files the kernel makes for a process without an open (issue 11, items 2
// and 13): a unix socket bound to a path, and a core dump. Each session is
// undone (the tree before it, byte for byte and mode for mode), replayed
// (the tree at its end) and undone again. The processes are
// tests/programs/special_files.c.
#define BOOST_TEST_MODULE special_file_capture
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <fstream>
#include <string>

#include "tests/e2e/support/undone_session.h"

namespace guard::e2e {
namespace {

std::vector<std::string> Special(std::vector<std::string> args) {
  args.insert(args.begin(), TestProgram("special_files"));
  return args;
}

std::string Sysctl(const std::string& name) {
  std::ifstream in("/proc/sys/kernel/" + name);
  std::string value;
  std::getline(in, value);
  return value;
}

// ---------------------------------------------------------------------------
// Item 13: bind(2) of a unix socket makes a file. Replay cannot bring back a
// socket nobody listens on; it leaves a FIFO of the same mode in its place
// (docs/restore.md), which a tree snapshot sees as the same "other" file.

BOOST_AUTO_TEST_CASE(UnixSocketBoundInTheTreeIsACreationUndoRemoves) {
  Workspace ws;
  ws.Mkdir("run");
  UndoneSession s(ws, Special({"bind", "run/server.sock"}));
  BOOST_TEST(s.View().FindOp(OpKind::kMknod, "run/server.sock") != nullptr, s.View().Dump());
  s.ExpectUndoReplayUndo();
}

// ---------------------------------------------------------------------------
// Item 2: a core dump replaces the file the pattern names.

BOOST_AUTO_TEST_CASE(CoreDumpOverAFileNamedCoreIsRecordedAndUndone) {
  // core_pattern is the machine's, not the test's to change (other tests
  // run beside this one): it must be the plain name "core".
  std::string pattern = Sysctl("core_pattern");
  if (pattern != "core" || Sysctl("core_uses_pid") != "0") {
    BOOST_TEST_MESSAGE("skipped: needs kernel.core_pattern=core and core_uses_pid=0 (here: '"
                       << pattern << "', " << Sysctl("core_uses_pid") << ")");
    return;
  }
  Workspace ws;
  ws.Write("core", "the user's file that happens to be named core\n", 0644);
  UndoneSession s(ws, Special({"crash"}), 128 + SIGSEGV);
  const TreeEntry* dump = s.after().Find("core");
  BOOST_REQUIRE(dump != nullptr);
  BOOST_REQUIRE_MESSAGE(dump->mode == 0600, "no core was dumped: " << Describe(*dump));
  BOOST_TEST(s.View().FindOp(OpKind::kModify, "core") != nullptr, s.View().Dump());
  s.ExpectUndoReplayUndo();
}

BOOST_AUTO_TEST_CASE(CoreDumpWhereNoFileWasIsACreationUndoRemoves) {
  std::string pattern = Sysctl("core_pattern");
  if (pattern != "core" || Sysctl("core_uses_pid") != "0") {
    BOOST_TEST_MESSAGE("skipped: needs kernel.core_pattern=core and core_uses_pid=0");
    return;
  }
  Workspace ws;
  ws.Mkdir("src");
  UndoneSession s(ws, {"bash", "-c", "cd src && exec " + TestProgram("special_files") + " crash"},
                  128 + SIGSEGV);
  BOOST_REQUIRE(s.after().Find("src/core") != nullptr);
  BOOST_TEST(s.View().FindOp(OpKind::kCreate, "src/core") != nullptr, s.View().Dump());
  s.ExpectUndoReplayUndo();
}

}  // namespace
}  // namespace guard::e2e
