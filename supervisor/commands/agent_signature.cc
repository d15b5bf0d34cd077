#include "supervisor/commands/agent_signature.h"

#include <limits.h>
#include <stdlib.h>

#include <fstream>
#include <vector>

#include "supervisor/base/code_signature.h"
#include "supervisor/commands/command_group.h"

namespace guard {
namespace {

// The interpreter a `#!` line names ("/usr/bin/env node": node on PATH);
// "" when `file` has none.
std::string Interpreter(const std::string& file, const std::string& path) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line) || line.rfind("#!", 0) != 0) return "";
  std::vector<std::string> words;
  size_t at = 2;
  while (at < line.size()) {
    const size_t start = line.find_first_not_of(" \t\r", at);
    if (start == std::string::npos) break;
    const size_t end = line.find_first_of(" \t\r", start);
    words.push_back(line.substr(start, end == std::string::npos ? std::string::npos : end - start));
    at = end == std::string::npos ? line.size() : end;
  }
  if (words.empty()) return "";
  std::string program = words[0];
  if (program.size() >= 4 && program.compare(program.size() - 4, 4, "/env") == 0) {
    size_t i = 1;
    while (i < words.size() && words[i][0] == '-') ++i;  // env -S and the like
    if (i == words.size()) return "";
    if (!FindOnPath(words[i], path, &program).ok()) return "";
  }
  return program;
}

std::string Real(const std::string& file) {
  char real[PATH_MAX];
  return realpath(file.c_str(), real) != nullptr ? std::string(real) : file;
}

}  // namespace

AgentSignature ProbeAgentSignature(const std::string& name, const std::string& path) {
  AgentSignature out;
  std::string file;
  if (!FindOnPath(name, path, &file).ok()) {
    out.detail = name + " not found on PATH";
    return out;
  }
  out.found = true;
  out.program = Real(file);
  std::string via;
  if (std::string interpreter = Interpreter(out.program, path); !interpreter.empty()) {
    via = " (" + name + " is a script run by " + interpreter + ")";
    out.program = Real(interpreter);
  }
  std::vector<SliceSignature> slices;
  if (Status s = ReadCodeSignaturesOfFile(out.program, &slices); !s.ok()) {
    out.detail = s.ToString() + via;
    return out;
  }
  out.read = true;
  out.injectable = true;
  std::string archs;
  for (const SliceSignature& slice : slices) {
    out.hardened |= slice.hardened();
    out.injectable &= slice.InjectionReaches();
    archs += (archs.empty() ? "" : ", ") + CpuTypeName(slice.cpu_type);
  }
  out.detail = out.program + via + " (" + archs + "): " +
               (out.injectable ? "no hardened runtime that refuses DYLD_INSERT_LIBRARIES"
                               : "hardened runtime without the dyld entitlement: an injected library would "
                                 "see nothing, watch mode sees its changes");
  return out;
}

}  // namespace guard
