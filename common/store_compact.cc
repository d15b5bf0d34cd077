#include "common/store_compact.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_NOREPLACE
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <vector>

#include "common/blob_codec.h"
#include "common/blob_key.h"
#include "common/blob_store_layout.h"
#include "common/clock.h"
#include "common/file_io.h"
#include "common/os_calls.h"
#include "common/unique_fd.h"

namespace guard {
namespace {

using store_layout::kZstdSuffix;

int64_t MtimeNs(const struct stat& st) { return TimespecNs(st.st_mtim); }

bool IsRawObjectName(const std::string& name) {
  BlobKey unused;
  return name.size() == 32 && BlobKey::FromHex(name, &unused);
}

std::string TempName() {
  static std::atomic<uint64_t> counter{0};
  uint32_t rnd = 0;
  if (os::Random(&rnd, sizeof rnd, /*nonblock=*/true) != static_cast<ssize_t>(sizeof rnd)) {
    rnd = static_cast<uint32_t>(::time(nullptr)) ^ static_cast<uint32_t>(counter.load());
  }
  char buf[80];
  // "<pid>-<counter>-<random>" (docs/format.md): the sweep removes a stale
  // temp file only once its writer is gone, and a killed gc's leftover
  // cannot take the name of a later gc with the same pid.
  std::snprintf(buf, sizeof buf, "tmp/%d-%llu-%08x", static_cast<int>(::getpid()),
                static_cast<unsigned long long>(counter.fetch_add(1)), rnd);
  return buf;
}

// One raw object objects/<sub>/<hex>: compressed into <hex>.zst, or left.
// Errors returned are the store's (the caller stops); an object that cannot
// be compressed is counted as left raw.
Status CompactOne(int store_fd, int sub_fd, const std::string& sub, const std::string& hex, int64_t since_ns,
                  CompactReport* report) {
  struct stat st;
  if (::fstatat(sub_fd, hex.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Status::Ok();  // swept meanwhile
  if (!S_ISREG(st.st_mode) || MtimeNs(st) < since_ns) return Status::Ok();
  if (st.st_nlink != 1 || st.st_size == 0 || ::faccessat(sub_fd, (hex + kZstdSuffix).c_str(), F_OK, 0) == 0) {
    ++report->left_raw;
    return Status::Ok();
  }
  UniqueFd in;
  if (!OpenFileAt(sub_fd, hex, O_RDONLY | O_NOFOLLOW | O_NOATIME, 0, &in).ok() &&
      !OpenFileAt(sub_fd, hex, O_RDONLY | O_NOFOLLOW, 0, &in).ok()) {
    ++report->left_raw;
    return Status::Ok();
  }
  const std::string temp = TempName();
  UniqueFd out;
  GUARD_RETURN_IF_ERROR(OpenFileAt(store_fd, temp, O_WRONLY | O_CREAT | O_EXCL, 0600, &out));
  auto drop = [&] { ::unlinkat(store_fd, temp.c_str(), 0); };
  BlobEncoder enc(out.get());
  Status s = enc.Init();
  std::unique_ptr<char[]> buf(new (std::nothrow) char[kBlobChunkSize]);
  if (s.ok() && !buf) s = Status::IOError("compaction: out of memory");
  for (off_t offset = 0; s.ok();) {
    size_t got = 0;
    s = PreadFull(in.get(), buf.get(), kBlobChunkSize, offset, &got, "compaction read");
    if (!s.ok()) break;
    offset += static_cast<off_t>(got);
    bool last = got < kBlobChunkSize;
    s = enc.Add(buf.get(), got, last);
    if (last) break;
  }
  if (!s.ok()) {
    drop();
    if (s.IsNoSpace()) return s;  // a full disk stops the pass; an unreadable object does not
    ++report->left_raw;
    return Status::Ok();
  }
  BlobKey named;
  BlobKey::FromHex(hex, &named);
  if (!enc.compressed() || !(enc.key() == named)) {
    drop();
    ++report->left_raw;
    return Status::Ok();
  }
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  s = FsyncFd(out.get(), "compaction");
  if (s.ok() && ::futimens(out.get(), times) != 0) s = Status::FromErrno("compaction: futimens", errno);
  struct stat zst_st;
  if (s.ok() && ::fstat(out.get(), &zst_st) != 0) s = Status::FromErrno("compaction: fstat", errno);
  if (!s.ok()) {
    drop();
    return s;
  }
  const std::string zst = "objects/" + sub + "/" + hex + kZstdSuffix;
  int placed = os::RenameNoReplace(store_fd, temp.c_str(), store_fd, zst.c_str());
  int err = placed == 0 ? 0 : errno;
  if (placed != 0 && (err == EINVAL || err == ENOSYS)) {
    // No RENAME_NOREPLACE here (NFS, some FUSE): a link never replaces either.
    placed = ::linkat(store_fd, temp.c_str(), store_fd, zst.c_str(), 0);
    err = placed == 0 ? 0 : errno;
    drop();
  } else if (placed != 0) {
    drop();
  }
  if (placed != 0) {
    if (err == EEXIST) {
      ++report->left_raw;
      return Status::Ok();
    }
    return Status::FromErrno("compaction: placing " + zst, err);
  }
  // The .zst and its name are durable before the raw file may go.
  if (::fsync(sub_fd) != 0) return Status::FromErrno("compaction: fsync objects/" + sub, errno);
  ::unlinkat(sub_fd, hex.c_str(), 0);
  // A writer that refreshed the raw file before the unlink is about to name
  // the key: the .zst is then made new, so that no sweep takes it as old.
  // One that refreshes after it gets ENOENT and places the content again.
  // The raw inode is still open here, so its last mtime can be read.
  struct stat now;
  if (::fstat(in.get(), &now) != 0 || MtimeNs(now) != MtimeNs(st)) {
    (void)::utimensat(sub_fd, (hex + kZstdSuffix).c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
  }
  ++report->compressed;
  report->bytes_before += static_cast<uint64_t>(st.st_blocks) * 512;
  report->bytes_after += static_cast<uint64_t>(zst_st.st_blocks) * 512;
  return Status::Ok();
}

}  // namespace

Status CompactStore(const std::string& store_dir, int64_t since_ns, CompactReport* report) {
  *report = CompactReport();
  UniqueFd store_fd, objects_fd;
  GUARD_RETURN_IF_ERROR(OpenFile(store_dir, O_RDONLY | O_DIRECTORY, 0, &store_fd));
  GUARD_RETURN_IF_ERROR(OpenFileAt(store_fd.get(), "objects", O_RDONLY | O_DIRECTORY, 0, &objects_fd));
  std::vector<std::string> subs;
  GUARD_RETURN_IF_ERROR(ReadDirNames(objects_fd.get(), store_dir + "/objects", &subs));
  for (const std::string& sub : subs) {
    if (sub.size() != 2) continue;
    UniqueFd sub_fd;
    if (!OpenFileAt(objects_fd.get(), sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, &sub_fd).ok()) continue;
    std::vector<std::string> names;
    GUARD_RETURN_IF_ERROR(ReadDirNames(sub_fd.get(), store_dir + "/objects/" + sub, &names));
    for (const std::string& name : names) {
      if (!IsRawObjectName(name)) continue;
      GUARD_RETURN_IF_ERROR(CompactOne(store_fd.get(), sub_fd.get(), sub, name, since_ns, report));
    }
  }
  return Status::Ok();
}

}  // namespace guard
