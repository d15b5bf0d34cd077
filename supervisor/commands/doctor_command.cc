#include "supervisor/commands/doctor_command.h"

#include <CLI/CLI.hpp>
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "common/file_io.h"
#include "supervisor/base/config.h"
#include "supervisor/base/json_schema.h"
#include "supervisor/base/path_escape.h"
#include "supervisor/base/tool_process.h"
#include "supervisor/commands/doctor_probes.h"
#include "supervisor/commands/subcommand.h"

#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

extern char** environ;  // every platform's, declared by none of the headers on macOS

namespace guard {

const char* const DoctorCommand::kSummary = "Say which capture modes work on this machine, and try each one";

const char* const DoctorCommand::kHelp =
    "Probes what each capture mode needs (ptrace, seccomp, user namespaces, inotify's limits, clones\n"
    "at the current directory's filesystem, the preload shim; on a Mac APFS, FSEvents and whether\n"
    "the agent's binary is hardened), then, in each mode whose needs are met, runs a short capture\n"
    "in a temporary directory with a temporary state directory, undoes it and replays it, and\n"
    "compares the trees byte for byte. Nothing is left behind: no session in your state directory,\n"
    "no file in your tree. Ends with what each mode cannot promise here.\n"
    "Exit status 0 when at least one mode works, 1 when none does.\n"
    "--json: the findings and the modes as one object (docs/json.md).";

namespace {

using Findings = std::map<std::string, Finding>;

bool Has(const Findings& f, const char* key) {
  auto it = f.find(key);
  return it != f.end() && it->second.ok;
}

// What a mode cannot promise on this machine in particular.
std::vector<std::string> HereNotes(const std::string& mode, const Findings& f) {
  std::vector<std::string> out;
  if ((mode == "auto" || mode == "preload") && !Has(f, "user_namespaces")) {
    out.push_back("no user namespaces here: the state directory is not hidden from the command");
  }
  if (mode == "auto" && !Has(f, "shim")) out.push_back("no shim: the tracer captures alone, slower");
  if (mode == "preload" && !Has(f, "user_namespaces")) {
    out.push_back("if guard dies, what the command started runs on (no user namespace marks the session's processes)");
  }
  if (mode == "watch") {
    std::vector<std::string> here = WatchHereNotes(f);
    out.insert(out.end(), here.begin(), here.end());
  }
  return out;
}

const std::vector<DoctorMode> kModes = {
    {"auto", {"ptrace", "seccomp"},
     "a raw system call's path rewritten by another thread between guard's look and the kernel's (the path "
     "race); gdb or strace inside the session fail (one tracer per process); sudo inside fails (no new privileges)"},
    {"trace", {"ptrace", "seccomp"},
     "the path race for every call; each changing call stops in the tracer (slower than auto); no debugger "
     "or sudo inside the session"},
    {"preload", {"shim"},
     "static programs and raw system calls are neither captured nor stopped (Bun's raw openat, Go, "
     "busybox-static); a program of the session can stop or kill guard"},
    // Watch mode: the row is shown once `--mode watch` is accepted.
    {"watch", {WatchSourceKey()},
     "it cannot tell whose change it sees (your own edits during the session become part of it); writes "
     "between two saves merge; no change can be refused (no block policy); changes through a shared mapping "
     "or on network and FUSE filesystems may be late or missed"},
};

// The tree's entries: relative path -> kind, mode and content.
std::map<std::string, std::string> Snapshot(const std::string& root) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string rel = fs::relative(it->path(), root, ec).string();
    fs::file_status st = it->symlink_status(ec);
    if (fs::is_symlink(st)) {
      out[rel] = "l:" + fs::read_symlink(it->path(), ec).string();
    } else if (fs::is_directory(st)) {
      out[rel] = "d";
    } else {
      std::string content;
      (void)ReadFileToString(it->path().string(), &content);
      out[rel] = "f" + std::to_string(static_cast<int>(st.permissions())) + ":" + content;
    }
  }
  return out;
}

