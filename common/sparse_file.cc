#include "common/sparse_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/file_io.h"

namespace guard {

bool IsAllZero(const char* p, size_t n) {
  // Word by word where aligned; memcmp against itself shifted would read
  // twice.
  size_t i = 0;
  for (; i < n && (reinterpret_cast<uintptr_t>(p + i) % sizeof(uint64_t)) != 0; ++i)
    if (p[i] != 0) return false;
  for (; i + sizeof(uint64_t) * 4 <= n; i += sizeof(uint64_t) * 4) {
    const uint64_t* w = reinterpret_cast<const uint64_t*>(p + i);
    if ((w[0] | w[1] | w[2] | w[3]) != 0) return false;
  }
  for (; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

Status SparseReader::Probe(off_t offset, bool* at_end) {
  *at_end = false;
  off_t data = ::lseek(fd_, offset, SEEK_DATA);
  if (data < 0 && errno == ENXIO) {
    // No data at or past offset: a hole up to the end of the file, or the end.
    struct stat st;
    if (::fstat(fd_, &st) != 0) return Status::FromErrno("blob source stat", errno);
    if (offset >= st.st_size) {
      *at_end = true;
      return Status::Ok();
    }
    hole_begin_ = offset;
    hole_end_ = st.st_size;
    return Status::Ok();
  }
  if (data < 0) {
    seek_works_ = false;  // EINVAL and the like: read everything
    return Status::Ok();
  }
  if (data > offset) {
    hole_begin_ = offset;
    hole_end_ = data;
    return Status::Ok();
  }
  off_t hole = ::lseek(fd_, data, SEEK_HOLE);
  if (hole < 0) {
    seek_works_ = false;
    return Status::Ok();
  }
  data_begin_ = data;
  data_end_ = hole;
  return Status::Ok();
}

Status SparseReader::ReadFull(char* buf, size_t n, off_t offset, size_t* got) {
  *got = 0;
  if (!looked_) {
    looked_ = true;
    struct stat st;
    // 512-byte units, whatever the block size (POSIX leaves it open; Linux
    // counts so). A file of inline data (ext4 inline_data) has no blocks
    // and is probed as before.
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_blocks * 512 >= st.st_size) {
      seek_works_ = false;
      size_ = st.st_size;
    }
  }
  while (*got < n) {
    const off_t at = offset + static_cast<off_t>(*got);
    size_t room = n - *got;
    if (!seek_works_) {
      if (size_ >= 0) {
        if (at >= size_) return Status::Ok();
        room = static_cast<size_t>(std::min<off_t>(static_cast<off_t>(room), size_ - at));
      }
      size_t more = 0;
      GUARD_RETURN_IF_ERROR(PreadFull(fd_, buf + *got, room, at, &more, "blob source read"));
      *got += more;
      return Status::Ok();
    }
    if (at >= hole_begin_ && at < hole_end_) {
      size_t k = static_cast<size_t>(std::min<off_t>(static_cast<off_t>(room), hole_end_ - at));
      std::memset(buf + *got, 0, k);
      *got += k;
      continue;
    }
    if (!(at >= data_begin_ && at < data_end_)) {
      bool at_end = false;
      GUARD_RETURN_IF_ERROR(Probe(at, &at_end));
      if (at_end) return Status::Ok();
      continue;
    }
    size_t k = static_cast<size_t>(std::min<off_t>(static_cast<off_t>(room), data_end_ - at));
    size_t more = 0;
    GUARD_RETURN_IF_ERROR(PreadFull(fd_, buf + *got, k, at, &more, "blob source read"));
    *got += more;
    // The file shrank under the read: what was read is all there is.
    if (more < k) return Status::Ok();
  }
  return Status::Ok();
}

Status SparseWriter::Write(const char* data, size_t n) {
  size_t pos = 0;
  while (pos < n) {
    // Up to the next block boundary of the file, so that a skipped run
    // leaves whole blocks unallocated.
    size_t to_boundary = kBlock - static_cast<size_t>(offset_ % kBlock);
    size_t k = std::min(n - pos, to_boundary);
    // Extend the run over the whole blocks of zeros that follow, or of data.
    const bool zero = IsAllZero(data + pos, k);
    while (pos + k < n) {
      size_t next = std::min(n - pos - k, kBlock);
      if (IsAllZero(data + pos + k, next) != zero) break;
      k += next;
    }
    if (!zero) {
      GUARD_RETURN_IF_ERROR(PwriteAll(fd_, data + pos, k, static_cast<off_t>(offset_), "blob output"));
      written_ = offset_ + k;
    }
    offset_ += k;
    pos += k;
  }
  return Status::Ok();
}

Status SparseWriter::Finish() {
  if (written_ == offset_) return Status::Ok();
  if (GUARD_EINTR_RETRY(::ftruncate(fd_, static_cast<off_t>(offset_))) != 0)
    return Status::FromErrno("blob output: ftruncate", errno);
  written_ = offset_;
  return Status::Ok();
}

}  // namespace guard
