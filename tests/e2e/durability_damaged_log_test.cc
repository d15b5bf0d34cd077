// Damaged logs through every command (docs/durability.md, "Damaged logs").
// A real session changes a few hundred files (appends, overwrites, deletes,
// chmods, renames, truncations, creations), so that its journal spans
// several 32 KiB blocks. Then one of:
//   (a) the journal is cut in the middle of a record,
//   (b) one bit is flipped in a record in the middle of the journal's first
//       block (the reader drops the rest of that block; the blocks after it,
//       final states included, must still be read),
//   (c) one blob object file is deleted from the store,
//   (d) guard is killed at the end of the session, before it could seal it,
//       and a bit is flipped in its journal before `guard recover`,
//   (e) guard is killed so, and its journal cut inside its last record, as an
//       append cut short by a power loss would leave it (a torn tail),
// and sessions, show, show --json, diff, export (patch and tar), status,
// undo --dry-run, undo --yes, replay --yes and recover run in turn on it.
// None may crash (exit code below 128, no sanitizer report) or hang (20 s),
// and undo must restore every path whose pre-image survived: those whose
// records lie outside the damage, all but the blob's path in (c). (A chmod
// or a rename copies no content: the content of its pre-image is the final
// state recorded when the session ended, so its path needs that record too.)
// The commands that need the damaged part must say so on stderr: the
// journal offset of the damage, or, for a missing blob, the exact path that
// could not be shown or restored.
#define BOOST_TEST_MODULE durability_damaged_log
#include <signal.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "common/blob_key.h"
#include "common/ring_format.h"
#include "common/ring_segment.h"
#include "common/session_meta.h"
#include "tests/e2e/support/durability_checks.h"
#include "tests/e2e/support/journal_damage.h"
#include "tests/e2e/support/killed_session.h"
#include "tests/e2e/support/process_tree.h"
#include "tests/e2e/support/random_workload.h"
#include "tests/e2e/support/session_view.h"
#include "tests/e2e/support/tree_snapshot.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

// The checks need a journal of more than two 32 KiB blocks: (b) and (d)
// damage its first block and need records after it. The workload makes
// more than six, even before a killed guard's session gets its final states
// (about 6.5 then, 11 sealed), and none of that depends on pid values: a pid
// takes 1 to 3 bytes as a varint in each record, at most a few KiB over the
// whole journal, where the margin is four blocks. The long directory names
// make every path, so every record, long.
constexpr int kFiles = 240;
constexpr uint64_t kNeededBytes = 2 * 32768;
constexpr uint64_t kWorkloadBytesAtLeast = kNeededBytes + 4 * 32768;
constexpr int kTimeoutSeconds = 20;

// src/ddd...d/eee...e/fff...f: three names of 200 bytes (a name may have 255).
std::string LongDir() {
  return "src/" + std::string(200, 'd') + "/" + std::string(200, 'e') + "/" + std::string(200, 'f');
}

std::string FileName(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "/f%03d.txt", i);
  return LongDir() + buf;
}

// One change per file (kFiles of them), chosen by i % 7: each path is named
// by one operation only, so its pre-image lives in one operation record
// (and, for a chmod or a rename, one final state).
const char* kSessionBody = R"(
import os, sys, time
for i in range(N):
    p = D + "/f%03d.txt" % i
    k = i % 7
    if k == 0:
        open(p, "ab").write(b"appended %d\n" % i)
    elif k == 1:
        open(p, "wb").write(b"overwritten %d\n" % i)
    elif k == 2:
        os.unlink(p)
    elif k == 3:
        os.chmod(p, 0o600)
    elif k == 4:
        os.rename(p, D + "/g%03d.txt" % i)
    elif k == 5:
        os.truncate(p, 3)
    else:
        open(D + "/new%03d.txt" % i, "wb").write(b"created %d\n" % i)
if len(sys.argv) > 1:  # then wait to be killed
    open(sys.argv[1], "w").close()
    time.sleep(600)
)";

std::string SessionProgram() {
  return "D = '" + LongDir() + "'\nN = " + std::to_string(kFiles) + "\n" + kSessionBody;
}

struct Command {
  std::string name;
  std::vector<std::string> args;  // "ID" is replaced by the session id
};

