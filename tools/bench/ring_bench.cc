// ring_bench: throughput of the shared-memory ring (common/ring_*.h), for
// docs/performance.md's "Ring" section (tools/bench/ring_bench.sh runs it).
//
//   ring_bench records --producers N --size BYTES --records PER_PRODUCER [--capacity BYTES]
//     N producer processes put PER_PRODUCER records of BYTES payload each;
//     this process drains them. Prints records/s and payload MB/s.
//   ring_bench pending --producers N --files PER_PRODUCER --file-size BYTES --how link|rename --dir DIR
//     what the shim does for a large pre-image: each producer moves a file
//     into the pending area (link, then the caller's unlink; or one rename),
//     puts a GUARD_RING_TYPE_PENDING_FILE record naming it, and this process
//     adopts each named file (one rename into DIR/store). Prints files/s and
//     pre-image bytes/s.
//
// Each run also prints the context switches of the consumer and of the
// producers (getrusage), which the machine's load changes less than the time.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/ring_consumer.h"
#include "common/ring_producer.h"
#include "common/ring_segment.h"

namespace {

struct Args {
  std::string mode;
  int producers = 1;
  uint32_t size = 64;
  uint64_t records = 200000;
  uint64_t capacity = 1 << 20;
  uint64_t files = 2000;
  uint64_t file_size = 1 << 20;
  std::string how = "link";
  std::string dir;
};

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "usage: ring_bench records --producers N --size B --records N [--capacity B]\n"
               "       ring_bench pending --producers N --files N --file-size B --how link|rename --dir D\n");
  std::exit(2);
}

Args Parse(int argc, char** argv) {
  Args a;
  if (argc < 2) Usage();
  a.mode = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--producers") a.producers = std::atoi(v.c_str());
    else if (k == "--size") a.size = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
    else if (k == "--records") a.records = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--capacity") a.capacity = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--files") a.files = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--file-size") a.file_size = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--how") a.how = v;
    else if (k == "--dir") a.dir = v;
    else Usage();
  }
  if (a.producers < 1 || (a.mode != "records" && a.mode != "pending")) Usage();
  if (a.mode == "pending" && (a.dir.empty() || (a.how != "link" && a.how != "rename"))) Usage();
  return a;
}

long ContextSwitches(int who) {
  rusage ru{};
  ::getrusage(who, &ru);
  return ru.ru_nvcsw + ru.ru_nivcsw;
}

[[noreturn]] void Die(const std::string& what) {
  std::perror(what.c_str());
  std::exit(1);
}

// Children wait for this before they start, so that forking is not timed.
std::atomic<int>* StartFlag() {
  void* m = ::mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) Die("mmap");
  return new (m) std::atomic<int>(0);
}

std::string FileName(int producer, uint64_t i) {
  return "p" + std::to_string(producer) + "-" + std::to_string(i);
}

int RunProducer(const Args& a, const guard::RingSegment& seg, int id, std::atomic<int>* start) {
  guard_ring_producer p;
  if (guard_ring_producer_init(&p, seg.base(), seg.size()) != 0) return 1;
  while (start->load(std::memory_order_acquire) == 0) {
  }
  if (a.mode == "records") {
    std::vector<uint8_t> payload(a.size, static_cast<uint8_t>(id));
    for (uint64_t i = 0; i < a.records; ++i)
      if (guard_ring_put(&p, GUARD_RING_TYPE_FIRST_USER, payload.data(), a.size) != 0) return 1;
    return 0;
  }
  int src = ::open((a.dir + "/src").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int pending = ::open((a.dir + "/pending").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (src < 0 || pending < 0) return 1;
  for (uint64_t i = 0; i < a.files; ++i) {
    std::string name = FileName(id, i);
    if (a.how == "link") {
      // A delete: the pre-image is the inode itself, kept by a link; then
      // the caller's own unlink runs.
      if (::linkat(src, name.c_str(), pending, name.c_str(), 0) != 0) return 1;
    } else {
      // A rename over: the shim moves the old file aside in one rename.
      if (::renameat(src, name.c_str(), pending, name.c_str()) != 0) return 1;
    }
    guard_ring_pending_file rec{a.file_size, GUARD_RING_PENDING_LINKED,
                                static_cast<uint32_t>(name.size())};
    guard_ring_part parts[] = {{&rec, sizeof rec}, {name.data(), static_cast<uint32_t>(name.size())}};
    if (guard_ring_putv(&p, GUARD_RING_TYPE_PENDING_FILE, parts, 2) != 0) return 1;
    if (a.how == "link" && ::unlinkat(src, name.c_str(), 0) != 0) return 1;
  }
  return 0;
}

void PrepareFiles(const Args& a) {
  for (const char* sub : {"", "/src", "/pending", "/store"})
    if (::mkdir((a.dir + sub).c_str(), 0700) != 0 && errno != EEXIST) Die("mkdir " + a.dir + sub);
  std::vector<char> block(1 << 16, 'x');
  for (int p = 0; p < a.producers; ++p)
    for (uint64_t i = 0; i < a.files; ++i) {
      std::string path = a.dir + "/src/" + FileName(p, i);
      int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0) Die("open " + path);
      for (uint64_t left = a.file_size; left > 0;) {
        size_t n = left < block.size() ? left : block.size();
        if (::write(fd, block.data(), n) != static_cast<ssize_t>(n)) Die("write " + path);
        left -= n;
      }
      ::close(fd);
    }
  ::sync();
}

}  // namespace

