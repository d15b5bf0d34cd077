#include "common/blob_codec.h"

#include <fcntl.h>

#include <string>

#include "common/file_io.h"

namespace guard {

namespace {

Status ZstdError(std::string_view what, size_t code) {
  std::string msg(what);
  msg += ": ";
  msg += ZSTD_getErrorName(code);
  return Status::IOError(msg);
}

BlobKey KeyOf(XXH3_state_t* state) {
  XXH128_hash_t h = XXH3_128bits_digest(state);
  return BlobKey{h.high64, h.low64};
}

// A compression context and the output buffer are costly to make (the
// context's tables are megabytes, zeroed page by page on first use), and a
// session stores thousands of small blobs: each thread keeps the last
// encoder's pair for its next one.
struct SpareEncoderState {
  std::unique_ptr<ZSTD_CCtx, ZstdCCtxFree> cctx;
  std::unique_ptr<char[]> out;
};
thread_local SpareEncoderState t_spare;

}  // namespace

BlobEncoder::BlobEncoder(int out_fd, bool compress) : out_fd_(out_fd), raw_out_(out_fd), compress_(compress) {}

BlobEncoder::~BlobEncoder() {
  if (cctx_ && !t_spare.cctx) t_spare.cctx = std::move(cctx_);
  if (out_ && !t_spare.out) t_spare.out = std::move(out_);
}

Status BlobEncoder::Init() {
  hash_.reset(XXH3_createState());
  if (!compress_) {
    if (!hash_) return Status::IOError("blob encoder: out of memory");
    if (XXH3_128bits_reset(hash_.get()) != XXH_OK) return Status::IOError("blob encoder: xxh3 reset");
    mode_ = Mode::kRaw;
    return Status::Ok();
  }
  if (t_spare.cctx && ZSTD_isError(ZSTD_CCtx_reset(t_spare.cctx.get(), ZSTD_reset_session_and_parameters)) == 0) {
    cctx_ = std::move(t_spare.cctx);
  } else {
    cctx_.reset(ZSTD_createCCtx());
  }
  // Room for the whole compressed first chunk, so that the encoding can be
  // chosen before anything is written.
  out_cap_ = ZSTD_compressBound(kBlobChunkSize);
  if (t_spare.out) {
    out_ = std::move(t_spare.out);
  } else {
    out_.reset(new (std::nothrow) char[out_cap_]);
  }
  if (!hash_ || !cctx_ || !out_) return Status::IOError("blob encoder: out of memory");
  if (XXH3_128bits_reset(hash_.get()) != XXH_OK) return Status::IOError("blob encoder: xxh3 reset");
  size_t r = ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_compressionLevel, kBlobZstdLevel);
  if (!ZSTD_isError(r))
    r = ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_windowLog, kBlobZstdWindowLog);
  // The store hashes the content itself; zstd's own checksum would be redundant.
  if (!ZSTD_isError(r)) r = ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_checksumFlag, 0);
  if (ZSTD_isError(r)) return ZstdError("zstd parameters", r);
  return Status::Ok();
}

BlobKey BlobEncoder::key() const { return KeyOf(hash_.get()); }

// Compresses the first chunk into out_ without writing it, then keeps zstd
// only if it saved at least 10%. A first chunk that does not compress is taken
// to mean the rest will not either (media, archives, random keys): deciding
// once keeps the work per byte constant.
Status BlobEncoder::Decide(const char* data, size_t n, bool last) {
  // A content that fits in one chunk is known whole: told its size, zstd
  // sizes its tables to it instead of clearing ones made for megabytes.
  if (last) {
    size_t r = ZSTD_CCtx_setPledgedSrcSize(cctx_.get(), n);
    if (ZSTD_isError(r)) return ZstdError("zstd pledged size", r);
  }
  ZSTD_inBuffer in{data, n, 0};
  ZSTD_outBuffer out{out_.get(), out_cap_, 0};
  bool fits = true;
  for (;;) {
    size_t r = ZSTD_compressStream2(cctx_.get(), &out, &in, last ? ZSTD_e_end : ZSTD_e_flush);
    if (ZSTD_isError(r)) return ZstdError("zstd compress", r);
    if (r == 0) break;  // input consumed and everything flushed
    if (out.pos == out.size) {
      fits = false;  // larger than the bound: certainly not worth it
      break;
    }
  }
  if (fits && out.pos * 10 <= n * 9) {
    mode_ = Mode::kZstd;
    return WriteAll(out_fd_, out_.get(), out.pos, "blob write");
  }
  mode_ = Mode::kRaw;
  cctx_.reset();  // its window holds up to 2 MiB that a raw blob does not need
  return AddRaw(data, n, last);
}

Status BlobEncoder::AddRaw(const char* data, size_t n, bool last) {
  GUARD_RETURN_IF_ERROR(raw_out_.Write(data, n));
  return last ? raw_out_.Finish() : Status::Ok();
}