std::vector<Command> Commands() {
  return {
      {"sessions", {"sessions"}},
      {"show", {"show", "--session", "ID"}},
      {"show --json", {"show", "--json", "--session", "ID"}},
      {"diff", {"diff", "--color", "never", "--session", "ID"}},
      {"export patch", {"export", "--format", "patch", "--session", "ID"}},
      {"export tar", {"export", "--format", "tar", "--session", "ID"}},
      {"status", {"status"}},
      {"undo --dry-run", {"undo", "--dry-run", "--session", "ID"}},
      {"undo --yes", {"undo", "--yes", "--session", "ID"}},
      {"replay --yes", {"replay", "--yes", "--session", "ID"}},
      {"recover", {"recover"}},
  };
}

// Under the shim the program's calls reach the journal when the supervisor
// drains the ring, a little behind the program. The checks below read the
// journal as it was when guard was killed, and expect what recovery adds
// to come from the tree, not from records that were still in the ring: so
// guard is killed only once the ring is empty (head at the tail), however
// fast or slow the machine. Without a ring (--mode trace), at once.
void WaitForTheRingToDrain(const Workspace& ws) {
  std::vector<std::string> ids = ws.SessionIds();
  if (ids.size() != 1) return;
  SessionMeta meta;
  if (!LoadSessionMeta(ws.home() + "/sessions/" + ids[0] + "/meta.json", &meta).ok() || meta.ring.empty()) return;
  RingSegment segment;
  if (!RingSegment::Open(meta.ring, &segment).ok()) return;
  const auto* h = static_cast<const guard_ring_header*>(segment.base());
  for (int i = 0; i < 60000; ++i) {
    if (GUARD_RING_TAIL_POSITION(__atomic_load_n(&h->tail, __ATOMIC_ACQUIRE)) ==
        __atomic_load_n(&h->head, __ATOMIC_ACQUIRE)) {
      return;
    }
    usleep(1000);
  }
}

// A session recorded on a fresh tree, with everything the checks need to
// know about it before it is damaged.
struct DamagedSession {
  Workspace ws;
  std::string id;
  std::string journal;  // its path
  TreeSnapshot before, stopped;
  std::vector<Record> records;         // as read before the damage
  std::vector<RecordSpan> spans;       // records[i] lies at spans[i]
  // root-relative path -> indices of the records its pre-image needs: the
  // operation's, and for a chmod or a rename the final state of the path
  // that holds the content when the session ends.
  std::map<std::string, std::set<size_t>> pre_image_records;
  // For a chmod or a rename, the records that may hold the content it kept
  // (the path's final state, its post-images): one surviving is enough.
  std::map<std::string, std::set<size_t>> content_records;

