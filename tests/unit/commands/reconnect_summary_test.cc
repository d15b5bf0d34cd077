// The summary printed for a session that ended abnormally: every name in it
// reaches the terminal escaped, so that no name can pass for another.
#define BOOST_TEST_MODULE reconnect_summary
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <string>
#include <vector>

#include "supervisor/commands/reconnect_summary.h"

namespace guard {
namespace {

SessionMeta KilledSession(const std::string& root, std::vector<std::string> argv) {
  SessionMeta m;
  m.id = "20260101T000000Z-0123456789abcdef";
  m.root = root;
  m.argv = std::move(argv);
  m.state = SessionState::kKilled;
  m.signal = SIGKILL;
  m.started_ns = 1767225600000000000;
  m.ended_ns = m.started_ns + 2000000000;
  return m;
}

// A session that created `path` (root-relative) and was then killed.
SessionHistory CreatedOne(SessionMeta meta, const std::string& path) {
  Record create;
  create.kind = OpKind::kCreate;
  create.seq = 1;
  create.path = path;
  create.before.type = FileType::kAbsent;
  Record final_state;
  final_state.kind = OpKind::kFinal;
  final_state.path = path;
  final_state.after.type = FileType::kRegular;
  final_state.after.mode = 0644;
  return SessionHistory::FromRecords(std::move(meta), {create, final_state});
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

BOOST_AUTO_TEST_CASE(ABackslashInAChangedNameIsEscaped) {
  // "a\x0a" spelled with a real backslash, and "a" followed by a newline:
  // printed alike, a reader could not tell which file changed.
  const std::string backslashed = "a\\x0a";
  std::string text = ReconnectSummary(CreatedOne(KilledSession("/r", {"sh"}), backslashed));
  BOOST_TEST(Has(text, "changed: a\\\\x0a"), text);
  text = ReconnectSummary(CreatedOne(KilledSession("/r", {"sh"}), "a\n"));
  BOOST_TEST(Has(text, "changed: a\\x0a"), text);
  BOOST_TEST(!Has(text, "changed: a\\\\x0a"), text);
}

BOOST_AUTO_TEST_CASE(TheCommandAndTheRootAreEscapedToo) {
  const std::string text =
      ReconnectSummary(CreatedOne(KilledSession("/r\x1b[2J", {"sh", "-c", "echo \\e\x07"}), "f"));
  BOOST_TEST(!Has(text, "\x1b"), text);
  BOOST_TEST(!Has(text, "\x07"), text);
  BOOST_TEST(Has(text, "in /r\\x1b[2J ended"), text);
  BOOST_TEST(Has(text, "sh -c echo \\\\e\\x07"), text);
}

}  // namespace
}  // namespace guard
