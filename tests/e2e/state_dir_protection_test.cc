// A command under guard cannot erase or rewrite guard's own log: every call
// that would change the state directory or guard's configuration (or move a
// directory holding one)
// fails with EACCES, and the sessions already recorded stay byte for byte
// as they were.
#define BOOST_TEST_MODULE state_dir_protection
#include <boost/test/unit_test.hpp>

#include "tests/e2e/support/expect_capture.h"

namespace guard::e2e {
namespace {

BOOST_AUTO_TEST_CASE(GuardedCommandsCannotDeleteRewriteOrMoveTheStateDirectory) {
  Workspace ws;
  // No automatic gc: its log would change the state directory by itself
  // while this test compares it before and after.
  MakeDir(ws.dir() + "/config");
  MakeDir(ws.dir() + "/config/guard");
  WriteFile(ws.dir() + "/config/guard/config.toml", "[retention]\nauto_gc = false\n");
  ws.Write("a", "recorded by the first session\n");
  GuardResult first = RunGuardBash(ws, "echo changed > a && rm a");
  BOOST_REQUIRE_EQUAL(first.exit_code, 0);
  BOOST_REQUIRE_EQUAL(first.new_sessions.size(), 1u);
  const std::string first_dir = "sessions/" + first.new_sessions[0];
  TreeSnapshot home_before = SnapshotTree(ws.home());
  BOOST_REQUIRE(home_before.Find(first_dir + "/journal") != nullptr);

  // Each attempt prints its exit status; all must fail.
  GuardRun run;
  run.env["FIRST"] = first_dir;
  run.env["OUTSIDE"] = ws.outside();
  run.env["WORKSPACE"] = ws.dir();
  run.command = {"bash", "-c", R"sh(
H="$GUARD_HOME"; J="$H/$FIRST/journal"
rm -rf "$H"; echo "rm -rf: $?"
echo x > "$J"; echo "redirect: $?"
echo x >> "$J"; echo "append: $?"
mv "$H" "$OUTSIDE/elsewhere"; echo "mv: $?"
mv "$WORKSPACE" "$WORKSPACE-moved"; echo "mv parent: $?"
chmod 777 "$H"; echo "chmod: $?"
truncate -s 0 "$H/$FIRST/meta.json"; echo "truncate: $?"
ln -s /etc/passwd "$H/store/planted"; echo "symlink: $?"
/usr/bin/python3 -c 'import os, sys; os.unlink(sys.argv[1])' "$J" 2> /dev/null; echo "python unlink: $?"
ln -s "$H" h-link && rm -rf h-link/; echo "through a symlink: $?"
(cd "$H" && rm -rf sessions); echo "relative to the cwd: $?"
echo "[retention]" >> "$XDG_CONFIG_HOME/guard/config.toml"; echo "config: $?"
rm -rf "$XDG_CONFIG_HOME/guard"; echo "rm config: $?"
CUR="$H/sessions/$GUARD_SESSION/journal"
# Hidden altogether where the command runs in a namespace of its own
# (state_isolation.h): the same refusal, one step earlier.
readlink /proc/$PPID/fd/0 > /dev/null 2>&1 || echo "through guard's own fd: 1"
for f in /proc/$PPID/fd/*; do
  if [ "$(readlink "$f")" = "$CUR" ]; then : > "$f"; echo "through guard's own fd: $?"; fi
done
exit 0
)sh"};
  GuardResult r = RunGuard(ws, run);
  BOOST_REQUIRE_EQUAL(r.exit_code, 0);
  BOOST_TEST(r.out ==
             "rm -rf: 1\nredirect: 1\nappend: 1\nmv: 1\nmv parent: 1\nchmod: 1\ntruncate: 1\nsymlink: 1\n"
             "python unlink: 1\nthrough a symlink: 1\nrelative to the cwd: 1\nconfig: 1\nrm config: 1\n"
             "through guard's own fd: 1\n");
  BOOST_TEST(r.err.find("Permission denied") != std::string::npos, r.err);

  // The state directory holds exactly what it held, plus the new session
  // and the first one's `sealed` mark, which guard's own recovery made at
  // the new session's start (docs/format.md), exactly that: an empty file.
  BOOST_REQUIRE_EQUAL(r.new_sessions.size(), 1u);
  const TreeSnapshot with_marks = SnapshotTree(ws.home()).Without("sessions/" + r.new_sessions[0]);
  const auto* mark = with_marks.Find(first_dir + "/sealed");
  BOOST_TEST((mark != nullptr && mark->type == FileType::kRegular && mark->content.empty()), "no empty sealed mark");
  TreeSnapshot home_after = with_marks.Without(first_dir + "/sealed");
  std::vector<std::string> diff = DiffSnapshots(home_before, home_after);
  BOOST_TEST(diff.empty(), "the state directory changed:\n" << [&] {
    std::string all;
    for (const std::string& d : diff) all += "  " + d + "\n";
    return all;
  }());

  // Both sessions read back whole; the refused calls changed nothing.
  SessionView earlier = SessionView::Load(ws.home(), first.new_sessions[0]);
  BOOST_TEST(earlier.journal_problems().empty());
  BOOST_TEST(MatchOps(earlier.OpList(), {{OpKind::kModify, "a"}, {OpKind::kDelete, "a"}}) == "");
  SessionView refused = OnlyNewSession(ws, r);
  BOOST_TEST(MatchOps(refused.OpList(), {{OpKind::kSymlink, "h-link"}}) == "");
  BOOST_TEST(SessionStateName(refused.meta().state) == std::string("finished"));
}

}  // namespace
}  // namespace guard::e2e
