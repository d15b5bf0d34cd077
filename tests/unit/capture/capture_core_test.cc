// The capture core (supervisor/capture/capture.h), table-driven: each row is
// a tree, a sequence of calls handed to Capture as a producer would hand
// them (before the call, the call itself made by the test on the real tree,
// its end), the verdict each call must get, and the records the log must
// hold at the end, in order. The log is an in-memory fake
// (fake_capture_log.h) over a real blob store; the tree is a temporary
// directory.
//
// A row's tree: "f NAME=CONTENT", "d NAME", "l NAME=TARGET".
// A row's steps:
//   T VERB ARGS [hold] [held] => VERDICT   thread T hands over a call (Before)
//       VERB: unlink P | rmdir P | mkdir P | creat P | trunc P | chmod P
//             | rename P Q | noreplace P Q | exchange P Q | link P Q
//       hold: the producer can hold it (the tracer); held: it has been held
//       past the limit already.
//       VERDICT: run | watch | settle | wait:T | deny:ERRNO
//   do VERB ARGS     the test makes that call on the tree (the call runs)
//   T after RESULT   the call's result (0, or -errno), as the tracer sees it
//   T returned       T is past its call (a one-stop call: the tree tells)
//   T abandon        T died inside its call
//   T ran ERRNO      the shim's report that its call ran (Capture::Ran)
// Paths are relative to the root; "!P" is a path inside guard's state.
#define BOOST_TEST_MODULE capture_core
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "common/file_io.h"
#include "supervisor/capture/capture.h"
#include "tests/unit/capture/core_under_test.h"

namespace guard {
namespace {

using Action = MutationRequest::Action;

struct Row {
  const char* name;
  std::vector<const char*> tree;
  std::vector<const char*> steps;
  std::vector<const char*> records;
  std::vector<const char*> changed = {};  // root-relative paths noted as changed, if checked
};

struct Fixture : testing::CoreUnderTest {
  Fixture() : CoreUnderTest("guard-capture-core") {}

  void Make(const std::string& spec) {
    const char kind = spec[0];
    std::string rest = spec.substr(2);
    std::string name = rest.substr(0, rest.find('=')), value;
    if (rest.find('=') != std::string::npos) value = rest.substr(rest.find('=') + 1);
    if (kind == 'f') BOOST_REQUIRE(testing::WriteStringToFile(Abs(name), value));
    if (kind == 'd') BOOST_REQUIRE(mkdir(Abs(name).c_str(), 0755) == 0);
    if (kind == 'l') BOOST_REQUIRE(symlink(value.c_str(), Abs(name).c_str()) == 0);
  }

  // The call VERB ARGS as a producer describes it.
  Mutation Describe(pid_t tid, const std::string& verb, const std::string& p, const std::string& q) const {
    return Call(tid, verb, p, q);
  }

  // Makes the call on the tree, as the kernel would.
  void Do(const std::string& verb, const std::string& p, const std::string& q) {
    const std::string a = Abs(p), b = q.empty() ? std::string() : Abs(q);
    int rc = 0;
    if (verb == "unlink") rc = unlink(a.c_str());
    if (verb == "rmdir") rc = rmdir(a.c_str());
    if (verb == "mkdir") rc = mkdir(a.c_str(), 0755);
    if (verb == "creat" || verb == "trunc") rc = testing::WriteStringToFile(a, "new") ? 0 : -1;
    if (verb == "write") rc = testing::WriteStringToFile(a, q) ? 0 : -1;
    if (verb == "chmod") rc = chmod(a.c_str(), 0600);
    if (verb == "rename") rc = rename(a.c_str(), b.c_str());
    if (verb == "noreplace") rc = renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_NOREPLACE);
    if (verb == "exchange") rc = renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE);
    if (verb == "link") rc = link(a.c_str(), b.c_str());
    BOOST_TEST(rc == 0, "do " << verb << " " << p << " " << q << ": " << strerror(errno));
  }

