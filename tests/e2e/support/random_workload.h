// Random workloads for the restore property tests: from one seed, a small
// tree (nested directories, text and binary files of assorted modes,
// symlinks, names with spaces) and a list of 10 to 25 steps that change it
// the way an agent's tools do (bash redirections, coreutils, python3 and
// node one-liners, a raw renameat2). Each step is a bash script run in the
// root by a process of its own; steps are generated against a model of the
// tree so that every one of them succeeds.
//
// The model is only used to choose valid steps: tests compare real
// snapshots of the tree, never the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace guard::e2e {

// SplitMix64: the same seed gives the same tree and steps everywhere
// (std:: distributions differ between standard libraries).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  uint64_t Below(uint64_t n);  // uniform in [0, n); n > 0
  bool Percent(int p);         // true with probability p/100
  template <class T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }

 private:
  uint64_t state_;
};

// Which operations a workload favours. Every mix can draw every kind of
// step; the weights differ.
enum class WorkloadMix {
  kFiles,        // content: create, overwrite, append, truncate, pwrite, chmod, renames
  kDirectories,  // structure: mkdir, rmdir, rm -rf, directory moves, file <-> directory
  kLinks,        // symlinks and hard links, replacing one kind of file with another
  kEverything,   // all of them evenly
};
const char* WorkloadMixName(WorkloadMix mix);

struct WorkloadStep {
  std::string kind;    // "overwrite", "rename-over", "dir-to-file", ...
  std::string script;  // bash, run with `set -e` in the root
};

struct Workload {
  uint64_t seed = 0;
  WorkloadMix mix = WorkloadMix::kEverything;
  std::vector<WorkloadStep> steps;
};

struct WorkloadPaths {
  std::string root;            // an existing empty directory: the tree is built here
  std::string outside;         // outside the root: some symlinks point there (by text only)
  std::string exchange_tool;   // tests/programs/rename_exchange
};

// Builds the seed's starting tree under paths.root (directly, not under
// guard) and returns the steps to run on it.
Workload MakeRandomWorkload(uint64_t seed, WorkloadMix mix, const WorkloadPaths& paths);

// One line per step ("  3 overwrite: printf ... > 'a b.txt'"), scripts cut
// at `max_script` characters, for failure messages.
std::string FormatSteps(const Workload& w, size_t max_script = 400);

// `s` quoted for bash as one word.
std::string ShellQuote(const std::string& s);

}  // namespace guard::e2e
