#include "supervisor/review/git_tree_diff.h"

#include <strings.h>

#include <cstdlib>

#include "common/file_io.h"
#include "supervisor/base/tool_process.h"

namespace guard {
namespace {

// Highest-precedence attributes: every attribute that could change bytes on
// the way into the repository or the way a diff is made is "unspecified".
constexpr char kNeutralAttributes[] =
    "* !text !eol !crlf !filter !diff !merge !ident !working-tree-encoding\n";

// -c settings for every git call; they win over any config file.
const char* const kConfig[] = {
    "core.quotepath=on",           "core.symlinks=true",
    "core.filemode=true",          "core.autocrlf=false",
    "core.safecrlf=false",         "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null", "core.hooksPath=/dev/null",
    "core.fsmonitor=false",        "core.protectNTFS=false",
    "core.protectHFS=false",       "core.precomposeUnicode=false",
    "diff.noprefix=false",         "diff.mnemonicPrefix=false",
    "diff.relative=false",         "gc.auto=0",
    "maintenance.auto=false",      "safe.directory=*",
    "init.defaultBranch=guard",
};

}  // namespace

bool PathHasGitDir(const std::string& path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    size_t len = (slash == std::string::npos ? path.size() : slash) - start;
    if (len == 4 && ::strncasecmp(path.c_str() + start, ".git", 4) == 0) return true;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return false;
}

std::vector<std::string> GitTreeDiff::Env(const std::string& index, const std::string& work_tree) const {
  const char* path = std::getenv("PATH");
  std::vector<std::string> env = {
      std::string("PATH=") + (path != nullptr && *path ? path : "/usr/local/bin:/usr/bin:/bin"),
      "HOME=" + scratch_ + "/home",
      "XDG_CONFIG_HOME=" + scratch_ + "/home",
      "GIT_CONFIG_NOSYSTEM=1",
      "GIT_CONFIG_GLOBAL=/dev/null",
      "GIT_ATTR_NOSYSTEM=1",
      "GIT_DIR=" + git_dir_,
      "LC_ALL=C",
      "TZ=UTC",
  };
  if (!index.empty()) env.push_back("GIT_INDEX_FILE=" + index);
  if (!work_tree.empty()) env.push_back("GIT_WORK_TREE=" + work_tree);
  return env;
}

std::vector<std::string> GitTreeDiff::Argv(std::vector<std::string> args) const {
  std::vector<std::string> argv = {"git", "--no-pager"};
  for (const char* c : kConfig) {
    argv.push_back("-c");
    argv.push_back(c);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

Status GitTreeDiff::Create(const std::string& scratch, GitTreeDiff* out) {
  out->scratch_ = scratch;
  out->git_dir_ = scratch + "/git";
  out->trees_ = 0;
  GUARD_RETURN_IF_ERROR(MakeDirs(scratch + "/home", 0700));
  ToolRun run;
  run.argv = out->Argv({"init", "--quiet", "--bare", out->git_dir_});
  run.env = out->Env("", "");
  run.label = "git init";
  std::string ignored;
  GUARD_RETURN_IF_ERROR(RunTool(run, &ignored));
  GUARD_RETURN_IF_ERROR(MakeDirs(out->git_dir_ + "/info", 0700));
  return WriteFileAtomic(out->git_dir_ + "/info/attributes", kNeutralAttributes, 0600);
}

Status GitTreeDiff::AddTree(const std::string& work_tree, std::string* tree_id) {
  std::string index = scratch_ + "/index" + std::to_string(trees_++);
  ToolRun run;
  run.env = Env(index, work_tree);
  run.cwd = work_tree;
  run.argv = Argv({"add", "--all", "--force"});
  run.label = "git add";
  std::string out;
  GUARD_RETURN_IF_ERROR(RunTool(run, &out));
  run.argv = Argv({"write-tree"});
  run.label = "git write-tree";
  GUARD_RETURN_IF_ERROR(RunTool(run, &out));
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.empty()) return Status::IOError("git write-tree printed no tree id");
  *tree_id = out;
  return Status::Ok();
}

Status GitTreeDiff::Diff(const std::string& from, const std::string& to, Style style, int out_fd) {
  std::vector<std::string> args = {"diff",
                                   "--no-ext-diff",
                                   "--no-textconv",
                                   "--find-renames",
                                   "--src-prefix=a/",
                                   "--dst-prefix=b/",
                                   style.color ? "--color=always" : "--color=never"};
  if (style.binary) args.push_back("--binary");
  if (style.format == Style::Format::kStat) args.push_back("--stat");
  if (style.format == Style::Format::kNameOnly) args.push_back("--name-only");
  args.push_back(from);
  args.push_back(to);
  args.push_back("--");
  ToolRun run;
  run.argv = Argv(std::move(args));
  run.env = Env("", "");
  run.stdout_fd = out_fd;
  run.label = "git diff";
  return RunTool(run, nullptr);
}

}  // namespace guard
