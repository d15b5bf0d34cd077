#include "supervisor/restore/restore_session.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/clock.h"
#include "common/journal_writer.h"
#include "common/session_meta.h"
#include "supervisor/base/session_logger.h"
#include "supervisor/base/version.h"
#include "supervisor/capture/file_state.h"

namespace guard {
namespace {

// The end state of each path the restore changed: what it wrote, for a
// file the tree still holds as written (the same inode, size, mtime and
// mode: nobody wrote it since), so that the seal does not read back and
// store again content the store already has; the tree for everything else.
class WrittenEndStates final : public EndStateReader {
 public:
  WrittenEndStates(const std::map<std::string, FileState>* written, BlobStore* store)
      : written_(written), store_(store) {}

  void AddPaths(std::set<std::string>*) const override {}

  Status Read(const std::string& rel, const std::string& abs, bool beneath, FileState* out,
              uint32_t* flags) override {
    *flags = 0;
    *out = FileState();
    if (!beneath) return Status::Ok();  // nothing at rel beneath the root: absent
    auto it = written_->find(rel);
    struct stat st;
    if (it != written_->end() && it->second.blob.kind == BlobRef::Kind::kKey && lstat(abs.c_str(), &st) == 0) {
      const FileState& w = it->second;
      FileState now;
      FillFromStat(st, &now);
      if (now.type == FileType::kRegular && static_cast<uint64_t>(st.st_ino) == w.ino &&
          static_cast<uint64_t>(st.st_dev) == w.dev && now.size == w.size && now.mtime_ns == w.mtime_ns &&
          now.mode == w.mode) {
        *out = w;
        FillSignature(st, out);
        return Status::Ok();
      }
    }
    return CaptureStateWithSignature(abs, store_, out);
  }

 private:
  const std::map<std::string, FileState>* written_;
  BlobStore* store_;
};

}  // namespace

Status RestoreSession::Start(const StateDir& state, const std::string& root, std::vector<std::string> argv,
                             const RestoreOf& account, std::unique_ptr<RestoreSession>* out) {
  char real[PATH_MAX];
  if (realpath(state.path().c_str(), real) == nullptr) return Status::FromErrno(state.path(), errno);
  std::unique_ptr<RestoreSession> session(new RestoreSession());
  SessionMeta meta;
  std::string dir;
  GUARD_RETURN_IF_ERROR(CreateSessionDir(state.sessions_dir(), &meta, &dir));
  meta.root = root;
  meta.argv = std::move(argv);
  meta.started_ns = WallNowNs();
  meta.state = SessionState::kRunning;
  // This process is the session's supervisor: killed, it leaves the session
  // "running" with a dead supervisor, which the next guard command recovers.
  meta.supervisor_pid = getpid();
  meta.supervisor_start_ticks = ProcessStartTicks(getpid());
  meta.guard_version = kGuardVersion;
  meta.restore = account;
  std::string meta_path = dir + "/meta.json";
  GUARD_RETURN_IF_ERROR(SaveSessionMeta(meta_path, meta));
  session->id_ = meta.id;
  session->log_ = MakeSessionLogger(dir, meta.id);
  GUARD_RETURN_IF_ERROR(BlobStore::Open(state.store_dir(), &session->store_));
  session->store_->SetPendingOwner(meta.id);  // recovery tells this session's pending blobs by it
  std::unique_ptr<JournalWriter> journal;
  GUARD_RETURN_IF_ERROR(JournalWriter::Create(dir + "/journal", &journal));
  session->recorder_ = std::make_unique<Recorder>(meta, meta_path, std::move(journal), session->store_.get(),
                                                  session->log_);
  CaptureConfig config;
  config.root = root;
  config.state_dir = real;
  // Whatever the restore destroys is saved first, or the change is not
  // made: PlanRestore counts on it for content the store does not have.
  config.on_failure = CaptureFailurePolicy::kBlock;
  session->capture_ = std::make_unique<Capture>(config, session->recorder_.get(), session->log_);
  session->log_->info("restore of {} recorded without a tracer; command {}", root, meta.argv.size() > 2 ? meta.argv[2] : "");
  *out = std::move(session);
  return Status::Ok();
}

Status RestoreSession::Commit() {
  // Blobs first, then the records that name them (group_commit.h).
  GUARD_RETURN_IF_ERROR(store_->SyncWritten());
  return recorder_->journal()->Sync();
}

Status RestoreSession::Seal(int exit_code, const std::map<std::string, FileState>& written, int interrupted_by,
                            uint64_t done) {
  WrittenEndStates end_states(&written, store_.get());
  int64_t start = MonoNowNs();
  if (interrupted_by != 0) {
    RestoreOf account = recorder_->meta().restore;
    account.interrupted = true;
    account.done = done;
    recorder_->SetRestoreOf(account);
    log_->warn("interrupted by signal {}: {} of {} paths restored", interrupted_by, done, account.planned);
  }
  Status s = interrupted_by != 0 ? recorder_->Seal(SessionState::kKilled, -1, interrupted_by, 0, &end_states)
                                 : recorder_->Seal(SessionState::kFinished, exit_code, 0, 0, &end_states);
  log_->info("sealed in {:.3f} s; {} operations", static_cast<double>(MonoNowNs() - start) / 1e9,
             recorder_->meta().ops);
  return s;
}

}  // namespace guard