  // kill_guard: guard is killed once the program has made its changes, and
  // the session is left for recovery.
  explicit DamagedSession(bool kill_guard = false) {
    for (size_t slash = 0; (slash = LongDir().find('/', slash + 1)) != std::string::npos;) {
      ws.Mkdir(LongDir().substr(0, slash));
    }
    ws.Mkdir(LongDir());
    for (int i = 0; i < kFiles; ++i) {
      Rng rng(static_cast<uint64_t>(i) + 77);
      std::string content = "file " + std::to_string(i) + "\n";
      for (size_t n = 40 + rng.Below(200); n > 0; --n) content += "abcdefghijklmnopqrstuvwxyz \n"[rng.Below(28)];
      ws.Write(FileName(i), content + "\n", 0644);
    }
    before = SnapshotTree(ws.tree());
    GuardRun run;
    run.command = {"python3", "-c", SessionProgram()};
    run.env["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin";
    if (kill_guard) {
      std::string ready = ws.outside() + "/ready";
      run.command.push_back(ready);
      ChildProcess guard_proc(GuardSpec(ws, run));
      for (int i = 0; i < 60000 && !PathExists(ready); ++i) usleep(1000);
      WaitForTheRingToDrain(ws);
      kill(guard_proc.pid(), SIGKILL);
      ProcessResult r = guard_proc.Wait();
      if (!PathExists(ready) || r.exit_code != 128 + SIGKILL || ws.SessionIds().size() != 1) {
        throw std::runtime_error("the session to kill failed: " + DescribeResult(r));
      }
      // The agent dies with guard; wait until it has.
      WaitGone(ProcessesWithEnv("GUARD_SESSION", ws.SessionIds()[0]), 5000);
      id = ws.SessionIds()[0];
      WaitPastKeeperStamp(ws, id);  // and its supervisor, which may still be exiting
    } else {
      GuardResult r = RunGuard(ws, run);
      if (r.exit_code != 0 || r.new_sessions.size() != 1) {
        throw std::runtime_error("the session to damage failed: " + DescribeResult(r));
      }
      id = r.new_sessions[0];
    }
    stopped = SnapshotTree(ws.tree());
    journal = ws.home() + "/sessions/" + id + "/journal";
    uint64_t size = std::filesystem::file_size(journal);
    // Not a requirement (the checks need kNeededBytes): a warning that the
    // workload no longer leaves its intended margin.
    BOOST_WARN_MESSAGE(size >= kWorkloadBytesAtLeast, "the workload's journal is only " << size << " bytes");
    BOOST_TEST_MESSAGE("journal of " << size << " bytes");
    SessionView view = SessionView::Load(ws.home(), id);
    records = view.records();
    spans = JournalRecordSpans(ReadFile(journal));
    if (spans.size() != records.size()) {
      throw std::runtime_error("the journal has " + std::to_string(spans.size()) + " records by its framing, " +
                               std::to_string(records.size()) + " by guard's reader");
    }
    // Every state of a path recorded after its operation: the seal's final
    // state, and the post-images the work saver took while the session ran
    // (whichever of them survives the damage holds the content).
    std::map<std::string, std::set<size_t>> finals_of;
    for (size_t i = 0; i < records.size(); ++i) {
      if (records[i].kind == OpKind::kFinal) finals_of[records[i].path].insert(i);
    }
    for (size_t i = 0; i < records.size(); ++i) {
      const Record& rec = records[i];
      if (!IsOperation(rec.kind) || (rec.flags & kOutsideRoot)) continue;
      std::set<size_t> needs = {i};
      const std::string& content_at = rec.kind == OpKind::kRename ? rec.path2 : rec.path;
      // (A killed guard's session gets its final states from recovery.)
      bool content_in_final = rec.kind == OpKind::kChmod || rec.kind == OpKind::kRename;
      std::set<size_t> content;
      if (content_in_final && finals_of.count(content_at)) {
        for (size_t f : finals_of.at(content_at)) {
          if (f > i) content.insert(f);
        }
      }
      pre_image_records.emplace(rec.path, needs);
      if (!rec.path2.empty()) pre_image_records.emplace(rec.path2, needs);
      if (!content.empty()) {
        content_records.emplace(rec.path, content);
        if (!rec.path2.empty()) content_records.emplace(rec.path2, content);
      }
    }
  }

  // Every path of either snapshot.
  std::set<std::string> AllPaths() const {
    std::set<std::string> out;
    for (const auto& [p, e] : before.entries) out.insert(p);
    for (const auto& [p, e] : stopped.entries) out.insert(p);
    return out;
  }
};

struct CommandRun {
  Command command;
  ProcessResult result;
};

// Every command run on a damaged session, in order, with the tree just
// after undo --yes and just after replay --yes.
struct CommandRuns {
  std::vector<CommandRun> runs;
  TreeSnapshot after_undo, after_replay;

