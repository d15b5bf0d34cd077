#include "supervisor/commands/gc_command.h"

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "common/clock.h"
#include "common/state_dir.h"
#include "supervisor/base/progress.h"
#include "supervisor/base/units.h"
#include "supervisor/commands/subcommand.h"

namespace guard {

const char* const GcCommand::kSummary =
    "Remove old sessions and the blobs no kept session needs (within the retention policy)";

const char* const GcCommand::kHelp =
    "Removes whole sessions, oldest first, while one ended longer ago than the keep duration or the\n"
    "state directory is over the size cap; then the blobs no remaining session names. It never\n"
    "removes a running session, one that needs recovery, or the newest sessions of each root.\n"
    "Defaults: [retention] in config.toml (guard config shows them). The same runs by itself after\n"
    "a session ends when the store is over the policy.";

bool GcCommand::ResolvePolicy(const Options& options, const Settings& settings, RetentionPolicy* policy,
                              std::string* error) {
  policy->keep_ns = settings.keep_ns.value;
  policy->max_bytes = settings.max_size.value;
  policy->keep_newest = settings.keep_newest.value;
  if (!options.keep.empty() && !ParseDuration(options.keep, &policy->keep_ns)) {
    *error = "--keep: '" + options.keep + "' is not a duration (a number and one of s, m, h, d, w: 30d)";
    return false;
  }
  if (!options.max_size.empty() && !ParseSize(options.max_size, &policy->max_bytes)) {
    *error = "--max-size: '" + options.max_size + "' is not a size (10GiB, 500MB, or bytes)";
    return false;
  }
  if (options.keep_newest >= 0) policy->keep_newest = options.keep_newest;
  return true;
}

void PrintGcReport(const GcReport& r, const RetentionPolicy* policy, bool dry_run, const char* verb,
                   std::FILE* out) {
  for (const RecoveryReport& rec : r.recovered)
    std::fprintf(out, "guard %s: recovered session %s first\n", verb, rec.id.c_str());
  if (policy != nullptr) {
    std::fprintf(out, "guard %s: policy: keep %s, at most %s, the newest %lld of each root\n", verb,
                 FormatDuration(policy->keep_ns).c_str(), FormatSize(policy->max_bytes).c_str(),
                 static_cast<long long>(policy->keep_newest));
  }
  for (size_t i = 0; i < r.plan.remove.size(); ++i) {
    const std::string& id = r.plan.remove[i];
    bool done = std::find(r.removed.begin(), r.removed.end(), id) != r.removed.end();
    if (!done) continue;
    const std::string& why = r.plan.why[i];
    std::string reason = why == "asked" ? "asked for"
                         : policy == nullptr ? why
                         : why == "age"      ? "ended more than " + FormatDuration(policy->keep_ns) + " ago"
                                             : "the state directory is over " + FormatSize(policy->max_bytes);
    std::fprintf(out, "guard %s: %s session %s (%s)\n", verb, dry_run ? "would remove" : "removed", id.c_str(),
                 reason.c_str());
  }
  for (const std::string& s : r.skipped) std::fprintf(out, "guard %s: kept session %s\n", verb, s.c_str());
  if (r.swept) {
    const SweepReport& w = r.sweep;
    std::fprintf(out, "guard %s: %s %zu blob%s, %zu pending blob%s, %zu marker%s, %zu temporary file%s: %s\n", verb,
                 dry_run ? "would sweep" : "swept", w.objects, w.objects == 1 ? "" : "s", w.pending,
                 w.pending == 1 ? "" : "s", w.markers, w.markers == 1 ? "" : "s", w.temps, w.temps == 1 ? "" : "s",
                 FormatSize(w.bytes).c_str());
  } else if (!r.no_sweep.empty()) {
    std::fprintf(out, "guard %s: no blob swept: %s\n", verb, r.no_sweep.c_str());
  }
  if (!r.compact_error.empty()) std::fprintf(out, "guard %s: warning: compression stopped: %s\n", verb, r.compact_error.c_str());
  if (r.compact.compressed > 0) {
    std::fprintf(out, "guard %s: compressed %zu blob%s stored raw by sessions: %s -> %s\n", verb,
                 r.compact.compressed, r.compact.compressed == 1 ? "" : "s", FormatSize(r.compact.bytes_before).c_str(),
                 FormatSize(r.compact.bytes_after).c_str());
  }
  std::fprintf(out, "guard %s: state directory %s -> %s%s%s (%.2f s)\n", verb,
               FormatSize(r.plan.total_before).c_str(), FormatSize(r.total_after).c_str(),
               dry_run ? " (projected)" : "",
               policy != nullptr && r.total_after > policy->max_bytes ? ", still over the cap: the rest is protected" : "",
               r.seconds);
}

int GcCommand::Run() {
  GcRequest request;
  std::string error;
  if (!ResolvePolicy(options_, settings_, &request.policy, &error)) {
    std::fprintf(stderr, "guard gc: %s\n", error.c_str());
    return 2;
  }
  if (options_.automatic) {
    // Started detached as a session ended: a state directory gone by now
    // (removed with the work it served) is not made again, empty.
    struct stat st;
    std::string path = DefaultStatePath();
    if (!path.empty() && ::stat(path.c_str(), &st) != 0 && errno == ENOENT) return 0;
  }
  StateDir state;
  Status s = StateDir::Open(&state);
  if (!s.ok()) {
    std::fprintf(stderr, "guard gc: state directory: %s\n", s.ToString().c_str());
    return 1;
  }
  request.dry_run = options_.dry_run;
  if (options_.automatic) {
    request.only_if_over = true;
    request.wait_for_lock = false;
    GcReport report;
    s = CollectGarbage(state, request, &report);
    // The automatic gc runs detached: its report goes to a file, one run's
    // worth (replaced each time, so it never grows).
    std::string log = state.path() + "/gc.log";
    if (std::FILE* f = std::fopen(log.c_str(), "we")) {  // "e": O_CLOEXEC
      if (!s.ok()) std::fprintf(f, "guard gc --auto: %s\n", s.ToString().c_str());
      else if (!report.ran) {
        std::fprintf(f, "guard gc --auto: within the policy (or another gc ran): nothing to do\n");
      }
      else PrintGcReport(report, &request.policy, false, "gc --auto", f);
      std::fclose(f);
    }
    return s.ok() ? 0 : 1;
  }

  Progress progress("guard gc");
  request.waiting = [] { std::fprintf(stderr, "guard gc: waiting for a restore or another gc to finish\n"); };
  request.progress = [&](const char* phase, size_t done, size_t total) { progress.Update(phase, done, total); };
  GcReport report;
  s = CollectGarbage(state, request, &report);
  progress.Done();
  if (!s.ok()) {
    std::fprintf(stderr, "guard gc: %s\n", s.ToString().c_str());
    return 1;
  }
  PrintGcReport(report, &request.policy, options_.dry_run, "gc", stdout);
  return 0;
}

// The command line of `guard gc` (subcommand.h).
namespace {

class GcSubcommand final : public Subcommand {
 public:
  void Declare(CLI::App* cmd, SharedOptions*) override {
    cmd->description(GcCommand::kSummary)->footer(GcCommand::kHelp);
    cmd->add_flag("--dry-run", options_.dry_run, "Only print what would be removed");
    cmd->add_option("--keep", options_.keep, "Remove sessions that ended longer ago than this (default: 30d)")
        ->type_name("DURATION");
    cmd->add_option("--max-size", options_.max_size, "Remove the oldest sessions while the state directory is "
                    "larger than this (default: 10GiB)")
        ->type_name("SIZE");
    cmd->add_option("--keep-newest", options_.keep_newest, "Never remove the newest N sessions of a root (default: 3)")
        ->type_name("N");
    cmd->add_flag("--auto", options_.automatic)->group("");
  }
  int Run(const Invocation& invocation) override { return GcCommand(options_, *invocation.settings).Run(); }

 private:
  GcCommand::Options options_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeGcSubcommand() { return std::make_unique<GcSubcommand>(); }

}  // namespace guard
