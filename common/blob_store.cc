// The blob store's layout and placement rules; the encodings themselves are
// in blob_codec.cc. Specified in docs/format.md (Part II).
#include "common/blob_store.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>  // renameat2
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <functional>

#include "common/blob_codec.h"
#include "common/blob_store_layout.h"
#include "common/file_io.h"
#include "common/mix64.h"
#include "common/os_calls.h"
#include "common/sparse_file.h"
#include "common/store_gc.h"

namespace guard {

namespace {

using namespace store_layout;

// kFsyncEach only: past this many files waiting for SyncWritten, a Put syncs
// them itself: it bounds the fds held open. (kSyncfs holds no fds and never
// syncs on the caller's thread.)
constexpr size_t kMaxUnsyncedFiles = 256;
// A file in tmp/ is a leftover only if its writer is dead and it has not been
// touched for this long (the pid alone could belong to another pid namespace).
constexpr time_t kStaleTempSeconds = 3600;

// Whether syncfs(2) reports writeback errors: it does since Linux 5.8
// (commit 735e4ae5ba28, "vfs: track per-sb writeback errors and report them
// to syncfs"). Before, it could return 0 after a blob's writeback failed,
// which would let the journal claim a lost blob; fsync of each file is used
// there instead.
bool SyncfsReportsErrors() {
  struct utsname u;
  if (::uname(&u) != 0) return false;
  int major = 0, minor = 0;
  if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 5 || (major == 5 && minor >= 8);
}

bool ExistsAt(int dirfd, const std::string& name) {
  struct stat st;
  return ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

// Sets the mtime of store file `name` to now: the mark a garbage collection
// running meanwhile keeps an object by. False when it is gone (ENOENT: a
// sweep took it away; the caller places the content again).
bool Refresh(int dirfd, const std::string& name) {
  return ::utimensat(dirfd, name.c_str(), nullptr, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT;
}

// mkdir with exactly 0700 whatever the umask (EEXIST accepted). With
// `check_existing`, an existing directory with another mode is set to 0700,
// since the store holds copies of the user's files.
Status MakeDirAt(int dirfd, const std::string& name, const std::string& what, bool check_existing,
                 bool* created) {
  *created = false;
  if (::mkdirat(dirfd, name.c_str(), 0700) == 0) {
    *created = true;
    if (::fchmodat(dirfd, name.c_str(), 0700, 0) != 0) return Status::FromErrno(what, errno);
    return Status::Ok();
  }
  if (errno != EEXIST) return Status::FromErrno(what, errno);
  if (!check_existing) return Status::Ok();
  struct stat st;
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return Status::FromErrno(what, errno);
  if (!S_ISDIR(st.st_mode)) return Status::FromErrno(what, ENOTDIR);
  if ((st.st_mode & 07777) != 0700 && ::fchmodat(dirfd, name.c_str(), 0700, 0) != 0) {
    return Status::FromErrno(what, errno);
  }
  return Status::Ok();
}

// store/VERSION holds the layout version as decimal text. A store without
// one is new (this is the first version) and gets it written.
Status CheckVersion(const std::string& dir) {
  std::string path = dir + "/VERSION";
  std::string text;
  Status s = ReadFileToString(path, &text);
  if (s.IsNotFound()) {
    return WriteFileAtomic(path, std::to_string(kStoreVersionNew) + "\n", 0600);
  }
  if (!s.ok()) return s;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return Status::Corruption(path + ": not a version number");
  }
  int version = std::stoi(text);
  if (version > kStoreVersion) {
    return Status::Unsupported(path + ": blob store version " + text +
                               " is newer than this guard understands (" +
                               std::to_string(kStoreVersion) + ")");
  }
  if (version < 1) return Status::Corruption(path + ": invalid version " + text);
  return Status::Ok();
}

// Removes tmp/ files left by writers that died mid-Put. Best effort: a file
// that cannot be examined or removed is left for a later Open.
void SweepStaleTemps(int dirfd) {
  UniqueFd tmp;
  std::vector<std::string> names;
  if (!OpenFileAt(dirfd, "tmp", O_RDONLY | O_DIRECTORY, 0, &tmp).ok()) return;
  (void)ReadDirNames(tmp.get(), "tmp", &names);  // what could be read is swept
  time_t now = ::time(nullptr);
  for (const std::string& name : names) {
    long pid = std::strtol(name.c_str(), nullptr, 10);
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    struct stat st;
    if (::fstatat(tmp.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (now - st.st_mtime < kStaleTempSeconds) continue;
    ::unlinkat(tmp.get(), name.c_str(), 0);
  }
}

// Writes the content that `feed` passes to the encoder into a new file
// tmp/<name>. On failure the file is removed, so tmp/ keeps no partial blob.
struct TempBlob {
  std::string name;
  UniqueFd fd;
  BlobKey key;
  uint64_t size = 0;
  bool compressed = false;
};
Status EncodeToTemp(int dirfd, std::string name, bool compress,
                    const std::function<Status(BlobEncoder*)>& feed, TempBlob* out) {
  UniqueFd fd;
  GUARD_RETURN_IF_ERROR(OpenFileAt(dirfd, name, O_WRONLY | O_CREAT | O_EXCL, 0600, &fd));
  BlobEncoder enc(fd.get(), compress);
  Status s = enc.Init();
  if (s.ok()) s = feed(&enc);
  if (!s.ok()) {
    ::unlinkat(dirfd, name.c_str(), 0);
    return s;
  }
  out->name = std::move(name);
  out->fd = std::move(fd);
  out->key = enc.key();
  out->size = enc.size();
  out->compressed = enc.compressed();
  return Status::Ok();
}

Status Injected(int err, const char* what) {
  return Status::FromErrno(std::string("blob store: ") + what + " (injected failure)", err);
}

}  // namespace

std::string store_layout::FindObject(int dirfd, const BlobKey& key) {
  for (ObjectKind kind : kObjectKinds) {
    std::string name = ObjectName(key, kind);
    if (ExistsAt(dirfd, name)) return name;
  }
  return "";
}

BlobStore::BlobStore(std::string dir, UniqueFd dirfd, SyncMode mode)
    : dir_(std::move(dir)), dirfd_(std::move(dirfd)), sync_mode_(mode) {
  if (os::Random(&name_seed_, sizeof name_seed_, /*nonblock=*/true) != static_cast<ssize_t>(sizeof name_seed_)) {
    name_seed_ = static_cast<uint64_t>(::time(nullptr)) ^ reinterpret_cast<uintptr_t>(this);
  }
}
BlobStore::~BlobStore() = default;

Status BlobStore::Open(const std::string& dir, std::unique_ptr<BlobStore>* out) {
  GUARD_RETURN_IF_ERROR(MakeDirs(dir, 0700));
  UniqueFd dirfd;
  GUARD_RETURN_IF_ERROR(OpenFile(dir, O_RDONLY | O_DIRECTORY, 0, &dirfd));
  struct stat st;
  if (::fstat(dirfd.get(), &st) != 0) return Status::FromErrno(dir, errno);
  if ((st.st_mode & 07777) != 0700 && ::fchmod(dirfd.get(), 0700) != 0)
    return Status::FromErrno(dir, errno);
  GUARD_RETURN_IF_ERROR(CheckVersion(dir));
  bool any_created = false;
  for (const char* sub : kSubdirs) {
    bool created = false;
    GUARD_RETURN_IF_ERROR(MakeDirAt(dirfd.get(), sub, dir + "/" + sub, true, &created));
    any_created |= created;
  }
  // A new store's directories must survive a crash before any blob in them
  // can be claimed durable; this happens once per store.
  if (any_created) GUARD_RETURN_IF_ERROR(FsyncFd(dirfd.get(), dir));
  SweepStaleTemps(dirfd.get());
  RestoreTrash(dirfd.get());
  SyncMode mode = SyncfsReportsErrors() ? SyncMode::kSyncfs : SyncMode::kFsyncEach;
  out->reset(new BlobStore(dir, std::move(dirfd), mode));
  return Status::Ok();
}

std::string BlobStore::UniqueName(const std::string& prefix) {
  // The pid and the counter make the name unique among live writers; the
  // random part (the store's seed mixed with the counter: no getrandom per
  // name) keeps it from a dead writer's leftover of the same pid.
  const uint64_t n = counter_.fetch_add(1);
  const uint32_t rnd = static_cast<uint32_t>(guard_mix64(name_seed_ + GUARD_MIX64_STEP * (n + 1)));
  char buf[64];
  std::snprintf(buf, sizeof buf, "-%llu-%08x", static_cast<unsigned long long>(n), rnd);
  return (prefix.empty() ? std::to_string(::getpid()) : prefix) + buf;
}

Status BlobStore::PutFd(int fd, BlobKey* key, uint64_t* size) {
  if (int err = injected_errno_.load()) return Injected(err, "put");
  std::unique_ptr<char[]> buf(new (std::nothrow) char[kBlobChunkSize]);
  if (!buf) return Status::IOError("blob store: out of memory");
  // Reads to end of file as it is now: if the file grows or shrinks meanwhile,
  // the key and the stored content are both of exactly the bytes read. Holes
  // are not read (sparse_file.h): their zeros are hashed, and left out of a
  // raw object.
  SparseReader reader(fd);
  // A file of less than one chunk is read whole first: when the store
  // holds its content already (a file written back to what it held, the
  // same post-image again) no temp file is made, as PutBytes does; a
  // temp file's inode costs more than the read (docs/performance.md,
  // watch mode's profile).
  size_t first = 0;
  GUARD_RETURN_IF_ERROR(reader.ReadFull(buf.get(), kBlobChunkSize, 0, &first));
  if (first < kBlobChunkSize) {
    GUARD_RETURN_IF_ERROR(PutBytes(std::string_view(buf.get(), first), key));
    if (size) *size = first;
    return Status::Ok();
  }
  auto feed = [&](BlobEncoder* enc) -> Status {
    off_t offset = 0;
    for (;;) {
      size_t got = first;  // the first chunk is in buf already
      if (offset != 0) GUARD_RETURN_IF_ERROR(reader.ReadFull(buf.get(), kBlobChunkSize, offset, &got));
      offset += static_cast<off_t>(got);
      bool last = got < kBlobChunkSize;
      GUARD_RETURN_IF_ERROR(enc->Add(buf.get(), got, last));
      if (last) return Status::Ok();
    }
  };
  return PutFed(feed, key, size);
}

Status BlobStore::PutBytes(std::string_view data, BlobKey* key) {
  if (int err = injected_errno_.load()) return Injected(err, "put");
  // Content the store holds already (a file written back to what it held,
  // the same licence text in a thousand packages): its object is refreshed
  // and synced as PlaceTemp does for a duplicate, and no temp file is made.
  const BlobKey known = BlobKey::OfBytes(data);
  std::string existing = FindObject(dirfd_.get(), known);
  if (!existing.empty() && observer_ != nullptr) observer_->Reusing(known);
  if (!existing.empty() && Refresh(dirfd_.get(), existing)) {
    GUARD_RETURN_IF_ERROR(SyncExisting(existing, ObjectDir(known)));
    *key = known;
    return Status::Ok();
  }
  auto feed = [&](BlobEncoder* enc) -> Status {
    size_t pos = 0;
    for (;;) {
      size_t n = std::min(kBlobChunkSize, data.size() - pos);
      bool last = n < kBlobChunkSize;
      GUARD_RETURN_IF_ERROR(enc->Add(data.data() + pos, n, last));
      pos += n;
      if (last) return Status::Ok();
    }
  };
  return PutFed(feed, key, nullptr);
}

Status BlobStore::PutFed(const std::function<Status(BlobEncoder*)>& feed, BlobKey* key, uint64_t* size) {
  TempBlob tmp;
  GUARD_RETURN_IF_ERROR(EncodeToTemp(dirfd_.get(), "tmp/" + UniqueName(), compress_.load(std::memory_order_relaxed), feed, &tmp));
  Status s = PlaceTemp(tmp.name, std::move(tmp.fd), tmp.key, tmp.compressed ? ObjectKind::kZstd : ObjectKind::kRaw);
  if (!s.ok()) {
    ::unlinkat(dirfd_.get(), tmp.name.c_str(), 0);  // no partial blob stays behind
    return s;
  }
  *key = tmp.key;
  if (size) *size = tmp.size;
  return Status::Ok();
}

// objects/XX of `key`, made once per store (subdirs_known_: a thread that
// misses the bit makes or finds the directory itself). The bit is set with
// release after the new directory's sync was queued, and read with acquire,
// so a put that skips the mkdir also sees that queued sync.
Status BlobStore::KnowSubdir(const std::string& subdir, const BlobKey& key) {
  const unsigned byte = static_cast<unsigned>(key.high >> 56);
  std::atomic<uint64_t>& word = subdirs_known_[byte / 64];
  const uint64_t bit = uint64_t{1} << (byte % 64);
  if (word.load(std::memory_order_acquire) & bit) return Status::Ok();
  bool created = false;
  GUARD_RETURN_IF_ERROR(MakeDirAt(dirfd_.get(), subdir, dir_ + "/" + subdir, false, &created));
  // A new objects/XX must itself be made durable, by syncing objects/.
  if (created) RememberUnsynced(UniqueFd(), "objects");
  word.fetch_or(bit, std::memory_order_release);
  return Status::Ok();
}

void BlobStore::ForgetSubdir(const BlobKey& key) {
  const unsigned byte = static_cast<unsigned>(key.high >> 56);
  subdirs_known_[byte / 64].fetch_and(~(uint64_t{1} << (byte % 64)), std::memory_order_relaxed);
}

Status BlobStore::PlaceTemp(const std::string& src_name, UniqueFd src_fd, const BlobKey& key,
                            ObjectKind kind, bool keep_source) {
  int dirfd = dirfd_.get();
  std::string subdir = ObjectDir(key);
  GUARD_RETURN_IF_ERROR(KnowSubdir(subdir, key));

  // The object this put names must be fresh (a new file, or an existing one
  // whose mtime is refreshed) so that a garbage collection running now keeps
  // it; when a sweep takes it away between the look and the refresh, the
  // content is placed again (docs/format.md, Part II, "Garbage collection").
  std::string existing;
  for (int attempt = 0; attempt < 8; ++attempt) {
    existing = FindObject(dirfd, key);
    if (existing.empty()) {
      std::string target = ObjectName(key, kind);
      // RENAME_NOREPLACE: if another writer placed the same key meanwhile, its
      // object stays and ours is dropped below like any duplicate.
      int r = keep_source
                  ? ::linkat(dirfd, src_name.c_str(), dirfd, target.c_str(), 0)
                  : os::RenameNoReplace(dirfd, src_name.c_str(), dirfd, target.c_str());
      if (r != 0 && !keep_source && (errno == EINVAL || errno == ENOSYS)) {
        // A filesystem without RENAME_NOREPLACE: replacing a blob with the same
        // content is harmless.
        r = ::renameat(dirfd, src_name.c_str(), dirfd, target.c_str());
      }
      if (r == 0) {
        // A linked pending inode keeps the user's old mtime: refresh it. (A
        // renamed temp file was just written.) If a sweep took it already,
        // link it again.
        if (keep_source && !Refresh(dirfd, target)) continue;
        if (observer_ != nullptr) {
          struct stat st;
          if (::fstatat(dirfd, target.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            observer_->Placed(key, static_cast<uint64_t>(st.st_blocks) * 512,
                              static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
          }
        }
        RememberUnsynced(std::move(src_fd), subdir);
        return Status::Ok();
      }
      if (errno == ENOENT && attempt + 1 < 8) {
        // objects/XX was removed from outside since this store knew it.
        ForgetSubdir(key);
        GUARD_RETURN_IF_ERROR(KnowSubdir(subdir, key));
        continue;
      }
      if (errno != EEXIST) return StoreErrno(dir_, target);
      existing = target;
    }
    if (observer_ != nullptr) observer_->Reusing(key);
    if (Refresh(dirfd, existing)) break;
    existing.clear();  // swept between the look and the refresh: place ours
  }
  if (existing.empty()) return Status::IOError(dir_ + ": " + key.Hex() + ": object keeps disappearing");

  // Already stored. The existing object may come from a writer that has not
  // synced it yet (another session, or one that crashed), so it is synced
  // here too: the journal record naming this key must not outlive its blob.
  // (A syncfs covers it without an fd.)
  src_fd.reset();
  if (!keep_source) ::unlinkat(dirfd, src_name.c_str(), 0);
  return SyncExisting(existing, subdir);
}

Status BlobStore::SyncExisting(const std::string& existing, const std::string& subdir) {
  UniqueFd existing_fd;
  if (sync_mode_ == SyncMode::kFsyncEach) {
    Status s = OpenFileAt(dirfd_.get(), existing, O_RDONLY | O_NOFOLLOW, 0, &existing_fd);
    if (s.IsNotFound()) {
      // Compaction (store_compact.h) replaced a raw object by its .zst
      // meanwhile: the .zst, durable before the raw file went, is the one.
      const std::string zst = existing + store_layout::kZstdSuffix;
      if (existing.size() > 4 && existing.compare(existing.size() - 4, 4, store_layout::kZstdSuffix) != 0) {
        s = OpenFileAt(dirfd_.get(), zst, O_RDONLY | O_NOFOLLOW, 0, &existing_fd);
      }
    }
    GUARD_RETURN_IF_ERROR(s);
  }
  RememberUnsynced(std::move(existing_fd), subdir);
  return Status::Ok();
}

Status BlobStore::KeepAlive(const BlobKey& key) {
  if (observer_ != nullptr) observer_->Reusing(key);
  for (ObjectKind kind : kObjectKinds) {
    std::string name = ObjectName(key, kind);
    if (::utimensat(dirfd_.get(), name.c_str(), nullptr, AT_SYMLINK_NOFOLLOW) == 0) return Status::Ok();
    if (errno != ENOENT) return StoreErrno(dir_, name);
  }
  return Status::NotFound("blob " + key.Hex() + " is missing");
}

void BlobStore::RememberUnsynced(UniqueFd fd, const std::string& subdir) {
  bool over_cap = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    unsynced_any_ = true;
    if (sync_mode_ == SyncMode::kSyncfs) return;  // fd closed: syncfs needs none
    if (fd.valid()) unsynced_files_.push_back(std::move(fd));
    if (std::find(unsynced_dirs_.begin(), unsynced_dirs_.end(), subdir) == unsynced_dirs_.end()) {
      unsynced_dirs_.push_back(subdir);
    }
    over_cap = unsynced_files_.size() > kMaxUnsyncedFiles;
  }
  // A failure is kept in sync_error_ and reported by the next SyncWritten,
  // which is where the caller decides what a lost blob means.
  if (over_cap) (void)SyncWritten();
}

Status BlobStore::SyncWritten() {
  std::lock_guard<std::mutex> sync_lock(sync_mu_);
  std::vector<UniqueFd> files;
  std::vector<std::string> dirs;
  std::string resolved;
  bool any = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    files.swap(unsynced_files_);
    dirs.swap(unsynced_dirs_);
    resolved.swap(resolved_pending_);
    any = unsynced_any_;
    unsynced_any_ = false;
    if (!sync_error_.ok()) return sync_error_;
  }
  Status first;
  if (sync_mode_ == SyncMode::kSyncfs) {
    // One syncfs instead of an fsync per file: it writes back every dirty
    // inode of the store's filesystem (blob data, pending inodes, directory
    // entries) and commits the filesystem's journal once, where thousands of
    // fsyncs each waited for a commit of their own. Everything it must cover
    // was written before this call, so it is covered. It also writes back
    // other dirty files of that filesystem (often the user's tree): more I/O,
    // but never less durability. Its error is the first writeback error on
    // the filesystem since the last call, for any file: reported as a blob
    // sync failure, which errs on the safe side.
    if (any && GUARD_EINTR_RETRY(os::SyncFileSystem(dirfd_.get())) != 0) {
      first = Status::FromErrno(dir_ + ": syncfs", errno);
    }
  }
  // kFsyncEach: files before directories, so that a name made durable points
  // at durable data.
  for (UniqueFd& f : files) {
    Status s = FsyncFd(f.get(), dir_ + ": blob fsync");
    if (first.ok() && !s.ok()) first = s;
  }
  for (const std::string& d : dirs) {
    UniqueFd fd;
    Status s = OpenFileAt(dirfd_.get(), d, O_RDONLY | O_DIRECTORY, 0, &fd);
    if (s.ok()) s = FsyncFd(fd.get(), dir_ + "/" + d);
    if (first.ok() && !s.ok()) first = s;
  }
  if (!first.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    sync_error_ = first;
    return first;
  }
  // The objects and resolved/ markers of these names are durable now, so the
  // pending names can go: a crash can no longer leave a journal naming a
  // pending blob whose content and key are both lost. The unlinks need not be
  // durable themselves: a name that comes back has its marker, and counts as
  // resolved.
  for (size_t at = 0, end; at < resolved.size(); at = end + 1) {
    end = resolved.find('\0', at);
    ::unlinkat(dirfd_.get(), PendingPath(resolved.substr(at, end - at)).c_str(), 0);
  }
  return Status::Ok();
}

bool BlobStore::Contains(const BlobKey& key) const {
  return !FindObject(dirfd_.get(), key).empty();
}

std::string BlobStore::ObjectPath(const BlobKey& key) const {
  std::string name = FindObject(dirfd_.get(), key);
  return name.empty() ? "" : dir_ + "/" + name;
}

// Bytes reach out_fd before the content is verified: a caller restoring a
// file writes to a temporary file and renames it into place only when this
// returns ok.
Status BlobStore::ReadTo(const BlobRef& ref, int out_fd, uint64_t* size) const {
  auto sink = [out_fd](const char* p, size_t n) { return WriteAll(out_fd, p, n, "blob output"); };
  return ReadObject(dirfd_.get(), ref, sink, size);
}

Status BlobStore::ReadToNewFile(const BlobRef& ref, int out_fd, uint64_t* size) const {
  SparseWriter out(out_fd);
  auto sink = [&out](const char* p, size_t n) { return out.Write(p, n); };
  GUARD_RETURN_IF_ERROR(ReadObject(dirfd_.get(), ref, sink, size));
  return out.Finish();
}

Status BlobStore::ReadToSink(const BlobRef& ref, const std::function<Status(const char*, size_t)>& sink,
                             uint64_t* size) const {
  return ReadObject(dirfd_.get(), ref, sink, size);
}

Status BlobStore::ReadToString(const BlobRef& ref, std::string* out) const {
  out->clear();
  auto sink = [out](const char* p, size_t n) {
    out->append(p, n);
    return Status::Ok();
  };
  return ReadObject(dirfd_.get(), ref, sink, nullptr);
}

}  // namespace guard
