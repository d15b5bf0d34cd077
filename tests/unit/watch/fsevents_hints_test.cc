#define BOOST_TEST_MODULE fsevents_hints
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "supervisor/watch/fsevents_flags.h"
#include "supervisor/watch/fsevents_hints.h"

// The event sequences below are written by hand as tables, not recorded on
// a Mac (none was at hand): the flag values are those of Apple's FSEvents.h
// (fsevents_flags.h), and each sequence is what Apple's documentation of
// FSEventStreamEventFlags and of kFSEventStreamCreateFlagFileEvents says a
// stream created with FileEvents | NoDefer | WatchRoot delivers for the
// operation named: one event per path with the flags of everything that
// happened to it since the last delivery OR-ed together (the documentation
// warns that flags coalesce), a rename as one event at each name, a
// directory's removal as events for what was in it and for itself, and
// MustScanSubDirs (with UserDropped or KernelDropped when events were lost)
// when the stream could not keep up. Where a sequence rests on a claim that
// must be checked on a Mac first, the row says so; docs/macos.md lists them.

namespace guard {

std::ostream& operator<<(std::ostream& os, const WatchHint& h) {
  const char* scope = h.scope == WatchHint::Scope::kPath ? "path" : h.scope == WatchHint::Scope::kTree ? "tree" : "all";
  return os << scope << ":" << h.path;
}

namespace {

using namespace fsevents;
using Scope = WatchHint::Scope;

constexpr const char* kRoot = "/Users/me/proj";

struct Row {
  const char* what;
  std::vector<FsEvent> events;
  std::vector<WatchHint> want;
};

std::string Describe(const std::vector<WatchHint>& hints) {
  std::string s;
  for (const WatchHint& h : hints) {
    s += (s.empty() ? "" : ", ");
    s += h.scope == Scope::kPath ? "path:" : h.scope == Scope::kTree ? "tree:" : "all:";
    s += h.path;
  }
  return "[" + s + "]";
}

void Check(const FsEventMapper& mapper, const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    std::vector<WatchHint> got;
    mapper.Decode(row.events, &got);
    BOOST_TEST(got == row.want, row.what << ": got " << Describe(got) << ", want " << Describe(row.want));
  }
}

BOOST_AUTO_TEST_CASE(EachFlagDecidesItsScope) {
  struct ScopeRow {
    const char* what;
    uint32_t flags;
    bool hinted;
    Scope scope;
  };
  const ScopeRow rows[] = {
      {"a file written", kItemModified | kItemIsFile, true, Scope::kPath},
      {"a file created and written", kItemCreated | kItemModified | kItemIsFile, true, Scope::kPath},
      {"a file removed", kItemRemoved | kItemIsFile, true, Scope::kPath},
      {"a file renamed (either name)", kItemRenamed | kItemIsFile, true, Scope::kPath},
      {"a file's mode", kItemInodeMetaMod | kItemIsFile, true, Scope::kPath},
      {"a file's owner", kItemChangeOwner | kItemIsFile, true, Scope::kPath},
      {"a file's xattr", kItemXattrMod | kItemIsFile, true, Scope::kPath},
      {"a file's Finder info", kItemFinderInfoMod | kItemIsFile, true, Scope::kPath},
      {"a file cloned (clonefile)", kItemCloned | kItemCreated | kItemIsFile, true, Scope::kPath},
      {"a symlink created", kItemCreated | kItemIsSymlink, true, Scope::kPath},
      {"a hard link made", kItemCreated | kItemIsFile | kItemIsHardlink, true, Scope::kPath},
      {"a directory's mode", kItemInodeMetaMod | kItemIsDir, true, Scope::kPath},
      {"a directory created", kItemCreated | kItemIsDir, true, Scope::kTree},
      {"a directory removed", kItemRemoved | kItemIsDir, true, Scope::kTree},
      {"a directory renamed (either name)", kItemRenamed | kItemIsDir, true, Scope::kTree},
      {"a subtree to rescan", kMustScanSubDirs, true, Scope::kTree},
      {"a volume mounted beneath", kMount, true, Scope::kTree},
      {"a volume unmounted beneath", kUnmount, true, Scope::kTree},
      {"a directory-level event, no item flag", kNone, true, Scope::kTree},
      {"events dropped in user space", kMustScanSubDirs | kUserDropped, true, Scope::kAll},
      {"events dropped in the kernel", kMustScanSubDirs | kKernelDropped, true, Scope::kAll},
      {"event ids wrapped", kEventIdsWrapped, true, Scope::kAll},
      {"the root moved or went", kRootChanged, true, Scope::kAll},
      {"history done, a marker", kHistoryDone, false, Scope::kPath},
  };
  for (const ScopeRow& row : rows) {
    Scope scope = Scope::kPath;
    bool hinted = FsEventScope(row.flags, &scope);
    BOOST_TEST(hinted == row.hinted, row.what);
    if (hinted && row.hinted) BOOST_TEST((scope == row.scope), row.what);
  }
}

BOOST_AUTO_TEST_CASE(OperationsBecomeCoalescedHints) {
  FsEventMapper mapper(kRoot, kRoot);
  const std::string r = kRoot;
  Check(mapper, {
      {"echo x > f (new file): one event, flags coalesced",
       {{r + "/f", kItemCreated | kItemModified | kItemInodeMetaMod | kItemIsFile}},
       {{r + "/f", Scope::kPath}}},
      {"f written twice before delivery, and again in the same batch",
       {{r + "/f", kItemModified | kItemIsFile}, {r + "/f", kItemModified | kItemIsFile}},
       {{r + "/f", Scope::kPath}}},
      {"mv a b: one event at each name",
       {{r + "/a", kItemRenamed | kItemIsFile}, {r + "/b", kItemRenamed | kItemIsFile}},
       {{r + "/a", Scope::kPath}, {r + "/b", Scope::kPath}}},
      {"mkdir -p d/e && touch d/e/x: the new directory covers what is in it",
       {{r + "/d", kItemCreated | kItemIsDir},
        {r + "/d/e", kItemCreated | kItemIsDir},
        {r + "/d/e/x", kItemCreated | kItemIsFile}},
       {{r + "/d", Scope::kTree}}},
      {"rm -rf d: its content first, then itself",
       {{r + "/d/e/x", kItemRemoved | kItemIsFile},
        {r + "/d/e", kItemRemoved | kItemIsDir},
        {r + "/d", kItemRemoved | kItemIsDir}},
       {{r + "/d", Scope::kTree}}},
      {"mv d d2 with files in it: both names, as trees",
       {{r + "/d", kItemRenamed | kItemIsDir}, {r + "/d2", kItemRenamed | kItemIsDir}},
       {{r + "/d", Scope::kTree}, {r + "/d2", Scope::kTree}}},
      {"a file beside a new directory is kept",
       {{r + "/d", kItemCreated | kItemIsDir}, {r + "/dx", kItemModified | kItemIsFile}},
       {{r + "/d", Scope::kTree}, {r + "/dx", Scope::kPath}}},
      {"the root's own mode",
       {{r, kItemInodeMetaMod | kItemIsDir}},
       {{r, Scope::kPath}}},
      {"a subtree to rescan (coalesced by the kernel), with a file in it",
       {{r + "/src/", kMustScanSubDirs}, {r + "/src/a.c", kItemModified | kItemIsFile}},
       {{r + "/src", Scope::kTree}}},
      {"dropped events: everything, whatever else came",
       {{r + "/f", kItemModified | kItemIsFile}, {"/", kMustScanSubDirs | kUserDropped}},
       {{r, Scope::kAll}}},
      {"the kernel dropped events",
       {{"/", kMustScanSubDirs | kKernelDropped}, {r + "/g", kItemCreated | kItemIsFile}},
       {{r, Scope::kAll}}},
      {"the root renamed away (WatchRoot): the path is the root's",
       {{r, kRootChanged}},
       {{r, Scope::kAll}}},
      {"ids wrapped",
       {{"/", kEventIdsWrapped}},
       {{r, Scope::kAll}}},
      {"history done alone says nothing",
       {{"/", kHistoryDone}},
       {}},
      {"outside the root, and a sibling whose name starts with the root's",
       {{"/Users/me/other/f", kItemModified | kItemIsFile}, {r + "X/f", kItemModified | kItemIsFile}},
       {}},
  });
}

BOOST_AUTO_TEST_CASE(ADecodeCoalescesWithWhatTheBatchHeld) {
  FsEventMapper mapper(kRoot, kRoot);
  const std::string r = kRoot;
  std::vector<WatchHint> out;
  mapper.Decode({{r + "/d/x", kItemModified | kItemIsFile}, {r + "/f", kItemModified | kItemIsFile}}, &out);
  mapper.Decode({{r + "/d", kItemRenamed | kItemIsDir}, {r + "/f", kItemModified | kItemIsFile}}, &out);
  std::vector<WatchHint> want = {{r + "/f", Scope::kPath}, {r + "/d", Scope::kTree}};
  BOOST_TEST(out == want, Describe(out));
  mapper.Decode({{"/", kMustScanSubDirs | kKernelDropped}}, &out);
  want = {{r, Scope::kAll}};
  BOOST_TEST(out == want, Describe(out));
  mapper.Decode({{r + "/g", kItemCreated | kItemIsFile}}, &out);
  BOOST_TEST(out == want, Describe(out));
}

// FSEvents names paths as they are on disk: under /var, /tmp and /etc (firmlinks
// to /private/...) it reports /private/...; whether a path on the Data volume can
// come as /System/Volumes/Data/... is to be checked on a Mac (docs/macos.md), and
// mapped the same way meanwhile.
BOOST_AUTO_TEST_CASE(FirmlinkedSpellingsMapBackToTheRoot) {
  struct MapRow {
    const char* root;
    const char* canonical;
    const char* reported;
    bool under;
    const char* mapped;
  };
  const MapRow rows[] = {
      {"/var/folders/xy/T/proj", "/private/var/folders/xy/T/proj", "/private/var/folders/xy/T/proj/a/b", true,
       "/var/folders/xy/T/proj/a/b"},
      {"/var/folders/xy/T/proj", "/private/var/folders/xy/T/proj", "/var/folders/xy/T/proj/a", true,
       "/var/folders/xy/T/proj/a"},
      {"/var/folders/xy/T/proj", "/private/var/folders/xy/T/proj", "/private/var/folders/xy/T/proj", true,
       "/var/folders/xy/T/proj"},
      {"/var/folders/xy/T/proj", "/private/var/folders/xy/T/proj", "/private/var/folders/xy/T/proj/", true,
       "/var/folders/xy/T/proj"},
      {"/var/folders/xy/T/proj", "/private/var/folders/xy/T/proj", "/private/var/folders/xy/T/projX/a", false, ""},
      {"/tmp/w", "/private/tmp/w", "/private/tmp/w/f", true, "/tmp/w/f"},
      {"/private/tmp/w", "/private/tmp/w", "/tmp/w/f", true, "/private/tmp/w/f"},
      {"/Users/me/proj", "/Users/me/proj", "/System/Volumes/Data/Users/me/proj/f", true, "/Users/me/proj/f"},
      {"/Users/me/link", "/Users/me/proj", "/Users/me/proj/f", true, "/Users/me/link/f"},
      {"/Users/me/link", "/Users/me/proj", "/Users/me/link/f", true, "/Users/me/link/f"},
      {"/Users/me/proj", "/Users/me/proj", "/Users/me/projects/f", false, ""},
      {"/Users/me/proj", "/Users/me/proj", "/Users/me", false, ""},
      {"/", "/", "/etc/hosts", true, "/etc/hosts"},
      {"/", "/", "/", true, "/"},
  };
  for (const MapRow& row : rows) {
    FsEventMapper mapper(row.root, row.canonical);
    std::string mapped;
    bool under = mapper.MapPath(row.reported, &mapped);
    BOOST_TEST(under == row.under, row.reported << " under " << row.root);
    if (under && row.under) BOOST_TEST(mapped == row.mapped, row.reported << " under " << row.root);
  }
}

BOOST_AUTO_TEST_CASE(EventsUnderTheRealPathBecomeHintsUnderTheRootsName) {
  FsEventMapper mapper("/var/folders/xy/T/proj", "/private/var/folders/xy/T/proj");
  std::vector<WatchHint> out;
  mapper.Decode({{"/private/var/folders/xy/T/proj/d", kItemCreated | kItemIsDir},
                 {"/private/var/folders/xy/T/proj/d/f", kItemCreated | kItemIsFile},
                 {"/private/var/folders/xy/T/proj/g", kItemModified | kItemIsFile}},
                &out);
  std::vector<WatchHint> want = {{"/var/folders/xy/T/proj/d", Scope::kTree}, {"/var/folders/xy/T/proj/g", Scope::kPath}};
  BOOST_TEST(out == want, Describe(out));
}

}  // namespace
}  // namespace guard
