// Holes in the files the store reads and writes (docs/format.md (Part II),
// "Holes"). The blob format knows nothing of them: a key hashes the logical
// content, zeros and all. Holes live on disk only: a raw object, a pending
// pre-image and a restored file skip the runs of zeros they hold, so a
// sparse file takes in the store and back in the tree about the disk its
// data takes. A file system without SEEK_HOLE reads as all data and gets
// the zeros written out: the same content, only more disk.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "common/status.h"

namespace guard {

// Whether the `n` bytes at `p` are all zero.
bool IsAllZero(const char* p, size_t n);

// Reads a file by offset as PreadFull does, but fills the holes that
// SEEK_DATA and SEEK_HOLE name with zeros instead of reading them. Moves
// the fd's file offset: only for an fd that is the reader's own.
class SparseReader {
 public:
  explicit SparseReader(int fd) : fd_(fd) {}
  // Reads up to `n` bytes at `offset`; *got < n only at the end of the file.
  Status ReadFull(char* buf, size_t n, off_t offset, size_t* got);

 private:
  // Learns what lies at `offset`: data up to data_end_, a hole up to
  // hole_end_, or the end of the file (*at_end).
  Status Probe(off_t offset, bool* at_end);

  int fd_;
  // Looked at once, by fstat: a file whose blocks cover its size has no
  // hole, and is read as it is, without SEEK_DATA and SEEK_HOLE (three
  // lseeks a file saved: a restore reads thousands of small blobs), and up
  // to that size: the bytes it had then, without a last read to find its
  // end (one pread64 a file restored). Bytes it gains meanwhile are left
  // out, as if read an instant earlier.
  bool looked_ = false;
  bool seek_works_ = true;
  off_t size_ = -1;  // the fstat's size, for a file read as it is; -1: read to the end
  off_t data_begin_ = 0, data_end_ = 0;  // [begin, end) is known data
  off_t hole_begin_ = 0, hole_end_ = 0;  // [begin, end) is known hole
};

// Writes content sequentially into a new, empty file from offset 0, leaving
// holes where whole runs of zeros are (at most a block's worth of zeros is
// written where data shares the block). Finish gives the file its size.
class SparseWriter {
 public:
  explicit SparseWriter(int fd) : fd_(fd) {}
  Status Write(const char* data, size_t n);
  // Sets the size when the content ended in skipped zeros. Call once, last.
  Status Finish();
  uint64_t size() const { return offset_; }

 private:
  static constexpr size_t kBlock = 4096;
  int fd_;
  uint64_t offset_ = 0;   // the content's length so far
  uint64_t written_ = 0;  // the file's length so far
};

}  // namespace guard