  void Step(const std::string& step) {
    std::istringstream in(step);
    std::string first, verb;
    in >> first;
    if (first == "do") {
      std::string p, q;
      in >> verb >> p >> q;
      return Do(verb, p, q);
    }
    const pid_t tid = std::stoi(first);
    in >> verb;
    if (verb == "after") {
      long result = 0;
      in >> result;
      return capture->After(tid, result);
    }
    if (verb == "returned") return capture->Returned(tid);
    if (verb == "abandon") return capture->Abandon(tid);
    if (verb == "ran") {
      int err = 0;
      in >> err;
      FileState after;
      after.type = FileType::kRegular;
      return capture->Ran(tid, err, after);
    }
    std::vector<std::string> words;
    std::string w, want;
    while (in >> w) {
      if (w == "=>") {
        in >> want;
        break;
      }
      words.push_back(w);
    }
    std::vector<std::string> paths;
    bool hold = false, held = false;
    for (const std::string& x : words) {
      if (x == "hold") {
        hold = true;
      } else if (x == "held") {
        held = true;
      } else {
        paths.push_back(x);
      }
    }
    BOOST_REQUIRE(!paths.empty());
    Mutation m = Describe(tid, verb, paths[0], paths.size() > 1 ? paths[1] : std::string());
    m.holdable = hold;
    if (held) m.held_ns = kHoldLimitNs;
    BOOST_TEST(testing::VerdictWord(capture->Before(m)) == want);
  }
};

void RunRow(const Row& row) {
  BOOST_TEST_CONTEXT(row.name) {
    Fixture f;
    for (const char* spec : row.tree) f.Make(spec);
    for (const char* step : row.steps) {
      BOOST_TEST_CONTEXT(step) { f.Step(step); }
    }
    std::vector<std::string> want(row.records.begin(), row.records.end());
    std::vector<std::string> got = f.log->Lines();
    BOOST_TEST(got == want, boost::test_tools::per_element());
    if (!row.changed.empty()) {
      std::set<std::string> changed(row.changed.begin(), row.changed.end());
      BOOST_TEST(f.log->changed == changed, boost::test_tools::per_element());
    }
  }
}