  const ProcessResult& Of(const std::string& name) const {
    for (const CommandRun& r : runs) {
      if (r.command.name == name) return r.result;
    }
    throw std::logic_error("no command " + name);
  }
};

CommandRuns RunEveryCommand(const DamagedSession& s) {
  CommandRuns out;
  for (Command c : Commands()) {
    for (std::string& a : c.args) {
      if (a == "ID") a = s.id;
    }
    ProcessResult r = RunGuardWithin(s.ws, c.args, kTimeoutSeconds);
    if (c.name == "undo --yes") out.after_undo = SnapshotTree(s.ws.tree());
    if (c.name == "replay --yes") out.after_replay = SnapshotTree(s.ws.tree());
    out.runs.push_back({c, r});
  }
  return out;
}

// No crash, no hang, no sanitizer report; and a table row for the report.
void ExpectSurvived(const std::string& damage, const CommandRuns& runs) {
  std::ostringstream table;
  for (const CommandRun& r : runs.runs) {
    const ProcessResult& p = r.result;
    bool sanitizer = Contains(p.err, "Sanitizer") || Contains(p.err, "runtime error:");
    BOOST_TEST(!p.timed_out, damage << ": guard " << r.command.name << " hung: " << DescribeResult(p));
    BOOST_TEST(p.exit_code >= 0);
    BOOST_TEST(p.exit_code < 128, damage << ": guard " << r.command.name << " crashed: " << DescribeResult(p));
    BOOST_TEST(!sanitizer, damage << ": guard " << r.command.name << ": " << DescribeResult(p));
    std::vector<std::string> err = Lines(p.err);
    table << "  " << damage << " | " << r.command.name << " | exit " << p.exit_code << (p.timed_out ? " TIMEOUT" : "")
          << " | " << err.size() << " stderr line(s)" << (err.empty() ? "" : ": " + Printable(err[0].substr(0, 160)))
          << "\n";
  }
  BOOST_TEST_MESSAGE(table.str());
  std::printf("%s", table.str().c_str());
  std::fflush(stdout);
}

// After undo --yes: a path whose pre-image survived is as before the
// session; one whose record was lost is as the session left it (undo could
// not know it); `unrestorable` paths too.
void ExpectUndoRestoredWhatSurvived(const DamagedSession& s, const CommandRuns& runs,
                                    const std::set<size_t>& lost_records, const std::set<std::string>& unrestorable) {
  const TreeSnapshot& after_undo = runs.after_undo;
  const ProcessResult& undo = runs.Of("undo --yes");
  size_t restored = 0, kept = 0;
  std::string wrong;
  for (const std::string& p : s.AllPaths()) {
    auto op = s.pre_image_records.find(p);
    bool intact = !unrestorable.count(p);
    if (op != s.pre_image_records.end()) {
      for (size_t i : op->second) intact = intact && !lost_records.count(i);
    }
    if (auto c = s.content_records.find(p); c != s.content_records.end()) {
      bool any = false;
      for (size_t i : c->second) any = any || !lost_records.count(i);
      intact = intact && any;
    }
    const TreeSnapshot& want = intact ? s.before : s.stopped;
    const TreeEntry* w = want.Find(p);
    const TreeEntry* a = after_undo.Find(p);
    bool same = (w == nullptr && a == nullptr) || (w != nullptr && a != nullptr && *w == *a);
    if (!same) {
      wrong += "    " + Printable(p) + ": want " + (w ? Describe(*w) : std::string("absent")) + " (" +
               (intact ? "pre-image intact" : "pre-image lost") + "), have " + (a ? Describe(*a) : "absent") + "\n";
    }
    if (op != s.pre_image_records.end()) (intact ? restored : kept) += 1;
  }
  BOOST_TEST(wrong.empty(), "undo --yes left these paths wrong:\n" << wrong << DescribeResult(undo));
  BOOST_TEST_MESSAGE("undo: " << restored << " changed paths with an intact pre-image, " << kept
                              << " whose pre-image was lost");
}

// After replay --yes (which follows the undo): every path is as the session
// left it, or replay named it on stderr as one it could not restore.
void ExpectReplayRestoredOrNamed(const DamagedSession& s, const CommandRuns& runs) {
  const ProcessResult& replay = runs.Of("replay --yes");
  BOOST_TEST(!replay.timed_out);
  for (const std::string& d : DiffSnapshots(s.stopped, runs.after_replay)) {
    std::string path = d.substr(0, d.find(':'));
    BOOST_TEST(Contains(replay.err, path), "replay neither restored nor named " << d << "\n" << DescribeResult(replay));
  }
}

// Whether some line of `err` reports damage to the journal.
bool ReportsJournalDamage(const std::string& err, const std::string& what) {
  for (const std::string& line : Lines(err)) {
    if (Contains(line, "journal") || Contains(line, "offset")) {
      if (Contains(line, what)) return true;
    }
  }
  return false;
}

// The records whose bytes intersect [from, to).
std::set<size_t> RecordsIn(const DamagedSession& s, uint64_t from, uint64_t to) {
  std::set<size_t> out;
  for (size_t i = 0; i < s.spans.size(); ++i) {
    if (s.spans[i].begin < to && s.spans[i].end > from) out.insert(i);
  }
  return out;
}

// The index of the operation record (a creation excepted: it has no
// pre-image worth damaging) that starts nearest to file offset `target`.
size_t OperationNear(const DamagedSession& s, uint64_t target) {
  size_t best = 0;
  uint64_t best_distance = UINT64_MAX;
  for (size_t i = 0; i < s.records.size(); ++i) {
    if (!IsOperation(s.records[i].kind) || s.records[i].kind == OpKind::kCreate) continue;
    uint64_t d = s.spans[i].begin > target ? s.spans[i].begin - target : target - s.spans[i].begin;
    if (d < best_distance) best = i, best_distance = d;
  }
  return best;
}

// The commands that read the journal: the review commands, and undo and replay.
const std::vector<std::string> kReviewCommands = {"show", "show --json", "diff", "export patch", "export tar"};
const std::vector<std::string> kRestoreCommands = {"undo --dry-run", "undo --yes", "replay --yes"};

void ExpectEachReportsJournalDamage(const CommandRuns& runs, const std::vector<std::string>& commands,
                                    const std::vector<std::string>& any_of, const std::string& what) {
  for (const std::string& name : commands) {
    const ProcessResult& r = runs.Of(name);
    bool said = false;
    for (const std::string& w : any_of) said = said || ReportsJournalDamage(r.err, w);
    BOOST_TEST(said, "guard " << name << " did not report " << what << ":\n" << r.err.substr(0, 2000));
  }
}

// (a) ------------------------------------------------------------------------

struct TruncatedJournal {
  DamagedSession s;
  size_t cut_record = 0;
  uint64_t cut_at = 0;
  CommandRuns runs;

