#define BOOST_TEST_MODULE learned_outcome
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>

#include "supervisor/capture/learned_outcome.h"

namespace guard {
namespace {

using Action = MutationRequest::Action;

struct stat Stat(mode_t mode) {
  struct stat st {};
  st.st_mode = mode;
  return st;
}

Record Op(OpKind kind, FileType before = FileType::kRegular, FileType before2 = FileType::kAbsent) {
  Record r;
  r.kind = kind;
  r.before.type = before;
  r.before2.type = before2;
  return r;
}

BOOST_AUTO_TEST_CASE(NameChangesInsideTheRootNeedNoExitStop) {
  BOOST_TEST(LearnableFromTree(Op(OpKind::kDelete), Action::kUnlink, true, false));
  BOOST_TEST(LearnableFromTree(Op(OpKind::kMkdir, FileType::kAbsent), Action::kMkdir, true, false));
  BOOST_TEST(LearnableFromTree(Op(OpKind::kSymlink, FileType::kAbsent), Action::kSymlink, true, false));
  BOOST_TEST(LearnableFromTree(Op(OpKind::kLink), Action::kLink, true, true));
  BOOST_TEST(LearnableFromTree(Op(OpKind::kRename), Action::kRename, true, true));
}

BOOST_AUTO_TEST_CASE(AnRmdirKeepsItsExitStopSoThatItsErrnoIsOnRecord) {
  BOOST_TEST(!LearnableFromTree(Op(OpKind::kRmdir, FileType::kDirectory), Action::kRmdir, true, false));
}

BOOST_AUTO_TEST_CASE(CreationsOfFilesNeedNoExitStop) {
  BOOST_TEST(LearnableFromTree(Op(OpKind::kCreate, FileType::kAbsent), Action::kOpen, true, false));
  BOOST_TEST(LearnableFromTree(Op(OpKind::kCreate, FileType::kAbsent), Action::kMknod, true, false));
}

BOOST_AUTO_TEST_CASE(OpensOfExistingFilesExchangesAndDirectoryMovesKeepTheirExitStop) {
  BOOST_TEST(!LearnableFromTree(Op(OpKind::kModify), Action::kOpen, true, false));
  BOOST_TEST(!LearnableFromTree(Op(OpKind::kModify), Action::kTruncate, true, false));
  BOOST_TEST(!LearnableFromTree(Op(OpKind::kExchange), Action::kRename, true, true));
  BOOST_TEST(!LearnableFromTree(Op(OpKind::kRename, FileType::kDirectory), Action::kRename, true, true));
  BOOST_TEST(!LearnableFromTree(Op(OpKind::kRename, FileType::kRegular, FileType::kDirectory), Action::kRename,
                                true, true));
}

BOOST_AUTO_TEST_CASE(CallsOnPathsOutsideTheRootOrUncapturedKeepTheirExitStop) {
  BOOST_TEST(!LearnableFromTree(Op(OpKind::kDelete), Action::kUnlink, false, false));
  BOOST_TEST(!LearnableFromTree(Op(OpKind::kRename), Action::kRename, true, false));
  BOOST_TEST(!LearnableFromTree(Op(OpKind::kLink), Action::kLink, true, false));
  Record uncaptured = Op(OpKind::kDelete);
  uncaptured.flags |= kNotCaptured;
  BOOST_TEST(!LearnableFromTree(uncaptured, Action::kUnlink, true, false));
}

BOOST_AUTO_TEST_CASE(OnlyAChmodToAnotherModeIsLearnt) {
  Record chmod = Op(OpKind::kChmod);
  chmod.before.mode = 0644;
  chmod.new_mode = 0600;
  BOOST_TEST(LearnableFromTree(chmod, Action::kChmod, true, false));
  BOOST_TEST(LearnableFromTree(chmod, Action::kFchmod, true, false));
  // chown and ACL writes are recorded as chmods whose mode is a prediction.
  BOOST_TEST(!LearnableFromTree(chmod, Action::kChown, true, false));
  BOOST_TEST(!LearnableFromTree(chmod, Action::kSetAcl, true, false));
  chmod.new_mode = 0644;
  BOOST_TEST(!LearnableFromTree(chmod, Action::kChmod, true, false));
}

BOOST_AUTO_TEST_CASE(ADeleteHappenedWhenThePathIsGoneAndIsUnknownWhenItIsStillThere) {
  struct stat file = Stat(S_IFREG | 0644);
  BOOST_TEST((LearnFromTree({OpKind::kDelete}, nullptr, nullptr) == Learned::kHappened));
  BOOST_TEST((LearnFromTree({OpKind::kDelete}, &file, nullptr) == Learned::kUnknown));
  struct stat dir = Stat(S_IFDIR | 0755);
  BOOST_TEST((LearnFromTree({OpKind::kRmdir}, nullptr, nullptr) == Learned::kHappened));
  BOOST_TEST((LearnFromTree({OpKind::kRmdir}, &dir, nullptr) == Learned::kUnknown));
}

BOOST_AUTO_TEST_CASE(ACreationHappenedWhenWhatItMakesIsThere) {
  struct stat dir = Stat(S_IFDIR | 0755), link = Stat(S_IFLNK | 0777), fifo = Stat(S_IFIFO | 0644);
  BOOST_TEST((LearnFromTree({OpKind::kMkdir}, &dir, nullptr) == Learned::kHappened));
  BOOST_TEST((LearnFromTree({OpKind::kMkdir}, nullptr, nullptr) == Learned::kUnknown));
  BOOST_TEST((LearnFromTree({OpKind::kMkdir}, &link, nullptr) == Learned::kUnknown));
  BOOST_TEST((LearnFromTree({OpKind::kSymlink}, &link, nullptr) == Learned::kHappened));
  BOOST_TEST((LearnFromTree({OpKind::kSymlink}, nullptr, nullptr) == Learned::kUnknown));
  BOOST_TEST((LearnFromTree({OpKind::kMknod}, &fifo, nullptr) == Learned::kHappened));
  BOOST_TEST((LearnFromTree({OpKind::kMknod}, nullptr, nullptr) == Learned::kUnknown));
}

BOOST_AUTO_TEST_CASE(ARenameHappenedWhenTheSourceIsGoneAndTheDestinationThere) {
  struct stat file = Stat(S_IFREG | 0644);
  BOOST_TEST((LearnFromTree({OpKind::kRename}, nullptr, &file) == Learned::kHappened));
  // Failed, or a rename between two names of one inode (a success that
  // changes nothing): no evidence either way.
  BOOST_TEST((LearnFromTree({OpKind::kRename}, &file, &file) == Learned::kUnknown));
  BOOST_TEST((LearnFromTree({OpKind::kRename}, nullptr, nullptr) == Learned::kUnknown));
  BOOST_TEST((LearnFromTree({OpKind::kLink}, &file, &file) == Learned::kHappened));
  BOOST_TEST((LearnFromTree({OpKind::kLink}, &file, nullptr) == Learned::kUnknown));
}

BOOST_AUTO_TEST_CASE(AChmodHappenedWhenTheFileHasTheNewMode) {
  OneStopCall c{OpKind::kChmod, 0644, 0600};
  struct stat changed = Stat(S_IFREG | 0600), unchanged = Stat(S_IFREG | 0644);
  BOOST_TEST((LearnFromTree(c, &changed, nullptr) == Learned::kHappened));
  BOOST_TEST((LearnFromTree(c, &unchanged, nullptr) == Learned::kUnknown));
  BOOST_TEST((LearnFromTree(c, nullptr, nullptr) == Learned::kUnknown));
}

BOOST_AUTO_TEST_CASE(ACreatedFileHappenedWhenARegularFileIsThere) {
  struct stat file = Stat(S_IFREG | 0644), dir = Stat(S_IFDIR | 0755);
  BOOST_TEST((LearnFromTree({OpKind::kCreate}, &file, nullptr) == Learned::kHappened));
  BOOST_TEST((LearnFromTree({OpKind::kCreate}, nullptr, nullptr) == Learned::kUnknown));
  BOOST_TEST((LearnFromTree({OpKind::kCreate}, &dir, nullptr) == Learned::kUnknown));
}

BOOST_AUTO_TEST_CASE(AnOpenOfAnExistingFileIsNeverLearnt) {
  struct stat file = Stat(S_IFREG | 0644);
  BOOST_TEST((LearnFromTree({OpKind::kModify}, &file, nullptr) == Learned::kUnknown));
}

}  // namespace
}  // namespace guard