std::string SelfPath() {
#ifdef __APPLE__
  char buf[PATH_MAX];
  uint32_t size = sizeof buf;
  if (_NSGetExecutablePath(buf, &size) == 0) return buf;
  return "guard";
#else
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "guard";
  buf[n] = '\0';
  return buf;
#endif
}

struct Trial {
  bool ran = false;
  bool ok = false;
  std::string detail;
  double seconds = 0;
};

// What the trial's command does: a file rewritten, one deleted, one renamed,
// a directory and a file in it made.
constexpr char kTrialScript[] =
    "echo after > edit.txt && rm gone.txt && mv keep.txt kept.txt && mkdir made && echo new > made/new.txt";

Trial RunTrial(const std::string& mode) {
  Trial t;
  t.ran = true;
  const char* tmp = getenv("TMPDIR");
  std::string base = std::string(tmp != nullptr && *tmp == '/' ? tmp : "/tmp") + "/guard-doctor-XXXXXX";
  if (mkdtemp(base.data()) == nullptr) {
    t.detail = "cannot make a temporary directory: " + std::string(std::strerror(errno));
    return t;
  }
  const std::string tree = base + "/tree", home = base + "/home", config = base + "/config";
  Status s = MakeDirs(tree, 0700);
  if (s.ok()) s = MakeDirs(config + "/guard", 0700);
  // No automatic gc: it would outlive the trial's directory.
  if (s.ok()) s = WriteFileAtomic(config + "/guard/config.toml", "[retention]\nauto_gc = false\n", 0600);
  for (const auto& [name, text] : std::map<std::string, std::string>{
           {"edit.txt", "before\n"}, {"gone.txt", "deleted\n"}, {"keep.txt", "moved\n"}}) {
    if (s.ok()) s = WriteFileAtomic(tree + "/" + name, text, 0644);
  }
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    // Not this shell's session, state or preloads: the trial's own.
    if (kv.rfind("GUARD_", 0) == 0 || kv.rfind("LD_PRELOAD=", 0) == 0 || kv.rfind("XDG_CONFIG_HOME=", 0) == 0) continue;
    env.push_back(kv);
  }
  env.push_back("GUARD_HOME=" + home);
  env.push_back("XDG_CONFIG_HOME=" + config);
  const std::string guard = SelfPath();
  const int64_t start = MonoNowNs();
  auto run = [&](std::vector<std::string> argv, const char* what) {
    if (!s.ok()) return;
    ToolRun r;
    r.argv = std::move(argv);
    r.env = env;
    r.cwd = tree;
    r.label = what;
    std::string out;
    s = RunTool(r, &out);
  };
  const auto before = s.ok() ? Snapshot(tree) : std::map<std::string, std::string>();
  run({guard, "--quiet", "--mode", mode, "--root", tree, "--", "sh", "-c", kTrialScript}, "the capture");
  const auto after = Snapshot(tree);
  if (s.ok() && (after == before || after.count("made/new.txt") == 0)) s = Status::IOError("the command changed nothing");
  run({guard, "undo", "--yes", "--root", tree}, "the undo");
  if (s.ok() && Snapshot(tree) != before) s = Status::IOError("the undo did not give the tree back as it was");
  run({guard, "replay", "--yes", "--root", tree}, "the replay");
  if (s.ok() && Snapshot(tree) != after) s = Status::IOError("the replay did not give the command's tree back");
  t.seconds = static_cast<double>(MonoNowNs() - start) / 1e9;
  t.ok = s.ok();
  t.detail = t.ok ? "capture, undo and replay gave the trees back byte for byte" : s.ToString();
  std::error_code ec;
  std::filesystem::remove_all(base, ec);
  return t;
}

}  // namespace

const std::vector<DoctorMode>& DoctorModes() { return kModes; }