  TruncatedJournal() {
    uint64_t size = std::filesystem::file_size(s.journal);
    BOOST_REQUIRE_MESSAGE(size > kNeededBytes, "the journal is only " << size << " bytes");
    cut_record = OperationNear(s, size / 2);
    const RecordSpan& span = s.spans[cut_record];
    cut_at = span.begin + (span.end - span.begin) / 2;
    BOOST_TEST_MESSAGE("journal of " << size << " bytes cut at " << cut_at << ", inside record " << cut_record
                                     << " [" << span.begin << ", " << span.end << ")");
    TruncateFileTo(s.journal, cut_at);
    runs = RunEveryCommand(s);
  }
  std::set<size_t> Lost() const {
    std::set<size_t> lost;
    for (size_t i = cut_record; i < s.spans.size(); ++i) lost.insert(i);
    return lost;
  }
};

// Each damaged session is made once and shared by the test cases on it.
const TruncatedJournal& Truncated() {
  static TruncatedJournal t;
  return t;
}

BOOST_AUTO_TEST_CASE(EveryCommandSurvivesAJournalCutInTheMiddleOfARecord) {
  ExpectSurvived("truncated journal", Truncated().runs);
}

// Undo of a rename whose source it cannot restore (the journal lost the
// final state that held its content) must keep the destination, the only
// copy left. (It once removed it: src/f004.txt was renamed to src/g004.txt,
// and after the undo neither existed.) By hand:
//   echo precious > a.txt; guard -- mv a.txt b.txt
//   truncate -s 240 $GUARD_HOME/sessions/ID/journal   # inside the final record of b.txt
//   guard undo --yes --session ID                     # removes b.txt, cannot create a.txt
BOOST_AUTO_TEST_CASE(UndoAfterAJournalCutRestoresWhatSurvivedAndDestroysNothing) {
  const TruncatedJournal& t = Truncated();
  ExpectUndoRestoredWhatSurvived(t.s, t.runs, t.Lost(), {});
}

BOOST_AUTO_TEST_CASE(ReplayAfterAJournalCutRestoresOrNamesEveryPath) {
  ExpectReplayRestoredOrNamed(Truncated().s, Truncated().runs);
}

// A cut is a torn tail to the journal's reader (docs/format.md, Part I §3),
// but this session was sealed: meta.json counts the operations it recorded,
// and the journal now holds fewer.
BOOST_AUTO_TEST_CASE(ReviewCommandsSayThatAJournalCutShortLostOperations) {
  ExpectEachReportsJournalDamage(Truncated().runs, kReviewCommands, {"operations", "offset"},
                                 "that the journal lost operations");
}

// Undo and replay say that the journal lost operations, as show, diff and
// export do ("the journal holds 194 of the 240 operations recorded"): the
// paths they cannot restore are not all, those whose every record was lost
// cannot be named.
BOOST_AUTO_TEST_CASE(UndoAndReplaySayThatAJournalCutShortLostOperations) {
  ExpectEachReportsJournalDamage(Truncated().runs, kRestoreCommands, {"operations", "offset"},
                                 "that the journal lost operations");
}

// (b) ------------------------------------------------------------------------

struct FlippedJournal {
  DamagedSession s;
  size_t hit_record = 0;
  uint64_t flipped_at = 0;
  std::set<size_t> lost;
  CommandRuns runs;

