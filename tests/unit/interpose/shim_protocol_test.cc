// The shim's protocol check (interpose/linux/shim_protocol.h), table-driven:
// what guard's GUARD_SHIM_PROTOCOL says -> whether the shim agrees, and the
// word it leaves in the ring header's shim_mismatch (common/shim_interface.h).
// The ring is a real shared-memory object of this process, with only the
// line 0 every protocol keeps.
#define BOOST_TEST_MODULE shim_protocol
#include <boost/test/unit_test.hpp>

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "common/shim_interface.h"
#include "interpose/linux/shim_protocol.h"

// What shim_protocol.c needs of the rest of the shim.
long shim_own_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6) {
  long r = syscall(nr, a1, a2, a3, a4, a5, a6);
  return r < 0 ? -errno : r;
}
}

namespace {

// A segment /dev/shm/<name> of one header, removed at the end.
class Segment {
 public:
  explicit Segment(uint64_t magic = GUARD_RING_MAGIC) {
    name_ = "guard-protocol-test-" + std::to_string(getpid());
    int fd = shm_open(name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    BOOST_REQUIRE(fd >= 0);
    BOOST_REQUIRE_EQUAL(ftruncate(fd, GUARD_RING_HEADER_SIZE), 0);
    void* base = mmap(nullptr, GUARD_RING_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    BOOST_REQUIRE(base != MAP_FAILED);
    header_ = static_cast<guard_ring_header*>(base);
    header_->magic = magic;
    header_->version = GUARD_RING_VERSION;
  }
  ~Segment() {
    munmap(header_, GUARD_RING_HEADER_SIZE);
    shm_unlink(name_.c_str());
  }
  const std::string& name() const { return name_; }
  uint32_t word() const { return __atomic_load_n(&header_->shim_mismatch, __ATOMIC_RELAXED); }
  void set_word(uint32_t w) { header_->shim_mismatch = w; }

 private:
  std::string name_;
  guard_ring_header* header_ = nullptr;
};

// agrees() of an environment of `protocol` (nullptr: unset) and the ring.
int Agrees(const Segment& ring, const char* protocol, int alone, int block) {
  std::vector<std::string> env = {std::string(GUARD_ENV_SHIM_RING "=") + ring.name(), "GUARD_ROOT=/tree"};
  if (protocol != nullptr) env.push_back(std::string(GUARD_ENV_SHIM_PROTOCOL "=") + protocol);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  return shim_protocol_agrees(envp.data(), alone, block);
}

const std::string kOwn = std::to_string(GUARD_SHIM_PROTOCOL);
const std::string kNext = std::to_string(GUARD_SHIM_PROTOCOL + 1);
constexpr uint32_t kSeen = GUARD_SHIM_MISMATCH_SEEN | GUARD_SHIM_PROTOCOL;

BOOST_AUTO_TEST_CASE(TheShimAgreesOnlyWithItsOwnProtocolAndReportsEveryOtherInTheRing) {
  struct Row {
    const char* protocol;  // guard's, as the environment says it; nullptr: unset
    int alone, block;
    int agrees;
    uint32_t word;
  };
  const Row rows[] = {
      {kOwn.c_str(), 0, 1, 1, 0},
      {kOwn.c_str(), 1, 1, 1, 0},
      {kNext.c_str(), 0, 1, 0, kSeen | GUARD_SHIM_MISMATCH_BLOCK},
      {kNext.c_str(), 0, 0, 0, kSeen},
      {kNext.c_str(), 1, 1, 0, kSeen | GUARD_SHIM_MISMATCH_ALONE | GUARD_SHIM_MISMATCH_BLOCK},
      {kNext.c_str(), 1, 0, 0, kSeen | GUARD_SHIM_MISMATCH_ALONE},
      {"0", 0, 1, 0, kSeen | GUARD_SHIM_MISMATCH_BLOCK},
      // A guard from before the protocol sets none.
      {nullptr, 1, 1, 0, kSeen | GUARD_SHIM_MISMATCH_ALONE | GUARD_SHIM_MISMATCH_BLOCK},
      {"", 0, 0, 0, kSeen},
      {"1x", 0, 0, 0, kSeen},
      {"99999999999", 0, 0, 0, kSeen},
  };
  for (const Row& r : rows) {
    Segment ring;
    const std::string what = std::string("protocol ") + (r.protocol ? r.protocol : "(unset)") +
                             " alone " + std::to_string(r.alone) + " block " + std::to_string(r.block);
    BOOST_TEST(Agrees(ring, r.protocol, r.alone, r.block) == r.agrees, what);
    BOOST_TEST(ring.word() == r.word, what << ": word " << std::hex << ring.word());
  }
}

BOOST_AUTO_TEST_CASE(TheFirstShimToRefuseKeepsTheWord) {
  Segment ring;
  const uint32_t first = GUARD_SHIM_MISMATCH_SEEN | GUARD_SHIM_MISMATCH_ALONE | 7u;
  ring.set_word(first);
  BOOST_TEST(Agrees(ring, kNext.c_str(), 0, 0) == 0);
  BOOST_TEST(ring.word() == first);
}

BOOST_AUTO_TEST_CASE(ASegmentThatIsNoRingIsLeftUntouched) {
  Segment not_a_ring(UINT64_C(0x1234));
  BOOST_TEST(Agrees(not_a_ring, kNext.c_str(), 1, 1) == 0);
  BOOST_TEST(not_a_ring.word() == 0u);
}

BOOST_AUTO_TEST_CASE(ThisBuildSpeaksTheHeadersProtocol) { BOOST_TEST(shim_protocol_own() == GUARD_SHIM_PROTOCOL); }

}  // namespace