Status BlobEncoder::Add(const char* data, size_t n, bool last) {
  if (n > 0 && XXH3_128bits_update(hash_.get(), data, n) != XXH_OK) {
    return Status::IOError("blob encoder: xxh3 update");
  }
  size_ += n;
  if (mode_ == Mode::kUndecided) {
    if (n == 0) {
      // The empty blob is stored raw: a zstd frame would be larger than it.
      if (last) mode_ = Mode::kRaw;
      return Status::Ok();
    }
    if (compress_) return Decide(data, n, last);
    mode_ = Mode::kRaw;
  }
  if (mode_ == Mode::kRaw) return AddRaw(data, n, last);

  ZSTD_EndDirective end = last ? ZSTD_e_end : ZSTD_e_continue;
  ZSTD_inBuffer in{data, n, 0};
  for (;;) {
    ZSTD_outBuffer out{out_.get(), out_cap_, 0};
    size_t r = ZSTD_compressStream2(cctx_.get(), &out, &in, end);
    if (ZSTD_isError(r)) return ZstdError("zstd compress", r);
    if (out.pos > 0) GUARD_RETURN_IF_ERROR(WriteAll(out_fd_, out_.get(), out.pos, "blob write"));
    // e_continue is done once the input is taken (zstd may keep some of it
    // buffered for the next call); e_end once the frame is fully flushed.
    if (last ? r == 0 : in.pos == in.size) break;
  }
  return Status::Ok();
}

Status DecodeBlob(int in_fd, bool compressed, const BlobSink& sink, BlobKey* key, uint64_t* size) {
  std::unique_ptr<XXH3_state_t, XxhStateFree> hash(XXH3_createState());
  std::unique_ptr<char[]> in_buf(new (std::nothrow) char[kBlobChunkSize]);
  if (!hash || !in_buf) return Status::IOError("blob decoder: out of memory");
  XXH3_128bits_reset(hash.get());
  uint64_t total = 0;
  auto emit = [&](const char* p, size_t n) -> Status {
    if (n == 0) return Status::Ok();
    XXH3_128bits_update(hash.get(), p, n);
    total += n;
    return sink(p, n);
  };

  std::unique_ptr<ZSTD_DCtx, ZstdDCtxFree> dctx;
  std::unique_ptr<char[]> out_buf;
  size_t out_cap = ZSTD_DStreamOutSize();
  if (compressed) {
    dctx.reset(ZSTD_createDCtx());
    out_buf.reset(new (std::nothrow) char[out_cap]);
    if (!dctx || !out_buf) return Status::IOError("blob decoder: out of memory");
    size_t r = ZSTD_DCtx_setParameter(dctx.get(), ZSTD_d_windowLogMax, kBlobZstdMaxWindowLog);
    if (ZSTD_isError(r)) return ZstdError("zstd parameters", r);
  }

  bool saw_input = false;
  bool frame_done = false;
  off_t offset = 0;
  SparseReader raw_in(in_fd);
  for (;;) {
    size_t got = 0;
    GUARD_RETURN_IF_ERROR(compressed ? PreadFull(in_fd, in_buf.get(), kBlobChunkSize, offset, &got, "blob read")
                                     : raw_in.ReadFull(in_buf.get(), kBlobChunkSize, offset, &got));
    if (got == 0) break;
    offset += static_cast<off_t>(got);
    if (!compressed) {
      GUARD_RETURN_IF_ERROR(emit(in_buf.get(), got));
      if (got < kBlobChunkSize) break;  // the end of the file: no read to find it again
      continue;
    }
    if (frame_done) return Status::Corruption("data after the end of the zstd frame");
    saw_input = true;
    ZSTD_inBuffer in{in_buf.get(), got, 0};
    ZSTD_outBuffer out{out_buf.get(), out_cap, 0};
    // Call again while input remains, or while the last call filled the
    // output (zstd may hold more decoded data than fitted).
    do {
      out = ZSTD_outBuffer{out_buf.get(), out_cap, 0};
      size_t r = ZSTD_decompressStream(dctx.get(), &out, &in);
      if (ZSTD_isError(r)) {
        return Status::Corruption(std::string("zstd frame does not decode: ") +
                                  ZSTD_getErrorName(r));
      }
      GUARD_RETURN_IF_ERROR(emit(out_buf.get(), out.pos));
      if (r == 0) {
        frame_done = true;
        if (in.pos < in.size) return Status::Corruption("data after the end of the zstd frame");
      }
    } while (in.pos < in.size || out.pos == out.size);
    if (got < kBlobChunkSize) break;  // PreadFull stops short only at end of file
  }
  if (compressed && (!saw_input || !frame_done)) {
    return Status::Corruption("zstd frame is truncated");
  }
  *key = KeyOf(hash.get());
  if (size) *size = total;
  return Status::Ok();
}

}  // namespace guard