  FlippedJournal() {
    uint64_t size = std::filesystem::file_size(s.journal);
    BOOST_REQUIRE_MESSAGE(size > kNeededBytes, "the journal is only " << size << " bytes");
    // In the middle of the first block: the records of the blocks after it,
    // the final states among them, must still be read.
    hit_record = OperationNear(s, 16 + 32768 / 2);
    const RecordSpan& span = s.spans[hit_record];
    flipped_at = span.begin + 11 + (span.end - span.begin - 11) / 2;  // inside the payload
    // The reader drops the rest of the block: it cannot trust the length.
    auto [block_begin, block_end] = BlockAround(span.begin);
    (void)block_begin;
    lost = RecordsIn(s, span.begin, block_end);
    BOOST_REQUIRE_MESSAGE(s.spans.back().begin > block_end, "nothing follows the damaged block");
    BOOST_TEST_MESSAGE("journal of " << size << " bytes: bit 3 flipped at " << flipped_at << ", inside record "
                                     << hit_record << " [" << span.begin << ", " << span.end << "); "
                                     << lost.size() << " records up to " << block_end << " lost");
    FlipBit(s.journal, flipped_at, 3);
    runs = RunEveryCommand(s);
  }
};

const FlippedJournal& Flipped() {
  static FlippedJournal f;
  return f;
}

BOOST_AUTO_TEST_CASE(EveryCommandSurvivesABitFlippedInTheMiddleOfTheJournal) {
  ExpectSurvived("flipped bit", Flipped().runs);
}

BOOST_AUTO_TEST_CASE(UndoAfterABitFlipRestoresEveryPathWhoseRecordsSurvived) {
  ExpectUndoRestoredWhatSurvived(Flipped().s, Flipped().runs, Flipped().lost, {});
}

BOOST_AUTO_TEST_CASE(ReplayAfterABitFlipRestoresOrNamesEveryPath) {
  ExpectReplayRestoredOrNamed(Flipped().s, Flipped().runs);
}

BOOST_AUTO_TEST_CASE(CommandsReadingAJournalWithAFlippedBitReportTheOffset) {
  const FlippedJournal& f = Flipped();
  std::string at = "offset " + std::to_string(f.s.spans[f.hit_record].begin);
  std::vector<std::string> readers = kReviewCommands;
  readers.insert(readers.end(), kRestoreCommands.begin(), kRestoreCommands.end());
  ExpectEachReportsJournalDamage(f.runs, readers, {at}, "the damage at " + at);
}

// (c) ------------------------------------------------------------------------

struct MissingBlob {
  DamagedSession s;
  std::string victim;  // the path whose pre-image was deleted
  std::string object;  // store/objects/...
  CommandRuns runs;

