#include "supervisor/git/pack_writer.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "common/file_io.h"
#include "supervisor/git/git_test_pause.h"

namespace guard {
namespace {

constexpr size_t kHashSize = 20;             // SHA-1
constexpr size_t kFlushAt = 1 << 20;         // bytes buffered before a write
constexpr size_t kDeflateOut = 256 << 10;    // zlib output per call
constexpr uint64_t kDeflateIn = 1ull << 30;  // zlib input per call (avail_in is 32 bits)
constexpr uint32_t kLargeOffset = 0x80000000u;

void PutBe32(std::string* out, uint32_t v) {
  const char b[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  out->append(b, 4);
}

void PutBe64(std::string* out, uint64_t v) {
  PutBe32(out, uint32_t(v >> 32));
  PutBe32(out, uint32_t(v));
}

std::string Hex(const unsigned char* hash) {
  std::string s;
  char b[3];
  for (size_t i = 0; i < kHashSize; ++i) {
    std::snprintf(b, sizeof b, "%02x", hash[i]);
    s += b;
  }
  return s;
}

// Renames `from` to `dir`/`name`. A pack's name is the hash of its content,
// so a file already there under that name holds the same bytes.
Status Install(const std::string& from, const std::string& dir, const std::string& name) {
  std::string to = dir + "/" + name;
  if (::rename(from.c_str(), to.c_str()) != 0) return Status::FromErrno("rename " + from + " to " + to, errno);
  return Status::Ok();
}

}  // namespace

PackWriter::PackWriter() = default;

PackWriter::~PackWriter() {
  if (zstream_ready_) deflateEnd(&zstream_);
  if (!tmp_pack_.empty()) ::unlink(tmp_pack_.c_str());
}

Status PackWriter::Begin(const std::string& pack_dir, uint32_t count) {
  dir_ = pack_dir;
  count_ = count;
  entries_.reserve(count);
  GUARD_RETURN_IF_ERROR(MakeDirs(pack_dir, 0755));
  std::string tmp = pack_dir + "/tmp_pack_XXXXXX";
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(tmp, errno);
  fd_ = UniqueFd(fd);
  tmp_pack_ = tmp;
  sha1_ = std::make_unique<Sha1>();
  if (!sha1_->Init()) return Status::IOError("pack: SHA-1 unavailable");
  // Fastest: a checkpoint is written while the user works; git gc
  // recompresses what it turns into deltas.
  if (deflateInit(&zstream_, Z_BEST_SPEED) != Z_OK) return Status::IOError("pack: zlib initialisation failed");
  zstream_ready_ = true;
  zbuf_.resize(kDeflateOut);
  std::string header = "PACK";
  PutBe32(&header, 2);
  PutBe32(&header, count);
  return Emit(header.data(), header.size());
}

Status PackWriter::Add(const git_oid& id, git_object_t type, const void* data, size_t size) {
  GUARD_RETURN_IF_ERROR(BeginObject(id, type, size));
  GUARD_RETURN_IF_ERROR(Feed(data, size, /*last=*/true));
  return EndObject();
}

Status PackWriter::AddStream(const git_oid& id, git_object_t type, uint64_t size, const Producer& produce) {
  GUARD_RETURN_IF_ERROR(BeginObject(id, type, size));
  GUARD_RETURN_IF_ERROR(produce([this](const char* p, size_t n) { return Feed(p, n, /*last=*/false); }));
  GUARD_RETURN_IF_ERROR(Feed(nullptr, 0, /*last=*/true));
  return EndObject();
}

Status PackWriter::BeginObject(const git_oid& id, git_object_t type, uint64_t size) {
  if (entries_.size() == count_) return Status::InvalidArgument("pack: more objects than announced");
  if (type < GIT_OBJECT_COMMIT || type > GIT_OBJECT_TAG) return Status::InvalidArgument("pack: not a git object type");
  entries_.push_back({id, 0, offset_});
  unsigned char header[16];
  size_t n = 0;
  uint64_t rest = size;
  unsigned char c = static_cast<unsigned char>((type << 4) | (rest & 0x0f));
  for (rest >>= 4; rest != 0; rest >>= 7) {
    header[n++] = c | 0x80;
    c = rest & 0x7f;
  }
  header[n++] = c;
  crc_ = crc32(0, header, static_cast<uInt>(n));
  object_size_ = size;
  object_fed_ = 0;
  GUARD_RETURN_IF_ERROR(Emit(header, n));
  if (deflateReset(&zstream_) != Z_OK) return Status::IOError("pack: zlib reset failed");
  return Status::Ok();
}

Status PackWriter::Feed(const void* data, size_t size, bool last) {
  object_fed_ += size;
  if (object_fed_ > object_size_) return Status::InvalidArgument("pack: an object is longer than announced");
  const Bytef* in = static_cast<const Bytef*>(data);
  uint64_t left = size;
  do {
    uint64_t chunk = std::min(left, kDeflateIn);
    zstream_.next_in = const_cast<Bytef*>(in);
    zstream_.avail_in = static_cast<uInt>(chunk);
    in += chunk;
    left -= chunk;
    int flush = last && left == 0 ? Z_FINISH : Z_NO_FLUSH;
    int rc;
    do {
      zstream_.next_out = zbuf_.data();
      zstream_.avail_out = static_cast<uInt>(zbuf_.size());
      rc = deflate(&zstream_, flush);
      if (rc == Z_STREAM_ERROR) return Status::IOError("pack: zlib failed");
      size_t produced = zbuf_.size() - zstream_.avail_out;
      crc_ = crc32(crc_, zbuf_.data(), static_cast<uInt>(produced));
      GUARD_RETURN_IF_ERROR(Emit(zbuf_.data(), produced));
    } while (zstream_.avail_out == 0);
    if (flush == Z_FINISH && rc != Z_STREAM_END) return Status::IOError("pack: zlib did not finish the stream");
  } while (left > 0);
  return Status::Ok();
}

Status PackWriter::EndObject() {
  if (object_fed_ != object_size_) {
    return Status::InvalidArgument("pack: an object is " + std::to_string(object_fed_) + " bytes, announced " +
                                   std::to_string(object_size_));
  }
  entries_.back().crc = static_cast<uint32_t>(crc_);
  return Status::Ok();
}

Status PackWriter::Emit(const void* data, size_t size) {
  if (!sha1_->Update(data, size)) return Status::IOError("pack: SHA-1 failed");
  buffer_.append(static_cast<const char*>(data), size);
  offset_ += size;
  return buffer_.size() >= kFlushAt ? Flush() : Status::Ok();
}

Status PackWriter::Flush() {
  Status s = WriteAll(fd_.get(), buffer_.data(), buffer_.size(), tmp_pack_);
  buffer_.clear();
  return s;
}

Status PackWriter::Finish(std::string* name, std::string* keep) {
  keep->clear();
  if (entries_.size() != count_) {
    return Status::InvalidArgument("pack: " + std::to_string(count_) + " objects announced, " +
                                   std::to_string(entries_.size()) + " added");
  }
  unsigned char pack_hash[kHashSize];
  if (!sha1_->Final(pack_hash)) return Status::IOError("pack: SHA-1 failed");
  buffer_.append(reinterpret_cast<const char*>(pack_hash), kHashSize);  // the trailer is not hashed
  GUARD_RETURN_IF_ERROR(Flush());
  if (::fchmod(fd_.get(), 0444) != 0) return Status::FromErrno(tmp_pack_, errno);
  GUARD_RETURN_IF_ERROR(FsyncFd(fd_.get(), tmp_pack_));
  fd_ = UniqueFd();

  std::sort(entries_.begin(), entries_.end(),
            [](const Entry& a, const Entry& b) { return git_oid_cmp(&a.id, &b.id) < 0; });
  for (size_t i = 1; i < entries_.size(); ++i) {
    if (git_oid_equal(&entries_[i - 1].id, &entries_[i].id)) {
      return Status::InvalidArgument("pack: object added twice");
    }
  }
  std::string idx = "\377tOc";
  PutBe32(&idx, 2);
  size_t at = 0;
  for (unsigned first = 0; first < 256; ++first) {
    while (at < entries_.size() && entries_[at].id.id[0] <= first) ++at;
    PutBe32(&idx, static_cast<uint32_t>(at));
  }
  for (const Entry& e : entries_) idx.append(reinterpret_cast<const char*>(e.id.id), kHashSize);
  for (const Entry& e : entries_) PutBe32(&idx, e.crc);
  std::vector<uint64_t> large;
  for (const Entry& e : entries_) {
    if (e.offset < kLargeOffset) {
      PutBe32(&idx, static_cast<uint32_t>(e.offset));
    } else {
      PutBe32(&idx, kLargeOffset | static_cast<uint32_t>(large.size()));
      large.push_back(e.offset);
    }
  }
  for (uint64_t offset : large) PutBe64(&idx, offset);
  idx.append(reinterpret_cast<const char*>(pack_hash), kHashSize);
  unsigned char idx_hash[kHashSize];
  if (!Sha1::Of(idx.data(), idx.size(), idx_hash)) {
    return Status::IOError("pack index: SHA-1 failed");
  }
  idx.append(reinterpret_cast<const char*>(idx_hash), kHashSize);

  std::string tmp_idx = dir_ + "/tmp_idx_XXXXXX";
  int fd = ::mkostemp(tmp_idx.data(), O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(tmp_idx, errno);
  UniqueFd idx_fd(fd);
  Status s = WriteAll(idx_fd.get(), idx.data(), idx.size(), tmp_idx);
  if (s.ok() && ::fchmod(idx_fd.get(), 0444) != 0) s = Status::FromErrno(tmp_idx, errno);
  if (s.ok()) s = FsyncFd(idx_fd.get(), tmp_idx);
  idx_fd = UniqueFd();
  *name = "pack-" + Hex(pack_hash);
  if (s.ok()) {
    const std::string kept = dir_ + "/" + *name + ".keep";
    int k = ::open(kept.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
    if (k >= 0) {
      UniqueFd keep_fd(k);
      static constexpr char kWhy[] = "guard: until a ref names its objects\n";
      s = WriteAll(keep_fd.get(), kWhy, sizeof kWhy - 1, kept);
      *keep = kept;
    } else if (errno != EEXIST) {
      s = Status::FromErrno(kept, errno);
    }
  }
  GitTestPause("pack-rename");
  if (s.ok()) s = Install(tmp_pack_, dir_, *name + ".pack");
  if (s.ok()) {
    tmp_pack_.clear();
    s = Install(tmp_idx, dir_, *name + ".idx");
  }
  if (!s.ok()) {
    ::unlink(tmp_idx.c_str());
    if (!keep->empty()) ::unlink(keep->c_str());
    keep->clear();
    return s;
  }
  return FsyncDir(dir_);
}

}  // namespace guard
