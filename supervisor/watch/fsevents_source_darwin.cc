// fsevents_source.h. The types and prototypes below are those of Apple's
// public documentation (CoreServices' FSEvents.h, CoreFoundation's
// CFBase.h, CFArray.h, CFString.h, libdispatch's queue.h), declared here
// because the cross-build has no framework headers.
#include "supervisor/watch/fsevents_source.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "supervisor/watch/fsevents_flags.h"
#include "supervisor/watch/fsevents_hints.h"

extern "C" {
typedef struct dispatch_queue_s* dispatch_queue_t;
dispatch_queue_t dispatch_queue_create(const char* label, void* attr);
void dispatch_release(void* object);
}

namespace guard {
namespace {

using CFIndex = long;
using CFAllocatorRef = const void*;
using CFStringRef = const void*;
using CFArrayRef = const void*;
using CFTimeInterval = double;
using FSEventStreamRef = void*;
using ConstFSEventStreamRef = const void*;
using FSEventStreamEventId = uint64_t;
constexpr uint32_t kCFStringEncodingUTF8 = 0x08000100;

struct FSEventStreamContext {
  CFIndex version;
  void* info;
  const void* (*retain)(const void*);
  void (*release)(const void*);
  CFStringRef (*copyDescription)(const void*);
};
using FSEventStreamCallback = void (*)(ConstFSEventStreamRef stream, void* info, size_t count, void* paths,
                                       const uint32_t flags[], const FSEventStreamEventId ids[]);

// The framework calls, looked up once.
struct Framework {
  CFStringRef (*string_create)(CFAllocatorRef, const char*, uint32_t);
  CFArrayRef (*array_create)(CFAllocatorRef, const void**, CFIndex, const void*);
  void (*release)(const void*);
  const void* array_callbacks;  // &kCFTypeArrayCallBacks
  FSEventStreamRef (*create)(CFAllocatorRef, FSEventStreamCallback, FSEventStreamContext*, CFArrayRef,
                             FSEventStreamEventId, CFTimeInterval, uint32_t);
  void (*set_queue)(FSEventStreamRef, dispatch_queue_t);
  bool (*start)(FSEventStreamRef);
  void (*flush_sync)(FSEventStreamRef);
  void (*stop)(FSEventStreamRef);
  void (*invalidate)(FSEventStreamRef);
  void (*stream_release)(FSEventStreamRef);
};

std::string DlError() {
  const char* e = dlerror();
  return e != nullptr ? e : "a symbol is missing";
}

template <typename T>
bool Find(void* lib, const char* name, T* out) {
  *out = reinterpret_cast<T>(dlsym(lib, name));
  return *out != nullptr;
}

Status LoadFramework(Framework* f) {
  // CoreServices re-exports CoreFoundation, so one image gives both.
  static const char kPath[] = "/System/Library/Frameworks/CoreServices.framework/CoreServices";
  void* lib = dlopen(kPath, RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) return Status::IOError("FSEvents: " + DlError());
  bool ok = Find(lib, "CFStringCreateWithCString", &f->string_create) && Find(lib, "CFArrayCreate", &f->array_create) &&
            Find(lib, "CFRelease", &f->release) && Find(lib, "kCFTypeArrayCallBacks", &f->array_callbacks) &&
            Find(lib, "FSEventStreamCreate", &f->create) && Find(lib, "FSEventStreamSetDispatchQueue", &f->set_queue) &&
            Find(lib, "FSEventStreamStart", &f->start) && Find(lib, "FSEventStreamFlushSync", &f->flush_sync) &&
            Find(lib, "FSEventStreamStop", &f->stop) && Find(lib, "FSEventStreamInvalidate", &f->invalidate) &&
            Find(lib, "FSEventStreamRelease", &f->stream_release);
  // Never dlclose'd: the stream's callbacks live in it.
  return ok ? Status::Ok() : Status::IOError("FSEvents: " + DlError());
}

class FsEventsSource final : public WatchSource {
 public:
  FsEventsSource(const Framework& f, std::string root, std::string canonical)
      : f_(f), mapper_(std::move(root), std::move(canonical)) {}