  MissingBlob() {
    // An overwritten file (i % 7 == 1): its pre-image is only in the store.
    victim = FileName(8);
    size_t i = *s.pre_image_records.at(victim).begin();
    const Record& rec = s.records[i];
    BOOST_REQUIRE(rec.kind == OpKind::kModify);
    // The tracer stores the content at once (a key); the shim (--mode
    // auto) copies it into pending/, and the seal resolves it to a key.
    BlobKey key = rec.before.blob.key;
    if (rec.before.blob.kind == BlobRef::Kind::kPending) {
      bool resolved = false;
      for (const Record& r : s.records) {
        if (r.kind == OpKind::kBlobResolved && r.pending == rec.before.blob.pending) key = r.key, resolved = true;
      }
      BOOST_REQUIRE_MESSAGE(resolved, "pending pre-image " << rec.before.blob.pending << " never resolved");
    } else {
      BOOST_REQUIRE(rec.before.blob.kind == BlobRef::Kind::kKey);
    }
    std::string hex = key.Hex();
    for (const std::string& o : StoreObjects(s.ws.home())) {
      if (Contains(o, hex)) object = s.ws.home() + "/store/objects/" + o;
    }
    BOOST_REQUIRE_MESSAGE(!object.empty(), "no object file for key " << hex);
    BOOST_TEST_MESSAGE("deleting " << object << ", the pre-image of " << victim);
    std::filesystem::remove(object);
    runs = RunEveryCommand(s);
  }
};

const MissingBlob& Missing() {
  static MissingBlob m;
  return m;
}

BOOST_AUTO_TEST_CASE(EveryCommandSurvivesAMissingBlob) { ExpectSurvived("missing blob", Missing().runs); }

BOOST_AUTO_TEST_CASE(UndoRestoresEveryPathButTheOneWhoseBlobIsMissingAndExits1) {
  const MissingBlob& m = Missing();
  ExpectUndoRestoredWhatSurvived(m.s, m.runs, {}, {m.victim});
  const ProcessResult& undo = m.runs.Of("undo --yes");
  BOOST_TEST(undo.exit_code == 1, "undo should exit 1 when a path could not be restored: " << DescribeResult(undo));
}

BOOST_AUTO_TEST_CASE(ReplayAfterAMissingBlobRestoresOrNamesEveryPath) {
  ExpectReplayRestoredOrNamed(Missing().s, Missing().runs);
}

BOOST_AUTO_TEST_CASE(UndoDiffAndPatchExportNameThePathOfTheMissingBlob) {
  const MissingBlob& m = Missing();
  for (const std::string name : {"diff", "export patch", "undo --yes"}) {
    const ProcessResult& r = m.runs.Of(name);
    bool named = false;
    for (const std::string& line : Lines(r.err)) named = named || Contains(line, m.victim);
    BOOST_TEST(named, "guard " << name << " did not name " << m.victim << " on stderr:\n" << r.err.substr(0, 2000));
  }
  // Exactly that path, and no other, is reported as not restored.
  const ProcessResult& undo = m.runs.Of("undo --yes");
  for (const std::string& line : Lines(undo.err)) {
    if (Contains(line, "not restored") || Contains(line, "could not") || Contains(line, "cannot")) {
      BOOST_TEST(Contains(line, m.victim), "undo reported another path: " << line);
    }
  }
}

// `undo --dry-run` warns about the path whose pre-image blob is missing, as
// diff and export do, instead of listing it as "restore src/f008.txt" and
// leaving the real undo to fail on it.
BOOST_AUTO_TEST_CASE(UndoDryRunWarnsThatThePathOfTheMissingBlobCannotBeRestored) {
  const MissingBlob& m = Missing();
  const ProcessResult& r = m.runs.Of("undo --dry-run");
  bool named = false;
  for (const std::string& line : Lines(r.err)) named = named || Contains(line, m.victim);
  BOOST_TEST(named, "undo --dry-run did not warn about " << m.victim << ":\n" << DescribeResult(r));
}

// (d) ------------------------------------------------------------------------

struct DamagedOrphan {
  DamagedSession s{/*kill_guard=*/true};
  size_t hit_record = 0;
  std::set<size_t> lost;
  CommandRuns runs;

