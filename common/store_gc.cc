#include "common/store_gc.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "common/blob_append_format.h"
#include "common/blob_key.h"
#include "common/blob_store_layout.h"
#include "common/clock.h"
#include "common/file_io.h"
#include "common/os_calls.h"

namespace guard {

namespace {

using namespace store_layout;

StoreFile FileOf(const std::string& rel, const struct stat& st) {
  StoreFile f;
  f.rel = rel;
  f.bytes = static_cast<uint64_t>(st.st_blocks) * 512;
  f.mtime_ns = TimespecNs(st.st_mtim);
  f.ctime_ns = TimespecNs(st.st_ctim);
  f.ino = st.st_ino;
  return f;
}

// The names in `rel` under the store (empty when it does not exist).
Status ListDir(int store_fd, const std::string& rel, std::vector<std::string>* names) {
  names->clear();
  UniqueFd fd;
  Status s = OpenFileAt(store_fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0, &fd);
  if (s.IsNotFound()) return Status::Ok();
  GUARD_RETURN_IF_ERROR(s);
  return ReadDirNames(fd.get(), rel, names);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "ab12...ef", "ab12...ef.zst" or "ab12...ef.app": the key's hex, else "".
std::string ObjectKeyOf(const std::string& name) {
  std::string hex = name;
  for (const std::string suffix : {kZstdSuffix, kAppendSuffix}) {
    if (EndsWith(hex, suffix)) hex.resize(hex.size() - suffix.size());
  }
  BlobKey key;
  return BlobKey::FromHex(hex, &key) ? hex : "";
}

bool WriterGone(const std::string& name) {
  long pid = std::strtol(name.c_str(), nullptr, 10);
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

uint64_t StoreInventory::TotalBytes() const {
  std::unordered_map<ino_t, uint64_t> by_inode;
  for (const auto& [key, files] : objects)
    for (const StoreFile& f : files) by_inode[f.ino] = f.bytes;
  for (const auto& [name, f] : pending) by_inode[f.ino] = f.bytes;
  for (const auto& [name, f] : resolved) by_inode[f.ino] = f.bytes;
  for (const StoreFile& f : temps) by_inode[f.ino] = f.bytes;
  uint64_t total = 0;
  for (const auto& [ino, bytes] : by_inode) total += bytes;
  return total;
}

Status TakeInventory(const std::string& store_dir, StoreInventory* inv) {
  *inv = StoreInventory();
  UniqueFd store;
  GUARD_RETURN_IF_ERROR(OpenFile(store_dir, O_RDONLY | O_DIRECTORY, 0, &store));
  int fd = store.get();
  std::vector<std::string> subdirs, names;
  GUARD_RETURN_IF_ERROR(ListDir(fd, "objects", &subdirs));
  for (const std::string& sub : subdirs) {
    GUARD_RETURN_IF_ERROR(ListDir(fd, "objects/" + sub, &names));
    for (const std::string& name : names) {
      std::string hex = ObjectKeyOf(name);
      if (hex.empty() || hex.compare(0, 2, sub) != 0) continue;  // not a name this version writes
      std::string rel = "objects/" + sub + "/" + name;
      struct stat st;
      if (::fstatat(fd, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
      inv->objects[hex].push_back(FileOf(rel, st));
      if (EndsWith(name, kAppendSuffix)) {
        // An append object that cannot be read names no base: it is damaged,
        // and reading it fails whatever is kept.
        UniqueFd obj;
        char raw[kAppendHeaderSize];
        size_t got = 0;
        AppendHeader h;
        if (OpenFileAt(fd, rel, O_RDONLY | O_NOFOLLOW, 0, &obj).ok() &&
            PreadFull(obj.get(), raw, sizeof raw, 0, &got, rel).ok() && got == sizeof raw &&
            DecodeAppendHeader(raw, &h)) {
          inv->append_base[hex] = h.base.Hex();
        }
      }
    }
  }
  GUARD_RETURN_IF_ERROR(ListDir(fd, "pending", &names));
  for (const std::string& name : names) {
    struct stat st;
    if (::fstatat(fd, PendingPath(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
      inv->pending[name] = FileOf(PendingPath(name), st);
  }
  GUARD_RETURN_IF_ERROR(ListDir(fd, "resolved", &names));
  for (const std::string& name : names) {
    struct stat st;
    if (::fstatat(fd, ResolvedPath(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    inv->resolved[name] = FileOf(ResolvedPath(name), st);
    BlobKey key;
    if (ReadResolvedMarker(fd, name, &key).ok()) inv->resolved_key[name] = key.Hex();
  }
  GUARD_RETURN_IF_ERROR(ListDir(fd, "tmp", &names));
  for (const std::string& name : names) {
    struct stat st;
    if (::fstatat(fd, ("tmp/" + name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
      inv->temps.push_back(FileOf("tmp/" + name, st));
  }
  return Status::Ok();
}

void RestoreTrash(int store_dirfd) {
  std::vector<std::string> names;
  if (!ListDir(store_dirfd, kTrashDir, &names).ok()) return;
  for (const std::string& name : names) {
    std::string hex = ObjectKeyOf(name);
    std::string from = std::string(kTrashDir) + "/" + name;
    if (hex.empty()) {
      (void)::unlinkat(store_dirfd, from.c_str(), 0);  // nothing of ours
      continue;
    }
    std::string dir = "objects/" + hex.substr(0, 2);
    (void)::mkdirat(store_dirfd, dir.c_str(), 0700);
    std::string to = dir + "/" + name;
    if (os::RenameNoReplace(store_dirfd, from.c_str(), store_dirfd, to.c_str()) != 0 && errno == EEXIST) {
      (void)::unlinkat(store_dirfd, from.c_str(), 0);  // the same content is back already
    }
  }
}

Status SweepStore(const std::string& store_dir, const StoreInventory& inv, const StoreMarks& marks,
                  const SweepOptions& options, SweepReport* report) {
  *report = SweepReport();
  UniqueFd store;
  GUARD_RETURN_IF_ERROR(OpenFile(store_dir, O_RDONLY | O_DIRECTORY, 0, &store));
  int fd = store.get();
  // A marked pending name keeps the object it resolved to.
  std::set<std::string> keys = marks.keys;
  for (const std::string& name : marks.pending) {
    if (auto it = inv.resolved_key.find(name); it != inv.resolved_key.end()) keys.insert(it->second);
  }
  // Bases of the append objects there are stay (their chains have depth
  // at most kAppendMaxDepth: no loop to fear, but none followed twice).
  for (const auto& [hex, base] : inv.append_base) keys.insert(base);
  size_t total = inv.objects.size() + inv.pending.size() + inv.resolved.size() + inv.temps.size();
  size_t done = 0;
  auto step = [&] {
    ++done;
    if (options.progress && (done % 64 == 0 || done == total)) options.progress(done, total);
  };
  std::unordered_map<ino_t, uint64_t> removed;
  std::unordered_set<ino_t> kept;

  for (const auto& [hex, files] : inv.objects) {
    step();
    for (const StoreFile& f : files) {
      if (keys.count(hex) != 0) {
        kept.insert(f.ino);
        continue;
      }
      if (f.mtime_ns >= options.cut_ns) {
        ++report->kept_recent;
        kept.insert(f.ino);
        continue;
      }
      if (!options.dry_run) {
        // Moved aside first, then looked at again: a writer that refreshed
        // the object just before the move (it is about to name it) is seen
        // here, and one that comes after finds it gone and stores its own.
        std::string name = f.rel.substr(f.rel.rfind('/') + 1);
        std::string trash = std::string(kTrashDir) + "/" + name;
        if (::renameat(fd, f.rel.c_str(), fd, trash.c_str()) != 0) {
          kept.insert(f.ino);  // gone already, or cannot be moved: left as it is
          continue;
        }
        struct stat st;
        if (::fstatat(fd, trash.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && TimespecNs(st.st_mtim) >= options.cut_ns) {
          if (os::RenameNoReplace(fd, trash.c_str(), fd, f.rel.c_str()) != 0)
            (void)::unlinkat(fd, trash.c_str(), 0);  // EEXIST: the writer stored it again
          ++report->kept_recent;
          kept.insert(f.ino);
          continue;
        }
        if (::unlinkat(fd, trash.c_str(), 0) != 0) {
          kept.insert(f.ino);
          continue;
        }
      }
      ++report->objects;
      removed[f.ino] = f.bytes;
    }
  }
  // Pending blobs: the user's inode, so ctime (set by the adopting link)
  // dates the adoption; mtime is the user's.
  for (const auto& [name, f] : inv.pending) {
    step();
    if (marks.pending.count(name) != 0 || f.ctime_ns >= options.cut_ns) {
      if (marks.pending.count(name) == 0) ++report->kept_recent;
      kept.insert(f.ino);
      continue;
    }
    if (!options.dry_run && ::unlinkat(fd, f.rel.c_str(), 0) != 0) {
      kept.insert(f.ino);
      continue;
    }
    ++report->pending;
    removed[f.ino] = f.bytes;
  }
  for (const auto& [name, f] : inv.resolved) {
    step();
    if (marks.pending.count(name) != 0 || f.mtime_ns >= options.cut_ns) {
      kept.insert(f.ino);
      continue;
    }
    if (!options.dry_run && ::unlinkat(fd, f.rel.c_str(), 0) != 0) continue;
    ++report->markers;
    removed[f.ino] = f.bytes;
  }
  int64_t now = WallNowNs();
  for (const StoreFile& f : inv.temps) {
    step();
    std::string name = f.rel.substr(4);
    if (now - f.mtime_ns < options.temp_age_ns || !WriterGone(name)) continue;
    if (!options.dry_run && ::unlinkat(fd, f.rel.c_str(), 0) != 0) continue;
    ++report->temps;
    removed[f.ino] = f.bytes;
  }
  for (const auto& [ino, bytes] : removed) {
    if (kept.count(ino) == 0) report->bytes += bytes;
  }
  return Status::Ok();
}

}  // namespace guard