  ~FsEventsSource() override {
    if (stream_ != nullptr) {
      f_.stop(stream_);
      f_.invalidate(stream_);
      f_.stream_release(stream_);
    }
    if (queue_ != nullptr) dispatch_release(queue_);
  }

  Status Start(const std::string& canonical) {
    queue_ = dispatch_queue_create("guard.fsevents", nullptr);
    if (queue_ == nullptr) return Status::IOError("FSEvents: no dispatch queue");
    CFStringRef path = f_.string_create(nullptr, canonical.c_str(), kCFStringEncodingUTF8);
    if (path == nullptr) return Status::IOError("FSEvents: " + canonical + ": not a path CoreFoundation takes");
    const void* values[] = {path};
    CFArrayRef paths = f_.array_create(nullptr, values, 1, f_.array_callbacks);
    f_.release(path);
    if (paths == nullptr) return Status::IOError("FSEvents: no array");
    FSEventStreamContext context = {0, this, nullptr, nullptr, nullptr};
    // Latency: how long FSEvents gathers events before a delivery; NoDefer
    // delivers the first of a quiet spell at once. Drain flushes anyway.
    stream_ = f_.create(nullptr, &FsEventsSource::Callback, &context, paths, fsevents::kEventIdSinceNow, 0.05,
                        fsevents::kCreateFileEvents | fsevents::kCreateNoDefer | fsevents::kCreateWatchRoot);
    f_.release(paths);
    if (stream_ == nullptr) return Status::IOError("FSEvents: " + canonical + ": no stream");
    f_.set_queue(stream_, queue_);
    if (!f_.start(stream_)) return Status::IOError("FSEvents: " + canonical + ": the stream did not start");
    return Status::Ok();
  }

  Status Wait(std::vector<WatchHint>* out, std::chrono::milliseconds timeout) override {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [this] { return !pending_.empty(); });
    return TakeLocked(out);
  }

  Status Drain(std::vector<WatchHint>* out) override {
    // Synchronous: every event that had occurred has been through Callback
    // (on the queue's thread) when it returns.
    f_.flush_sync(stream_);
    std::lock_guard<std::mutex> lock(mu_);
    return TakeLocked(out);
  }

 private:
  static void Callback(ConstFSEventStreamRef, void* info, size_t count, void* paths, const uint32_t flags[],
                       const FSEventStreamEventId[]) {
    auto* self = static_cast<FsEventsSource*>(info);
    char** names = static_cast<char**>(paths);  // without UseCFTypes: C strings
    std::lock_guard<std::mutex> lock(self->mu_);
    for (size_t i = 0; i < count; ++i) self->pending_.push_back({names[i], flags[i]});
    self->cv_.notify_all();
  }

  Status TakeLocked(std::vector<WatchHint>* out) {
    mapper_.Decode(pending_, out);
    pending_.clear();
    return Status::Ok();
  }

  Framework f_;
  FsEventMapper mapper_;
  dispatch_queue_t queue_ = nullptr;
  FSEventStreamRef stream_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<FsEvent> pending_;  // guarded by mu_
};

}  // namespace

Status OpenFsEventsSource(const std::string& root, std::unique_ptr<WatchSource>* out) {
  static Framework framework;
  static Status loaded = LoadFramework(&framework);
  if (!loaded.ok()) return loaded;
  char real[PATH_MAX];
  if (realpath(root.c_str(), real) == nullptr) return Status::FromErrno(root, errno);
  auto source = std::make_unique<FsEventsSource>(framework, root, real);
  GUARD_RETURN_IF_ERROR(source->Start(real));
  *out = std::move(source);
  return Status::Ok();
}

}  // namespace guard