const Row kRows[] = {
    // --- Holding a call for another thread's call on the same name ---
    // Unit twin of capture_race_test FirstWritersOfOneFileKeepItsContentBeforeThemAll
    // (tracer side): the second first-writer waits, then saves what the first left.
    {"a second writer waits for the first and saves what the first left",
     {"f a=old"},
     {"1 trunc a hold => watch", "2 trunc a hold => wait:1", "do write a one", "1 after 3",
      "2 trunc a hold => watch", "do write a two", "2 after 3"},
     {"modify a <old>", "outcome 1 ok regular", "modify a <one>", "outcome 3 ok regular"}},
    // An unlink saving one file and removing the one a rename just put there.
    {"an unlink waits for a rename in flight onto its name",
     {"f a=A", "f b=B"},
     {"1 rename b a hold => settle", "2 unlink a hold => wait:1", "do rename b a", "1 after 0",
      "2 unlink a hold => settle", "do unlink a", "2 returned"},
     {"rename b a <A>", "outcome 1 ok regular", "delete a <B>", "outcome 3 ok absent"}},
    {"a call below a directory in flight waits for it",
     {"d d", "f d/x=X"},
     {"1 rename d e hold => watch", "2 unlink d/x hold => wait:1", "do rename d e", "1 after 0",
      "2 unlink e/x hold => settle"},
     {"rename d e", "outcome 1 ok directory", "delete e/x <X>"}},
    // Unit twin of capture_race_test AHeldCallDoesNotWaitForAThreadThatWaitsForIt:
    // a call held for the whole limit goes on without waiting.
    {"a call held past the limit is let run",
     {"f a=A"},
     {"1 trunc a hold => watch", "2 unlink a hold held => watch"},
     {"modify a <A>", "delete a <A>"}},
    {"a producer that cannot hold (the shim) is never told to wait",
     {"f a=A"},
     {"1 trunc a hold => watch", "2 unlink a => watch"},
     {"modify a <A>", "delete a <A>"}},
    {"calls on other names do not wait",
     {"f a=A", "f b=B"},
     {"1 trunc a hold => watch", "2 unlink b hold => settle"},
     {"modify a <A>", "delete b <B>"}},

    // --- One stop: the tree tells the outcome only when nothing else came ---
    // Unit twins of one_stop_outcome_test.
    {"a delete nobody followed is learnt from the tree",
     {"f a=A"},
     {"1 unlink a => settle", "do unlink a", "1 returned"},
     {"delete a <A>", "outcome 1 ok absent"},
     {"a"}},
    {"a delete that did not happen leaves no outcome, and its path counts as changed",
     {"f a=A"},
     {"1 unlink a => settle", "1 returned"},
     {"delete a <A>"},
     {"a"}},
    {"a call on the same path in between makes the first's outcome unknown",
     {"f a=A"},
     {"1 unlink a => settle", "do unlink a", "2 creat a => watch", "do creat a", "2 after 3", "1 returned"},
     {"delete a <A>", "create a", "outcome 2 ok regular"},
     {"a"}},
    {"a directory move in between makes the outcome unknown",
     {"f a=A", "d d"},
     {"1 unlink a => settle", "do unlink a", "2 rename d e => watch", "1 returned"},
     {"delete a <A>", "rename d e"}},
    {"a call recorded while another is in flight on its path keeps its exit stop",
     {"f a=A"},
     {"1 trunc a => watch", "2 unlink a => watch"},
     {"modify a <A>", "delete a <A>"}},

    // --- Calls predicted to fail, recorded only if they succeed (predicted_failure_test) ---
    {"a RENAME_NOREPLACE onto a taken name is recorded only once it succeeded",
     {"f a=A", "f b=B"},
     {"1 noreplace a b => watch", "do unlink b", "do noreplace a b", "1 after 0"},
     {"rename a b", "outcome 1 ok regular"}},
    {"a RENAME_NOREPLACE that failed as predicted leaves nothing",
     {"f a=A", "f b=B"},
     {"1 noreplace a b => watch", "1 after -17"},
     {}},
    // Unit twin of predicted_failure_test AnExchangeWithASideMadeMeanwhileIsRecorded:
    // an unlink guard saw fail, let run unheld, ran after another thread
    // had made the name and put a file there, and removed it unrecorded.
    {"an unlink of a missing name holds a creation of it until it has run",
     {},
     {"1 unlink a hold => watch", "2 creat a hold => wait:1", "1 after -2", "2 creat a hold => settle", "do creat a",
      "2 returned"},
     {"create a", "outcome 1 ok regular"}},
    {"an unlink of a missing name that succeeded is recorded, its file not captured",
     {},
     {"1 unlink a hold => watch", "do creat a", "do unlink a", "1 after 0"},
     {"delete a", "outcome 1 ok absent"}},
    {"an rmdir of a file, a truncation and a chmod of a missing name are held in flight",
     {"f f=F"},
     {"1 rmdir f hold => watch", "2 trunc a hold => watch", "3 chmod b hold => watch", "4 unlink f hold => wait:1",
      "1 after -20", "4 unlink f hold => settle", "2 after -2", "3 after -2"},
     {"delete f <F>"}},
    {"an mkdir of a taken name is recorded only if it succeeded",
     {"d a"},
     {"1 mkdir a => watch", "do rmdir a", "do mkdir a", "1 after 0"},
     {"mkdir a", "outcome 1 ok directory"}},

    // --- A producer that missed a stop, a thread that died ---
    {"a call whose end was never reported is left unknown at the next",
     {"f a=A", "f b=B"},
     {"1 trunc a => watch", "1 unlink b => settle"},
     {"modify a <A>", "delete b <B>"},
     {"a"}},
    // Unit twin of durability_kill_inside_call_test.
    {"a thread that died inside its call leaves its paths changed",
     {"f a=A"},
     {"1 trunc a => watch", "1 abandon"},
     {"modify a <A>"},
     {"a"}},
    {"a failed delete records its error and drops its pending blob",
     {"f a=A"},
     {"1 unlink a => settle", "1 after -1"},
     {"delete a <dropped>", "outcome 1 errno=1"}},

    // --- What is refused or left alone ---
    {"a call on guard's state is refused", {}, {"1 creat !x => deny:13"}, {}},
    {"a rename of the root's parent directory holding the state is refused",
     {},
     {"1 rename !store !moved => deny:13"},
     {}},
    {"an open of a missing file without O_CREAT records nothing", {}, {"1 trunc a => run"}, {}},
    {"a chmod is recorded with its before state", {"f a=A"}, {"1 chmod a => settle"}, {"chmod a"}},
    {"an exchange records both sides", {"f a=A", "f b=B"}, {"1 exchange a b => watch"}, {"exchange a b"}},
    {"a link records its source", {"f a=A"}, {"1 link a b => settle"}, {"link a b"}},
};

