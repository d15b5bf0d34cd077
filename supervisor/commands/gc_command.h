// `guard gc [--dry-run] [--keep DURATION] [--max-size SIZE] [--keep-newest N]`:
// removes whole sessions, oldest first, while one is older than the keep
// duration or the state directory is over the size cap, then the blobs no
// kept session names. Never a running session, one that needs recovery, or
// one of the newest N of its root. Defaults from config.toml (docs/gc.md).
// `guard gc --auto` is what a session's end starts in the background: it
// does nothing unless the store is over the policy, and never waits.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "supervisor/base/config.h"
#include "supervisor/session/garbage_collector.h"

namespace guard {

class GcCommand {
 public:
  struct Options {
    bool dry_run = false;
    std::string keep;      // "" : the setting
    std::string max_size;  // "" : the setting
    int64_t keep_newest = -1;  // -1: the setting
    bool automatic = false;
  };
  static const char* const kSummary;
  static const char* const kHelp;

  GcCommand(Options options, const Settings& settings) : options_(std::move(options)), settings_(settings) {}
  int Run();

  // The policy of `settings` with `options`' flags over it, or "" with *error.
  static bool ResolvePolicy(const Options& options, const Settings& settings, RetentionPolicy* policy,
                            std::string* error);

 private:
  Options options_;
  Settings settings_;
};

// Prints what a gc or forget did (or, dry, would do) to `out`.
void PrintGcReport(const GcReport& report, const RetentionPolicy* policy, bool dry_run, const char* verb,
                   std::FILE* out);

}  // namespace guard
