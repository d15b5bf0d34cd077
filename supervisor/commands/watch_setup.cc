#include "supervisor/commands/watch_setup.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <spdlog/spdlog.h>

#include "supervisor/base/units.h"

namespace guard {

Status WatchOptionsFromEnv(const std::string& root, const std::vector<std::string>& own, WatchedTreeOptions* out,
                           bool* by_git) {
  out->root = root;
  for (const std::string& o : own) {
    if (!o.empty()) out->excluded.push_back(o);
  }
  if (const char* budget = std::getenv("GUARD_WATCH_BASELINE_BYTES"); budget != nullptr && *budget != '\0') {
    char* end = nullptr;
    unsigned long long v = std::strtoull(budget, &end, 10);
    if (end == budget || *end != '\0') {
      return Status::InvalidArgument(std::string("GUARD_WATCH_BASELINE_BYTES: not a number: ") + budget);
    }
    out->baseline_budget = v;
  }
  *by_git = true;
  if (const char* how = std::getenv("GUARD_WATCH_BASELINE"); how != nullptr && *how != '\0') {
    const std::string h = std::string(",") + how + ",";
    *by_git = h.find(",git,") != std::string::npos;
    out->clone = h.find(",clone,") != std::string::npos;
    std::string rest = h;
    for (const char* word : {",git,", ",clone,", ",copy,"}) {
      for (size_t at; (at = rest.find(word)) != std::string::npos;) rest.replace(at, std::strlen(word), ",");
    }
    if (rest != ",") return Status::InvalidArgument(std::string("GUARD_WATCH_BASELINE: not a list of git, clone, copy: ") + how);
  }
  return Status::Ok();
}

void LogBaselineWithoutCopy(spdlog::logger& log, const BaselineSummary& baseline) {
  if (baseline.cloned > 0 || baseline.kept > 0) {
    log.info("watch: baseline without copying: {} files ({}) by clone, {} files ({}) by git object id", baseline.cloned,
             FormatSize(baseline.cloned_bytes), baseline.kept, FormatSize(baseline.kept_bytes));
  }
  if (!baseline.clone_error.empty()) log.info("watch: no clones here: {}", baseline.clone_error);
}

void PrintSessionEndLine(const std::string& id, size_t touched, size_t refused, size_t not_captured,
                         const BaselineSummary& baseline, const SessionMeta& meta) {
  std::string counts;
  if (refused) counts += ", " + std::to_string(refused) + " changes refused";
  if (not_captured) counts += ", " + std::to_string(not_captured) + " changes not captured";
  if (baseline.name_only > 0) {
    // The baseline's budget (watched_tree.h): a change to one of these
    // has no pre-image, and is counted above as not captured.
    counts += ", " + std::to_string(baseline.name_only) + " large files kept by name only at the start (" +
              FormatSize(baseline.name_only_bytes) + ")";
  }
  // What to do next, when there is something to look at (-q: no line at all).
  const char* next = touched > 0 ? "; review: guard diff, revert: guard undo" : "";
  std::fprintf(stderr, "guard: session %s: %zu path%s touched%s%s\n", id.c_str(), touched, touched == 1 ? "" : "s",
               counts.c_str(), next);
  if (const std::string line = LogIncompleteLine(meta); !line.empty()) {
    std::fprintf(stderr, "guard: session %s: %s\n", id.c_str(), line.c_str());
  }
}

}  // namespace guard