BOOST_AUTO_TEST_CASE(OrderingAndRecordsTable) {
  for (const Row& row : kRows) RunRow(row);
}

// The shim's kind of producer: its call has run already, and what it saved
// before it comes with it (Mutation::pre). Nothing can be refused: a
// failure to keep something is recorded as such.
BOOST_AUTO_TEST_CASE(ACallReportedAfterItRanIsRecordedWithWhatItsProducerSaved) {
  Fixture f;
  f.Make("f a=old");
  Mutation m = f.Describe(1, "trunc", "a", "");
  m.pre.present = true;
  m.pre.has_content = true;
  m.pre.content = "old";
  m.abs_lstat = KnownLstat::Of(f.Abs("a"));
  f.Do("write", "a", "new");  // the call ran before the report
  Verdict v = f.capture->Before(m);
  BOOST_TEST(v.deny_errno == 0);
  FileState after;
  after.type = FileType::kRegular;
  f.capture->Ran(1, 0, after);
  std::vector<std::string> want = {"modify a <old>", "outcome 1 ok regular"};
  BOOST_TEST(f.log->Lines() == want, boost::test_tools::per_element());
}

// The shim's pre-image of a change in place is a copy in the pending area,
// not a link of the tree's file: the file's next change, reported late (the
// feed behind the writer), is recorded with the shim's lstat, never one
// made at the report. Found with `>>` on a large log under auto: each
// pre-image after the first carried a later size than its content, and
// undo to a mark then took the restored file for changed.
BOOST_AUTO_TEST_CASE(AShimsCopiedPreImageIsNotTakenForALinkOfTheTreesFile) {
  Fixture f;
  f.Make("f a=one");
  auto shim_change = [&](pid_t tid, const std::string& name, const std::string& now) {
    // What the shim does at the first write through an fd: its lstat, a
    // copy of the content into the pending area, then the call.
    Mutation m = f.Describe(tid, "trunc", "a", "");
    m.req.action = Action::kFtruncate;
    m.pre.present = true;
    m.pre.pending = name;
    m.abs_lstat = KnownLstat::Of(f.Abs("a"));
    std::string content;
    BOOST_REQUIRE(ReadFileToString(f.Abs("a"), &content).ok());
    BOOST_REQUIRE(testing::WriteStringToFile(f.log->store()->dir() + "/pending/" + name, content));
    f.Do("write", "a", now);  // the call ran before the report
    return m;
  };
  Mutation first = shim_change(1, "p1", "one two");
  Mutation second = shim_change(1, "p2", "one two three");
  for (Mutation* m : {&first, &second}) {
    BOOST_TEST(f.capture->Before(*m).deny_errno == 0);
    FileState after;
    after.type = FileType::kRegular;
    f.capture->Ran(1, 0, after);
  }
  std::vector<std::string> want = {"modify a <one>", "outcome 1 ok regular", "modify a <one two>",
                                   "outcome 3 ok regular"};
  BOOST_TEST(f.log->Lines() == want, boost::test_tools::per_element());
  BOOST_REQUIRE_EQUAL(f.log->records.size(), 4u);
  BOOST_TEST(f.log->records[0].before.size == 3u);
  BOOST_TEST(f.log->records[2].before.size == 7u, "the second pre-image's size is the shim's lstat's");
}