int DoctorCommand::Run() {
  char cwd[PATH_MAX];
  const std::string here = getcwd(cwd, sizeof cwd) != nullptr ? cwd : "/";
  std::vector<Finding> list = ProbeMachine(here);
  Findings findings;
  for (const Finding& f : list) findings[f.key] = f;

  nlohmann::ordered_json json;
  json["schema"] = kJsonSchemaVersion;
  json["machine"] = DescribeMachine(here);
  json["findings"] = nlohmann::ordered_json::array();
  std::string text = "guard doctor: " + EscapeForTerminal(DescribeMachine(here)) + "\n";
  // Inside a session the probes see the session (a traced process cannot
  // trace), not the machine.
  if (const char* inside = getenv("GUARD_SESSION"); inside != nullptr && *inside != '\0') {
    text += "  (inside guard session " + EscapeForTerminal(inside) + ": what follows is the session's view; run it "
            "outside for the machine's)\n";
    json["inside_session"] = inside;
  }
  for (const Finding& f : list) {
    nlohmann::ordered_json j{{"key", f.key}, {"ok", f.ok}, {"detail", f.detail}};
    for (const auto& [name, value] : f.values) j[name] = value;
    json["findings"].push_back(j);
    char line[64];
    std::snprintf(line, sizeof line, "  %-16s %-4s ", f.key.c_str(), f.ok ? "yes" : "no");
    text += line + EscapeForTerminal(f.detail) + "\n";
  }
  text += "modes:\n";
  std::string promises = "what each mode cannot promise here:\n";
  json["modes"] = nlohmann::ordered_json::array();
  bool any = false;
  for (const DoctorMode& m : kModes) {
    if (!CheckMode(m.mode).empty() || !PlatformHasMode(m.mode)) continue;  // not a mode of this build
    std::vector<std::string> missing;
    for (const char* need : m.needs) {
      if (!Has(findings, need)) missing.push_back(need);
    }
    Trial trial;
    if (missing.empty()) trial = RunTrial(m.mode);
    any |= trial.ok;
    nlohmann::ordered_json j{{"mode", m.mode}, {"works", trial.ok}, {"missing", missing}};
    j["trial"] = {{"ran", trial.ran}, {"ok", trial.ok}, {"seconds", trial.seconds}, {"detail", trial.detail}};
    j["cannot_promise"] = m.cannot_promise;
    std::vector<std::string> notes = HereNotes(m.mode, findings);
    j["here"] = notes;
    json["modes"].push_back(j);
    char head[64];
    std::snprintf(head, sizeof head, "  %-8s %-9s ", m.mode, trial.ok ? "works" : "no");
    if (!missing.empty()) {
      std::string names;
      for (const std::string& n : missing) names += (names.empty() ? "" : ", ") + n;
      text += head + std::string("needs ") + names + "\n";
    } else {
      char secs[32];
      std::snprintf(secs, sizeof secs, " (%.2f s)", trial.seconds);
      text += head + EscapeForTerminal(trial.detail) + secs + "\n";
    }
    if (trial.ok) {
      promises += "  " + std::string(m.mode) + ": " + m.cannot_promise + "\n";
      for (const std::string& n : notes) promises += "    here: " + n + "\n";
    }
  }
  json["works"] = any;
  if (options_.json) {
    std::printf("%s\n", json.dump(2).c_str());
  } else {
    std::fputs((text + (any ? promises : "no capture mode works on this machine\n")).c_str(), stdout);
  }
  return any ? 0 : 1;
}

// The command line of `guard doctor` (subcommand.h).
namespace {

class DoctorSubcommand final : public CommandSubcommand<DoctorCommand> {
 public:
  void Declare(CLI::App* cmd, SharedOptions*) override {
    cmd->description(DoctorCommand::kSummary)->footer(DoctorCommand::kHelp);
    cmd->add_flag("--json", options_.json, "The findings and the modes as one JSON object");
  }
};

}  // namespace

std::unique_ptr<Subcommand> MakeDoctorSubcommand() { return std::make_unique<DoctorSubcommand>(); }

}  // namespace guard