int main(int argc, char** argv) {
  // tools/bench/shim_micro.sh: a segment for a shim with no consumer; its
  // name on stdout, left in place for the caller to remove.
  if (argc == 2 && std::string(argv[1]) == "--make-segment") {
    guard::RingSegment made;
    guard::Status s = guard::RingSegment::Create(uint64_t{8} << 20, &made);
    if (!s.ok()) {
      std::fprintf(stderr, "ring_bench: %s\n", s.ToString().c_str());
      return 1;
    }
    std::printf("%s\n", made.name().c_str());
    return 0;
  }
  Args a = Parse(argc, argv);
  if (a.mode == "pending") PrepareFiles(a);
  guard::RingSegment seg;
  guard::Status st = guard::RingSegment::Create(a.capacity, &seg);
  if (!st.ok()) {
    std::fprintf(stderr, "ring_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  guard::RingConsumer consumer;
  st = consumer.Attach(seg.base(), seg.size());
  if (!st.ok()) {
    std::fprintf(stderr, "ring_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  std::atomic<int>* start = StartFlag();
  std::vector<pid_t> kids;
  for (int i = 0; i < a.producers; ++i) {
    pid_t pid = ::fork();
    if (pid < 0) Die("fork");
    if (pid == 0) ::_exit(RunProducer(a, seg, i, start));
    kids.push_back(pid);
  }
  int pending = a.mode == "pending" ? ::open((a.dir + "/pending").c_str(), O_RDONLY | O_DIRECTORY) : -1;
  int store = a.mode == "pending" ? ::open((a.dir + "/store").c_str(), O_RDONLY | O_DIRECTORY) : -1;
  const uint64_t want = static_cast<uint64_t>(a.producers) * (a.mode == "records" ? a.records : a.files);
  uint64_t got = 0, bytes = 0;
  bool failed = false;
  auto handle = [&](const guard::RingRecord& r) {
    ++got;
    bytes += r.payload.size();
    if (a.mode == "pending") {
      guard_ring_pending_file rec;
      std::memcpy(&rec, r.payload.data(), sizeof rec);
      std::string name(reinterpret_cast<const char*>(r.payload.data()) + sizeof rec, rec.name_length);
      // Adoption: one rename of the pending file into the store.
      if (::renameat(pending, name.c_str(), store, name.c_str()) != 0) failed = true;
    }
    return true;
  };
  long ctx_before = ContextSwitches(RUSAGE_SELF);
  auto t0 = std::chrono::steady_clock::now();
  start->store(1, std::memory_order_release);
  while (got < want) {
    if (consumer.Drain(handle) == 0) consumer.Wait(10);
  }
  auto t1 = std::chrono::steady_clock::now();
  long ctx_consumer = ContextSwitches(RUSAGE_SELF) - ctx_before;
  for (pid_t pid : kids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (status != 0) failed = true;
  }
  long ctx_producers = ContextSwitches(RUSAGE_CHILDREN);
  (void)guard::RingSegment::Remove(seg.name());
  double secs = std::chrono::duration<double>(t1 - t0).count();
  if (a.mode == "records") {
    std::printf("mode=records producers=%d size=%u records=%llu seconds=%.4f records_per_s=%.0f "
                "payload_mb_per_s=%.1f consumer_ctx=%ld producer_ctx=%ld\n",
                a.producers, a.size, static_cast<unsigned long long>(got), secs, got / secs,
                bytes / secs / 1e6, ctx_consumer, ctx_producers);
  } else {
    double preimage_bytes = static_cast<double>(got) * static_cast<double>(a.file_size);
    std::printf("mode=pending producers=%d how=%s files=%llu file_size=%llu seconds=%.4f files_per_s=%.0f "
                "preimage_mb_per_s=%.1f consumer_ctx=%ld producer_ctx=%ld\n",
                a.producers, a.how.c_str(), static_cast<unsigned long long>(got),
                static_cast<unsigned long long>(a.file_size), secs, got / secs, preimage_bytes / secs / 1e6,
                ctx_consumer, ctx_producers);
  }
  return failed ? 1 : 0;
}