BOOST_AUTO_TEST_CASE(AJournalThatRefusesAppendsRefusesTheCallUnderBlock) {
  Fixture f;
  f.Make("f a=A");
  f.log->fail_appends = true;
  Verdict v = f.capture->Before(f.Describe(1, "unlink", "a", ""));
  BOOST_TEST(v.deny_errno == EIO);
  BOOST_TEST(f.capture->refused() == 1u);
  BOOST_TEST(!f.capture->InCall(1));
}

// The watch mode's kind of producer: a change already observed.
BOOST_AUTO_TEST_CASE(ObservedChangesAreRecordedAsTheOperationsTheyAmountTo) {
  Fixture f;
  BlobKey k_old, k_new;
  BOOST_REQUIRE(f.log->store()->PutBytes("old", &k_old).ok());
  BOOST_REQUIRE(f.log->store()->PutBytes("new", &k_new).ok());
  auto file = [](const BlobKey& k, uint32_t mode) {
    FileState s;
    s.type = FileType::kRegular;
    s.mode = mode;
    s.size = 3;
    s.blob.kind = BlobRef::Kind::kKey;
    s.blob.key = k;
    return s;
  };
  FileState dir;
  dir.type = FileType::kDirectory;
  dir.mode = 0755;
  const FileState absent;
  struct Case {
    const char* path;
    FileState before, after;
  } cases[] = {
      {"new", absent, file(k_new, 0644)},            // created
      {"mod", file(k_old, 0644), file(k_new, 0644)},  // rewritten
      {"gone", file(k_old, 0644), absent},           // deleted
      {"mode", file(k_old, 0644), file(k_old, 0600)},  // chmod alone
      {"kind", file(k_old, 0644), dir},              // a file become a directory
      {"same", dir, dir},                            // nothing to record
  };
  for (const Case& c : cases) {
    ObservedChange change{f.Abs(c.path), "", c.before, c.after};
    BOOST_TEST(f.capture->Observed(change).ok());
  }
  BOOST_TEST(f.capture->Observed(ObservedChange{f.Abs("!x"), "", absent, file(k_new, 0644)}).ok());
  // Each operation, its outcome, and the new state as the path's post-image.
  std::vector<std::string> want = {
      "create new",        "outcome 1 ok regular",    "final new",
      "modify mod <old>",  "outcome 4 ok regular",    "final mod",
      "delete gone <old>", "outcome 7 ok absent",     "final gone",
      "chmod mode <old>",  "outcome 10 ok regular",   "final mode",
      "delete kind <old>", "outcome 13 ok absent",    "final kind",
      "mkdir kind",        "outcome 16 ok directory", "final kind"};
  BOOST_TEST(f.log->Lines() == want, boost::test_tools::per_element());
  for (const Record& r : f.log->records) {
    BOOST_TEST((r.flags & kObserved) != 0u);
    BOOST_TEST((r.flags & kNotCaptured) == 0u);
    if (r.kind == OpKind::kFinal) BOOST_TEST((r.flags & kPostImage) != 0u);
  }
  // A pre-image the producer does not hold (a file the baseline kept by
  // name only) is flagged, and counted.
  FileState by_name = file(k_old, 0644);
  by_name.blob = BlobRef();
  ObservedChange unheld{f.Abs("big"), "", by_name, file(k_new, 0644)};
  unheld.before_not_captured = true;
  BOOST_TEST(f.capture->Observed(unheld).ok());
  BOOST_TEST((f.log->records[f.log->records.size() - 3].flags & kNotCaptured) != 0u);
  BOOST_TEST(f.capture->not_captured() == 1u);
  std::set<std::string> changed = {"new", "mod", "gone", "mode", "kind", "big"};
  BOOST_TEST(f.log->changed == changed, boost::test_tools::per_element());
}

}  // namespace
}  // namespace guard