  DamagedOrphan() {
    hit_record = OperationNear(s, 16 + 32768 / 2);
    const RecordSpan& span = s.spans[hit_record];
    lost = RecordsIn(s, span.begin, BlockAround(span.begin).second);
    BOOST_REQUIRE_MESSAGE(s.spans.back().begin > BlockAround(span.begin).second, "nothing follows the damaged block");
    BOOST_TEST_MESSAGE("killed guard's journal: bit 5 flipped inside record " << hit_record << " at "
                                                                             << span.begin + 20);
    FlipBit(s.journal, span.begin + 20, 5);
    // recover first, then the rest in the usual order.
    GuardResult rec = RunGuardWithin(s.ws, {"recover"}, kTimeoutSeconds);
    runs = RunEveryCommand(s);
    runs.runs.insert(runs.runs.begin(), CommandRun{{"recover (first)", {"recover"}}, rec});
  }
};

const DamagedOrphan& Orphan() {
  static DamagedOrphan o;
  return o;
}

BOOST_AUTO_TEST_CASE(EveryCommandSurvivesTheDamagedJournalOfAKilledGuard) {
  ExpectSurvived("killed guard, flipped bit", Orphan().runs);
}

BOOST_AUTO_TEST_CASE(RecoverCompletesTheSessionAndReportsTheDamageWithItsOffset) {
  const DamagedOrphan& o = Orphan();
  const ProcessResult& rec = o.runs.Of("recover (first)");
  BOOST_TEST(rec.exit_code == 0, DescribeResult(rec));
  BOOST_TEST(Contains(rec.err, "recovered session " + o.s.id), DescribeResult(rec));
  std::string at = "offset " + std::to_string(o.s.spans[o.hit_record].begin);
  BOOST_TEST(ReportsJournalDamage(rec.err, at), "recover did not report the damage at " << at << ":\n" << rec.err);
  BOOST_TEST(SessionStateOf(o.s.ws, o.s.id) == "recovered");
}

BOOST_AUTO_TEST_CASE(UndoOfTheRecoveredSessionRestoresEveryPathWhoseRecordsSurvived) {
  ExpectUndoRestoredWhatSurvived(Orphan().s, Orphan().runs, Orphan().lost, {});
}

BOOST_AUTO_TEST_CASE(ReplayOfTheRecoveredSessionRestoresOrNamesEveryPath) {
  ExpectReplayRestoredOrNamed(Orphan().s, Orphan().runs);
}

// (e) ------------------------------------------------------------------------

struct TornOrphan {
  DamagedSession s{/*kill_guard=*/true};
  uint64_t torn_bytes = 0;
  CommandRuns runs;

  TornOrphan() {
    const RecordSpan& last = s.spans.back();
    uint64_t cut = last.begin + (last.end - last.begin) / 2;
    torn_bytes = cut - last.begin;
    BOOST_TEST_MESSAGE("killed guard's journal cut at " << cut << ", inside its last record [" << last.begin << ", "
                                                          << last.end << ")");
    TruncateFileTo(s.journal, cut);
    GuardResult rec = RunGuardWithin(s.ws, {"recover"}, kTimeoutSeconds);
    runs = RunEveryCommand(s);
    runs.runs.insert(runs.runs.begin(), CommandRun{{"recover (first)", {"recover"}}, rec});
  }
  std::set<size_t> Lost() const { return {s.spans.size() - 1}; }
};

const TornOrphan& Torn() {
  static TornOrphan t;
  return t;
}

BOOST_AUTO_TEST_CASE(EveryCommandSurvivesATornTailLeftByAKilledGuard) {
  ExpectSurvived("killed guard, torn tail", Torn().runs);
}

BOOST_AUTO_TEST_CASE(RecoverCutsTheTornTailAndSaysHowManyBytesItDropped) {
  const TornOrphan& t = Torn();
  const ProcessResult& rec = t.runs.Of("recover (first)");
  BOOST_TEST(rec.exit_code == 0, DescribeResult(rec));
  BOOST_TEST(Contains(rec.err, "recovered session " + t.s.id + ", whose guard had stopped"), rec.err);
  std::string want = "its journal's last write was cut short: " + std::to_string(t.torn_bytes) + " torn journal bytes dropped";
  BOOST_TEST(Contains(rec.err, want), "no '" << want << "' in:\n" << rec.err);
  BOOST_TEST(!Contains(rec.err, "journal damage"), "a torn tail is not damage:\n" << rec.err);
  BOOST_TEST(SessionStateOf(t.s.ws, t.s.id) == "recovered");
  // Appending after recovery started where the last whole record ended.
  std::vector<RecordSpan> now = JournalRecordSpans(ReadFile(t.s.journal));
  BOOST_TEST(now.size() > t.s.spans.size() - 1);
}

BOOST_AUTO_TEST_CASE(UndoAfterATornTailRestoresEveryPathWhoseRecordsSurvived) {
  ExpectUndoRestoredWhatSurvived(Torn().s, Torn().runs, Torn().Lost(), {});
}

BOOST_AUTO_TEST_CASE(ReplayAfterATornTailRestoresOrNamesEveryPath) {
  ExpectReplayRestoredOrNamed(Torn().s, Torn().runs);
}

}  // namespace
}  // namespace guard::e2e
