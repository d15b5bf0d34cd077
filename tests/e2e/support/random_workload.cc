#include "tests/e2e/support/random_workload.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "tests/e2e/support/workspace.h"

namespace guard::e2e {

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Rng::Below(uint64_t n) {
  if (n == 0) throw std::logic_error("Rng::Below(0)");
  return Next() % n;  // the bias is irrelevant for n this small
}

bool Rng::Percent(int p) { return static_cast<int>(Below(100)) < p; }

const char* WorkloadMixName(WorkloadMix mix) {
  switch (mix) {
    case WorkloadMix::kFiles: return "files";
    case WorkloadMix::kDirectories: return "directories";
    case WorkloadMix::kLinks: return "links";
    case WorkloadMix::kEverything: return "everything";
  }
  return "?";
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

namespace {

// ---------------------------------------------------------------------------
// Quoting content and paths for the tools that write them.

bool IsPlain(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

std::string Hex2(unsigned char c) {
  static const char kDigits[] = "0123456789abcdef";
  return std::string{kDigits[c >> 4], kDigits[c & 15]};
}

// A bash printf format that prints exactly `data` (NUL bytes included).
std::string PrintfFormat(const std::string& data) {
  std::string out;
  for (unsigned char c : data) {
    if (IsPlain(c) || c == ' ') out += static_cast<char>(c);
    else out += "\\x" + Hex2(c);
  }
  return ShellQuote(out);
}

// A Python bytes literal.
std::string PyBytes(const std::string& data) {
  std::string out = "b\"";
  for (unsigned char c : data) {
    if (IsPlain(c) || c == ' ' || c == '.' || c == '/' || c == '-') out += static_cast<char>(c);
    else out += "\\x" + Hex2(c);
  }
  return out + "\"";
}

// A node Buffer holding `data` (fs accepts Buffers as paths too).
std::string NodeBuffer(const std::string& data) {
  std::string hex;
  for (unsigned char c : data) hex += Hex2(c);
  return "Buffer.from(\"" + hex + "\",\"hex\")";
}

// Debian's python3 when there is one: a python3 found first in PATH may be a
// version manager's shim (pyenv's costs 300 ms a start, Debian's 50).
const std::string& Python3() {
  static const std::string path = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  return path;
}

std::string Python(const std::string& code) { return Python3() + " -c " + ShellQuote(code); }
std::string NodeJs(const std::string& code) { return "node -e " + ShellQuote(code); }

std::string Octal(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

// ---------------------------------------------------------------------------
// The model of the tree: what exists, of which kind, and which names share
// an inode (hard links: writing one changes the other, which no journal
// record names, so in-place writes and chmods avoid them).

enum class Kind { kFile, kDir, kSymlink };

struct Node {
  Kind kind = Kind::kFile;
  int inode = 0;       // kFile: equal for hard links
  std::string target;  // kSymlink
};

std::string Join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

std::string Parent(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "" : p.substr(0, slash);
}

std::string Base(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Whether `p` is `dir` or lies below it ("" is the root, above everything).
bool AtOrUnder(const std::string& p, const std::string& dir) {
  if (dir.empty() || p == dir) return true;
  return p.size() > dir.size() && p.compare(0, dir.size(), dir) == 0 && p[dir.size()] == '/';
}

int Depth(const std::string& p) {
  return p.empty() ? 0 : 1 + static_cast<int>(std::count(p.begin(), p.end(), '/'));
}

class TreeModel {
 public:
  const Node* Get(const std::string& p) const {
    auto it = nodes_.find(p);
    return it == nodes_.end() ? nullptr : &it->second;
  }
  bool Has(const std::string& p) const { return nodes_.count(p) != 0; }
  bool Is(const std::string& p, Kind k) const {
    const Node* n = Get(p);
    return n != nullptr && n->kind == k;
  }

  std::vector<std::string> Of(Kind k) const {
    std::vector<std::string> out;
    for (const auto& [p, n] : nodes_) {
      if (n.kind == k) out.push_back(p);
    }
    return out;
  }
  // Directories, the root ("") first.
  std::vector<std::string> Dirs() const {
    std::vector<std::string> out{""};
    for (const std::string& d : Of(Kind::kDir)) out.push_back(d);
    return out;
  }
  int Links(int inode) const {
    int n = 0;
    for (const auto& [p, node] : nodes_) n += node.kind == Kind::kFile && node.inode == inode;
    return n;
  }
  // Regular files with one name: safe to change in place.
  std::vector<std::string> LoneFiles() const {
    std::vector<std::string> out;
    for (const std::string& f : Of(Kind::kFile)) {
      if (Links(Get(f)->inode) == 1) out.push_back(f);
    }
    return out;
  }
  bool IsEmptyDir(const std::string& d) const {
    for (const auto& [p, n] : nodes_) {
      if (p != d && AtOrUnder(p, d)) return false;
    }
    return true;
  }
  std::vector<std::string> Entries() const {
    std::vector<std::string> out;
    for (const auto& [p, n] : nodes_) out.push_back(p);
    return out;
  }

  void AddFile(const std::string& p) { nodes_[p] = Node{Kind::kFile, next_inode_++, ""}; }
  void AddLink(const std::string& existing, const std::string& p) { nodes_[p] = nodes_.at(existing); }
  void AddDir(const std::string& p) { nodes_[p] = Node{Kind::kDir, 0, ""}; }
  void AddSymlink(const std::string& p, const std::string& target) { nodes_[p] = Node{Kind::kSymlink, 0, target}; }

  // `p` and everything below it.
  std::map<std::string, Node> Take(const std::string& p) {
    std::map<std::string, Node> out;
    for (auto it = nodes_.begin(); it != nodes_.end();) {
      if (AtOrUnder(it->first, p)) {
        out.emplace(it->first, it->second);
        it = nodes_.erase(it);
      } else {
        ++it;
      }
    }
    return out;
  }
  void Put(const std::map<std::string, Node>& subtree, const std::string& from, const std::string& to) {
    for (const auto& [p, n] : subtree) nodes_[to + p.substr(from.size())] = n;
  }
  void Remove(const std::string& p) { Take(p); }
  void Move(const std::string& from, const std::string& to) {
    auto subtree = Take(from);
    Take(to);  // a file or an empty directory renamed over
    Put(subtree, from, to);
  }
  void Exchange(const std::string& a, const std::string& b) {
    auto ta = Take(a);
    auto tb = Take(b);
    Put(ta, a, b);
    Put(tb, b, a);
  }
  // A copy of directory `from` at `to`, as cp -R makes it: new inodes.
  void Copy(const std::string& from, const std::string& to) {
    std::map<std::string, Node> copied;
    for (const auto& [p, n] : nodes_) {
      if (!AtOrUnder(p, from)) continue;
      Node c = n;
      if (c.kind == Kind::kFile) c.inode = next_inode_++;
      copied.emplace(to + p.substr(from.size()), c);
    }
    for (auto& [p, n] : copied) nodes_[p] = n;
  }

 private:
  std::map<std::string, Node> nodes_;
  int next_inode_ = 1;
};

// ---------------------------------------------------------------------------

const std::vector<uint32_t> kDirModes = {0755, 0700, 0750, 0711, 0775, 01777, 02755};

std::vector<uint32_t> FileModes() {
  // Unreadable modes only as root: the snapshots must read every file.
  if (geteuid() == 0) return {0644, 0600, 0755, 0400, 0444, 0640, 0000, 04755, 02750, 0666, 0711};
  return {0644, 0600, 0755, 0640, 0666, 0700};
}

const std::vector<std::string> kWords = {"alpha", "beta", "gamma", "delta", "const", "return", "TODO", "fix",
                                         "the",   "end",  "x = 1", "{",     "}",     "#include", "naïve", ""};

class Generator {
 public:
  Generator(uint64_t seed, WorkloadMix mix, const WorkloadPaths& paths)
      : rng_(seed * 4 + static_cast<uint64_t>(mix) + 0x5eed), mix_(mix), paths_(paths) {}

  void BuildTree();
  std::vector<WorkloadStep> Steps();

 private:
  using StepFn = std::function<std::optional<std::string>()>;
  struct KindSpec {
    const char* name;
    int weight[4];  // per WorkloadMix
    StepFn fn;
  };
  std::vector<KindSpec> Kinds();

  std::string FreshName(bool dir);
  // A new path in a random directory at most 3 levels deep, and not at or
  // below `avoid` (a directory about to be moved or copied there).
  std::string FreshPath(bool dir, const std::optional<std::string>& avoid = std::nullopt);
  std::string Content();
  std::string SymlinkTarget(const std::string& link_parent);
  uint32_t FileMode() { return rng_.Pick(file_modes_); }

  // A script writing `data` to `path` (truncating, or appending), with a tool
  // picked at random.
  std::string WriteScript(const std::string& path, const std::string& data, bool append);

  std::optional<std::string> Pick(const std::vector<std::string>& v) {
    if (v.empty()) return std::nullopt;
    return rng_.Pick(v);
  }

  // Steps. Each returns the script, or nullopt when the tree offers nothing
  // it applies to; it updates the model as the script will change the tree.
  std::optional<std::string> Create();
  std::optional<std::string> Touch();
  std::optional<std::string> BigFile();
  std::optional<std::string> Overwrite();
  std::optional<std::string> Append();
  std::optional<std::string> Truncate();
  std::optional<std::string> Pwrite();
  std::optional<std::string> CopyFile();
  std::optional<std::string> Rename();
  std::optional<std::string> RenameOver();
  std::optional<std::string> Delete();
  std::optional<std::string> Chmod();
  std::optional<std::string> Mkdir();
  std::optional<std::string> MkdirP();
  std::optional<std::string> Rmdir();
  std::optional<std::string> RmRf();
  std::optional<std::string> MoveDir();
  std::optional<std::string> MoveDirInto();
  std::optional<std::string> MoveDirOverEmpty();
  std::optional<std::string> CopyDir();
  std::optional<std::string> FileToDir();
  std::optional<std::string> DirToFile();
  std::optional<std::string> Symlink();
  std::optional<std::string> RetargetSymlink();
  std::optional<std::string> SymlinkToFile();
  std::optional<std::string> FileToSymlink();
  std::optional<std::string> HardLink();
  std::optional<std::string> WriteThroughSymlink();
  std::optional<std::string> Exchange();

  Rng rng_;
  WorkloadMix mix_;
  WorkloadPaths paths_;
  TreeModel model_;
  std::vector<uint32_t> file_modes_ = FileModes();
  int counter_ = 0;
};

std::string Generator::FreshName(bool dir) {
  int n = ++counter_;
  std::string num = std::to_string(n);
  if (rng_.Percent(2)) return (dir ? "new\nline dir " : "new\nline ") + num;
  static const char* kFile[] = {"f%s.txt", "data %s.bin", "notes-%s", "Read Me %s.md", ".hidden%s",
                                "x%s",     "café %s",     "a  b%s",   "main%s.c",      "tab\t%s"};
  static const char* kDir[] = {"dir%s", "sub dir %s", "pkg%s", ".d%s", "build %s", "src%s"};
  const char* fmt = dir ? kDir[rng_.Below(6)] : kFile[rng_.Below(10)];
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, num.c_str());
  return buf;
}

std::string Generator::FreshPath(bool dir, const std::optional<std::string>& avoid) {
  std::vector<std::string> parents;
  for (const std::string& d : model_.Dirs()) {
    if (Depth(d) <= 3 && !(avoid && AtOrUnder(d, *avoid))) parents.push_back(d);
  }
  return Join(rng_.Pick(parents), FreshName(dir));
}

std::string Generator::Content() {
  int kind = static_cast<int>(rng_.Below(100));
  std::string out;
  if (kind < 10) return out;  // empty
  if (kind < 40) {            // binary
    size_t n = 1 + rng_.Below(200);
    for (size_t i = 0; i < n; ++i) out += static_cast<char>(rng_.Below(256));
    return out;
  }
  size_t lines = 1 + rng_.Below(kind < 90 ? 6 : 60);
  for (size_t i = 0; i < lines; ++i) {
    size_t words = rng_.Below(8);
    for (size_t w = 0; w < words; ++w) out += (w ? " " : "") + rng_.Pick(kWords);
    if (i + 1 < lines || rng_.Percent(80)) out += "\n";
  }
  return out;
}

std::string Generator::SymlinkTarget(const std::string& link_parent) {
  std::vector<std::string> siblings;
  for (const std::string& p : model_.Entries()) {
    if (Parent(p) == link_parent) siblings.push_back(Base(p));
  }
  switch (rng_.Below(6)) {
    case 0:
    case 1:
      if (!siblings.empty()) return rng_.Pick(siblings);  // may be written through later
      return "missing-" + std::to_string(++counter_);
    case 2:
      return "../" + (siblings.empty() ? std::string("up") : rng_.Pick(siblings));
    case 3:
      return paths_.outside + "/nowhere-" + std::to_string(++counter_);
    case 4:
      return "/etc/hostname";
    default:
      return "dangling " + std::to_string(++counter_) + "/x";
  }
}

void Generator::BuildTree() {
  const std::string& root = paths_.root;
  // Sometimes a slice of a real tree.
  if (rng_.Percent(30)) {
    glob_t g;
    if (glob("/usr/lib/python3*/json/*.py", 0, nullptr, &g) == 0) {
      MakeDir(root + "/lib", 0755);
      MakeDir(root + "/lib/json", 0755);
      model_.AddDir("lib");
      model_.AddDir("lib/json");
      for (size_t i = 0; i < g.gl_pathc && i < 3; ++i) {
        std::string name = Base(g.gl_pathv[i]);
        WriteFile(root + "/lib/json/" + name, ReadFile(g.gl_pathv[i]), 0644);
        model_.AddFile("lib/json/" + name);
      }
    }
    globfree(&g);
  }
  int entries = 12 + static_cast<int>(rng_.Below(20));
  std::vector<std::pair<std::string, uint32_t>> dir_modes;
  for (int i = 0; i < entries; ++i) {
    int what = static_cast<int>(rng_.Below(100));
    if (what < 25) {
      std::string p = FreshPath(true);
      MakeDir(root + "/" + p, 0755);
      model_.AddDir(p);
      dir_modes.emplace_back(p, rng_.Percent(60) ? 0755 : rng_.Pick(kDirModes));
    } else if (what < 85) {
      std::string p = FreshPath(false);
      WriteFile(root + "/" + p, Content(), FileMode());
      model_.AddFile(p);
    } else {
      std::string p = FreshPath(false);
      std::string target = SymlinkTarget(Parent(p));
      MakeSymlink(target, root + "/" + p);
      model_.AddSymlink(p, target);
    }
  }
  // Modes last: as root the order would not matter, but this way the tree
  // can be built by anyone.
  for (auto it = dir_modes.rbegin(); it != dir_modes.rend(); ++it) {
    if (chmod((root + "/" + it->first).c_str(), it->second) != 0) throw std::runtime_error("chmod " + it->first);
  }
}

std::string Generator::WriteScript(const std::string& path, const std::string& data, bool append) {
  std::string q = ShellQuote(path);
  int tool = static_cast<int>(rng_.Below(100));
  if (tool < 40) return "printf " + PrintfFormat(data) + (append ? " >> " : " > ") + q;
  if (tool < 65) {
    return Python(std::string("open(") + PyBytes(path) + (append ? ", \"ab\")" : ", \"wb\")") + ".write(" +
                  PyBytes(data) + ")");
  }
  if (tool < 75) return "printf " + PrintfFormat(data) + " | tee " + (append ? "-a " : "") + q + " > /dev/null";
  if (tool < 95) {
    return "printf " + PrintfFormat(data) + " | dd of=" + q + " status=none" +
           (append ? " oflag=append conv=notrunc" : "");
  }
  return NodeJs(std::string("require(\"fs\").") + (append ? "appendFileSync(" : "writeFileSync(") + NodeBuffer(path) +
              ", " + NodeBuffer(data) + ")");
}

std::optional<std::string> Generator::Create() {
  std::string p = FreshPath(false);
  model_.AddFile(p);
  return WriteScript(p, Content(), false);
}

std::optional<std::string> Generator::Touch() {
  std::string p = FreshPath(false);
  model_.AddFile(p);
  return "touch " + ShellQuote(p);
}

std::optional<std::string> Generator::BigFile() {
  // Large enough for compression and for capture by hard link to matter.
  std::string p;
  std::vector<std::string> lone = model_.LoneFiles();
  if (!lone.empty() && rng_.Percent(50)) {
    p = rng_.Pick(lone);
  } else {
    p = FreshPath(false);
    model_.AddFile(p);
  }
  uint64_t size = 60000 + rng_.Below(300000);
  if (rng_.Percent(50)) return "seq 1 " + std::to_string(size / 6) + " > " + ShellQuote(p);
  return Python("import random; r = random.Random(" + std::to_string(rng_.Below(1000000)) + "); open(" + PyBytes(p) +
                ", \"wb\").write(r.randbytes(" + std::to_string(size) + "))");
}

std::optional<std::string> Generator::Overwrite() {
  auto f = Pick(model_.LoneFiles());
  if (!f) return std::nullopt;
  std::string q = ShellQuote(*f);
  switch (rng_.Below(6)) {
    case 0:  // a temporary file renamed over it, as sed -i does
      return "sed -i -e 's/a/A/g' -e '1i inserted' " + q;
    case 1: {  // an editor's atomic save: write a new file, rename it over
      std::string tmp = Join(Parent(*f), FreshName(false));
      return Python("import os; open(" + PyBytes(tmp) + ", \"wb\").write(" + PyBytes(Content()) + "); os.replace(" +
                    PyBytes(tmp) + ", " + PyBytes(*f) + ")");
    }
    default:
      return WriteScript(*f, Content(), false);
  }
}

std::optional<std::string> Generator::Append() {
  auto f = Pick(model_.LoneFiles());
  if (!f) return std::nullopt;
  if (rng_.Percent(20)) return "echo 'appended line' >> " + ShellQuote(*f);
  return WriteScript(*f, Content(), true);
}

std::optional<std::string> Generator::Truncate() {
  auto f = Pick(model_.LoneFiles());
  if (!f) return std::nullopt;
  std::string size = std::to_string(rng_.Percent(30) ? 0 : rng_.Below(400));
  switch (rng_.Below(3)) {
    case 0: return "truncate -s " + size + " " + ShellQuote(*f);
    case 1: return Python("import os; os.truncate(" + PyBytes(*f) + ", " + size + ")");
    default: return ": > " + ShellQuote(*f);
  }
}

std::optional<std::string> Generator::Pwrite() {
  auto f = Pick(model_.LoneFiles());
  if (!f) return std::nullopt;
  std::string data = Content();
  if (data.empty()) data = "X";
  std::string offset = std::to_string(rng_.Below(300));  // past the end leaves a hole
  if (rng_.Percent(50)) {
    return Python("import os; fd = os.open(" + PyBytes(*f) + ", os.O_WRONLY); os.pwrite(fd, " + PyBytes(data) + ", " +
                  offset + "); os.close(fd)");
  }
  return "printf " + PrintfFormat(data) + " | dd of=" + ShellQuote(*f) + " bs=1 seek=" + offset +
         " conv=notrunc status=none";
}

std::optional<std::string> Generator::CopyFile() {
  auto src = Pick(model_.Of(Kind::kFile));
  if (!src) return std::nullopt;
  std::vector<std::string> dsts;
  for (const std::string& f : model_.LoneFiles()) {
    if (f != *src) dsts.push_back(f);
  }
  std::string dst;
  if (!dsts.empty() && rng_.Percent(40)) {
    dst = rng_.Pick(dsts);  // cp truncates and rewrites an existing file
  } else {
    dst = FreshPath(false);
    model_.AddFile(dst);
  }
  return "cp " + ShellQuote(*src) + " " + ShellQuote(dst);
}

std::optional<std::string> Generator::Rename() {
  std::vector<std::string> srcs = model_.Of(Kind::kFile);
  for (const std::string& s : model_.Of(Kind::kSymlink)) srcs.push_back(s);
  auto src = Pick(srcs);
  if (!src) return std::nullopt;
  std::string dst = FreshPath(false);
  model_.Move(*src, dst);
  if (rng_.Percent(50)) return "mv -T " + ShellQuote(*src) + " " + ShellQuote(dst);
  return Python("import os; os.rename(" + PyBytes(*src) + ", " + PyBytes(dst) + ")");
}

std::optional<std::string> Generator::RenameOver() {
  std::vector<std::string> names = model_.Of(Kind::kFile);
  for (const std::string& s : model_.Of(Kind::kSymlink)) names.push_back(s);
  if (names.size() < 2) return std::nullopt;
  std::string src = rng_.Pick(names), dst = rng_.Pick(names);
  const Node* a = model_.Get(src);
  const Node* b = model_.Get(dst);
  // Two names of one inode: rename(2) does nothing and mv refuses.
  if (src == dst || (a->kind == Kind::kFile && b->kind == Kind::kFile && a->inode == b->inode)) return std::nullopt;
  // coreutils mv refuses a source that is a symlink resolving to the
  // destination ("are the same file"); rename(2) does not care.
  bool src_is_symlink = a->kind == Kind::kSymlink;
  model_.Move(src, dst);
  bool use_mv = rng_.Percent(50) && !src_is_symlink;
  if (use_mv) return "mv -f -T " + ShellQuote(src) + " " + ShellQuote(dst);
  return Python("import os; os.replace(" + PyBytes(src) + ", " + PyBytes(dst) + ")");
}

std::optional<std::string> Generator::Delete() {
  std::vector<std::string> names = model_.Of(Kind::kFile);
  for (const std::string& s : model_.Of(Kind::kSymlink)) names.push_back(s);
  auto p = Pick(names);
  if (!p) return std::nullopt;
  model_.Remove(*p);
  switch (rng_.Below(8)) {
    case 0:
    case 1:
    case 2: return "rm -f " + ShellQuote(*p);
    case 3:
    case 4: return "unlink " + ShellQuote(*p);
    case 5:
    case 6: return Python("import os; os.unlink(" + PyBytes(*p) + ")");
    default: return NodeJs("require(\"fs\").unlinkSync(" + NodeBuffer(*p) + ")");  // node starts slowly: rarely
  }
}

std::optional<std::string> Generator::Chmod() {
  std::vector<std::string> targets = model_.LoneFiles();
  for (const std::string& d : model_.Of(Kind::kDir)) targets.push_back(d);
  auto p = Pick(targets);
  if (!p) return std::nullopt;
  uint32_t mode = model_.Is(*p, Kind::kDir) ? rng_.Pick(kDirModes) : FileMode();
  if (rng_.Percent(50)) return "chmod " + Octal(mode) + " " + ShellQuote(*p);
  return Python("import os; os.chmod(" + PyBytes(*p) + ", " + std::to_string(mode) + ")");
}

std::optional<std::string> Generator::Mkdir() {
  std::string p = FreshPath(true);
  model_.AddDir(p);
  switch (rng_.Below(3)) {
    case 0: return "mkdir " + ShellQuote(p);
    case 1: return "mkdir -m " + Octal(rng_.Pick(kDirModes)) + " " + ShellQuote(p);
    default: return Python("import os; os.mkdir(" + PyBytes(p) + ", 0o750)");
  }
}

std::optional<std::string> Generator::MkdirP() {
  std::string p = FreshPath(true);
  model_.AddDir(p);
  for (int i = 0, n = 1 + static_cast<int>(rng_.Below(3)); i < n; ++i) {
    p = Join(p, FreshName(true));
    model_.AddDir(p);
  }
  std::string file = Join(p, FreshName(false));
  model_.AddFile(file);
  return "mkdir -p " + ShellQuote(p) + "\n" + WriteScript(file, Content(), false);
}

std::optional<std::string> Generator::Rmdir() {
  std::vector<std::string> empty;
  for (const std::string& d : model_.Of(Kind::kDir)) {
    if (model_.IsEmptyDir(d)) empty.push_back(d);
  }
  auto d = Pick(empty);
  if (!d) return std::nullopt;
  model_.Remove(*d);
  if (rng_.Percent(50)) return "rmdir " + ShellQuote(*d);
  return Python("import os; os.rmdir(" + PyBytes(*d) + ")");
}

std::optional<std::string> Generator::RmRf() {
  auto d = Pick(model_.Of(Kind::kDir));
  if (!d) return std::nullopt;
  model_.Remove(*d);
  switch (rng_.Below(3)) {
    case 0: return "rm -rf " + ShellQuote(*d);
    case 1: return Python("import shutil; shutil.rmtree(" + PyBytes(*d) + ")");
    default: return "find " + ShellQuote(*d) + " -delete";
  }
}

std::optional<std::string> Generator::MoveDir() {
  auto d = Pick(model_.Of(Kind::kDir));
  if (!d) return std::nullopt;
  std::string dst = FreshPath(true, *d);
  model_.Move(*d, dst);
  if (rng_.Percent(60)) return "mv -T " + ShellQuote(*d) + " " + ShellQuote(dst);
  return Python("import os; os.rename(" + PyBytes(*d) + ", " + PyBytes(dst) + ")");
}

std::optional<std::string> Generator::MoveDirInto() {
  auto d = Pick(model_.Of(Kind::kDir));
  if (!d) return std::nullopt;
  std::vector<std::string> into;
  for (const std::string& e : model_.Dirs()) {
    if (!AtOrUnder(e, *d) && e != Parent(*d) && !model_.Has(Join(e, Base(*d)))) into.push_back(e);
  }
  auto e = Pick(into);
  if (!e) return std::nullopt;
  model_.Move(*d, Join(*e, Base(*d)));
  return "mv " + ShellQuote(*d) + " " + ShellQuote(e->empty() ? "." : *e + "/");
}

std::optional<std::string> Generator::MoveDirOverEmpty() {
  std::vector<std::string> dirs = model_.Of(Kind::kDir);
  if (dirs.size() < 2) return std::nullopt;
  std::string d = rng_.Pick(dirs), e = rng_.Pick(dirs);
  if (d == e || !model_.IsEmptyDir(e) || AtOrUnder(e, d)) return std::nullopt;
  model_.Move(d, e);
  return "mv -T " + ShellQuote(d) + " " + ShellQuote(e);
}

std::optional<std::string> Generator::CopyDir() {
  auto d = Pick(model_.Of(Kind::kDir));
  if (!d) return std::nullopt;
  std::string dst = FreshPath(true, *d);
  model_.Copy(*d, dst);
  return "cp -R " + ShellQuote(*d) + " " + ShellQuote(dst);
}

std::optional<std::string> Generator::FileToDir() {
  auto f = Pick(model_.Of(Kind::kFile));
  if (!f) return std::nullopt;
  model_.Remove(*f);
  model_.AddDir(*f);
  std::string inner = Join(*f, FreshName(false));
  model_.AddFile(inner);
  return "rm -f " + ShellQuote(*f) + "\nmkdir " + ShellQuote(*f) + "\n" + WriteScript(inner, Content(), false);
}

std::optional<std::string> Generator::DirToFile() {
  auto d = Pick(model_.Of(Kind::kDir));
  if (!d) return std::nullopt;
  model_.Remove(*d);
  model_.AddFile(*d);
  return "rm -rf " + ShellQuote(*d) + "\n" + WriteScript(*d, Content(), false);
}

std::optional<std::string> Generator::Symlink() {
  std::string p = FreshPath(false);
  std::string target = SymlinkTarget(Parent(p));
  model_.AddSymlink(p, target);
  if (rng_.Percent(60)) return "ln -s " + ShellQuote(target) + " " + ShellQuote(p);
  return Python("import os; os.symlink(" + PyBytes(target) + ", " + PyBytes(p) + ")");
}

std::optional<std::string> Generator::RetargetSymlink() {
  auto s = Pick(model_.Of(Kind::kSymlink));
  if (!s) return std::nullopt;
  std::string target = SymlinkTarget(Parent(*s));
  model_.AddSymlink(*s, target);
  return "ln -sfn " + ShellQuote(target) + " " + ShellQuote(*s);
}

std::optional<std::string> Generator::SymlinkToFile() {
  auto s = Pick(model_.Of(Kind::kSymlink));
  if (!s) return std::nullopt;
  model_.Remove(*s);
  model_.AddFile(*s);
  if (rng_.Percent(50)) return "rm -f " + ShellQuote(*s) + "\n" + WriteScript(*s, Content(), false);
  return Python("import os; os.unlink(" + PyBytes(*s) + "); open(" + PyBytes(*s) + ", \"wb\").write(" +
                PyBytes(Content()) + ")");
}

std::optional<std::string> Generator::FileToSymlink() {
  auto f = Pick(model_.Of(Kind::kFile));
  if (!f) return std::nullopt;
  if (rng_.Percent(50)) {
    // ln -sf refuses a target that resolves to the file it replaces: give it
    // one that resolves to nothing.
    std::string target = "missing-" + std::to_string(++counter_);
    model_.Remove(*f);
    model_.AddSymlink(*f, target);
    return "ln -sf " + ShellQuote(target) + " " + ShellQuote(*f);
  }
  // An atomic replacement: a symlink made under a temporary name, renamed over.
  std::string target = SymlinkTarget(Parent(*f));
  std::string tmp = Join(Parent(*f), FreshName(false));
  model_.Remove(*f);
  model_.AddSymlink(*f, target);
  return Python("import os; os.symlink(" + PyBytes(target) + ", " + PyBytes(tmp) + "); os.replace(" + PyBytes(tmp) +
                ", " + PyBytes(*f) + ")");
}

std::optional<std::string> Generator::HardLink() {
  auto f = Pick(model_.Of(Kind::kFile));
  if (!f) return std::nullopt;
  std::string p = FreshPath(false);
  model_.AddLink(*f, p);
  if (rng_.Percent(50)) return "ln " + ShellQuote(*f) + " " + ShellQuote(p);
  return Python("import os; os.link(" + PyBytes(*f) + ", " + PyBytes(p) + ")");
}

std::optional<std::string> Generator::WriteThroughSymlink() {
  // A symlink whose target is a sibling file with a single name: a
  // redirection to the link writes that file.
  std::vector<std::string> links;
  for (const std::string& s : model_.Of(Kind::kSymlink)) {
    const std::string& t = model_.Get(s)->target;
    if (t.find('/') != std::string::npos) continue;
    std::string target = Join(Parent(s), t);
    if (model_.Is(target, Kind::kFile) && model_.Links(model_.Get(target)->inode) == 1) links.push_back(s);
  }
  auto s = Pick(links);
  if (!s) return std::nullopt;
  return "printf " + PrintfFormat(Content()) + (rng_.Percent(50) ? " >> " : " > ") + ShellQuote(*s);
}

std::optional<std::string> Generator::Exchange() {
  std::vector<std::string> all = model_.Entries();
  if (all.size() < 2) return std::nullopt;
  std::string a = rng_.Pick(all), b = rng_.Pick(all);
  if (AtOrUnder(a, b) || AtOrUnder(b, a)) return std::nullopt;
  model_.Exchange(a, b);
  return ShellQuote(paths_.exchange_tool) + " " + ShellQuote(a) + " " + ShellQuote(b);
}

std::vector<Generator::KindSpec> Generator::Kinds() {
  //                           files dirs links all
  return {
      {"create", {4, 2, 2, 2}, [this] { return Create(); }},
      {"touch", {1, 1, 0, 1}, [this] { return Touch(); }},
      {"big-file", {1, 0, 0, 1}, [this] { return BigFile(); }},
      {"overwrite", {4, 1, 1, 2}, [this] { return Overwrite(); }},
      {"append", {3, 0, 1, 1}, [this] { return Append(); }},
      {"truncate", {2, 0, 0, 1}, [this] { return Truncate(); }},
      {"pwrite", {2, 0, 0, 1}, [this] { return Pwrite(); }},
      {"copy-file", {1, 0, 0, 1}, [this] { return CopyFile(); }},
      {"rename", {2, 1, 1, 1}, [this] { return Rename(); }},
      {"rename-over", {2, 0, 2, 1}, [this] { return RenameOver(); }},
      {"delete", {2, 1, 2, 1}, [this] { return Delete(); }},
      {"chmod", {2, 1, 1, 1}, [this] { return Chmod(); }},
      {"mkdir", {1, 3, 0, 1}, [this] { return Mkdir(); }},
      {"mkdir-p", {0, 1, 0, 1}, [this] { return MkdirP(); }},
      {"rmdir", {0, 2, 0, 1}, [this] { return Rmdir(); }},
      {"rm-rf", {0, 2, 0, 1}, [this] { return RmRf(); }},
      {"move-dir", {0, 3, 0, 1}, [this] { return MoveDir(); }},
      {"move-dir-into", {0, 2, 0, 1}, [this] { return MoveDirInto(); }},
      {"move-dir-over-empty", {0, 1, 0, 1}, [this] { return MoveDirOverEmpty(); }},
      {"copy-dir", {0, 1, 0, 1}, [this] { return CopyDir(); }},
      {"file-to-dir", {0, 2, 0, 1}, [this] { return FileToDir(); }},
      {"dir-to-file", {0, 2, 0, 1}, [this] { return DirToFile(); }},
      {"symlink", {0, 0, 4, 1}, [this] { return Symlink(); }},
      {"retarget-symlink", {0, 0, 2, 1}, [this] { return RetargetSymlink(); }},
      {"symlink-to-file", {0, 0, 2, 1}, [this] { return SymlinkToFile(); }},
      {"file-to-symlink", {0, 0, 2, 1}, [this] { return FileToSymlink(); }},
      {"hard-link", {1, 0, 3, 1}, [this] { return HardLink(); }},
      {"write-through-symlink", {1, 0, 2, 1}, [this] { return WriteThroughSymlink(); }},
      {"exchange", {1, 2, 1, 1}, [this] { return Exchange(); }},
  };
}

std::vector<WorkloadStep> Generator::Steps() {
  std::vector<KindSpec> kinds = Kinds();
  int mix = static_cast<int>(mix_);
  int total = 0;
  for (const KindSpec& k : kinds) total += k.weight[mix];
  std::vector<WorkloadStep> steps;
  int n = 10 + static_cast<int>(rng_.Below(16));
  for (int attempts = 0; static_cast<int>(steps.size()) < n && attempts < 1000; ++attempts) {
    int pick = static_cast<int>(rng_.Below(static_cast<uint64_t>(total)));
    const KindSpec* spec = nullptr;
    for (const KindSpec& k : kinds) {
      pick -= k.weight[mix];
      if (pick < 0) {
        spec = &k;
        break;
      }
    }
    std::optional<std::string> script = spec->fn();
    if (script) steps.push_back(WorkloadStep{spec->name, *script});
  }
  return steps;
}

}  // namespace

Workload MakeRandomWorkload(uint64_t seed, WorkloadMix mix, const WorkloadPaths& paths) {
  Generator g(seed, mix, paths);
  g.BuildTree();
  Workload w;
  w.seed = seed;
  w.mix = mix;
  w.steps = g.Steps();
  return w;
}

std::string FormatSteps(const Workload& w, size_t max_script) {
  std::ostringstream os;
  for (size_t i = 0; i < w.steps.size(); ++i) {
    std::string script = w.steps[i].script;
    if (script.size() > max_script) script = script.substr(0, max_script) + "...";
    // As typed: bytes outside printable ASCII as \xNN, newlines as " ; ".
    std::string shown;
    for (unsigned char c : script) {
      if (c == '\n') {
        shown += " ; ";
      } else if (c >= 0x20 && c < 0x7f) {
        shown += static_cast<char>(c);
      } else {
        shown += "\\x" + Hex2(c);
      }
    }
    os << "  " << i << " " << w.steps[i].kind << ": " << shown << "\n";
  }
  return os.str();
}

}  // namespace guard::e2e
