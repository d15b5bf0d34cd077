#include "supervisor/base/config.h"

#include <cstdlib>
#include <functional>
#include <cstdio>

#include <toml++/toml.h>

#include "common/file_io.h"
#include "supervisor/base/units.h"

namespace guard {
namespace {

// One key of the file: how to read its value into Settings (an error
// message, "" when fine), how to print it back, and where its source lives.
struct Key {
  const char* name;  // "section.key"
  std::function<std::string(const toml::node&, Settings*, const std::string& source)> read;
  std::function<std::string(const Settings&)> print;
  std::function<const std::string&(const Settings&)> source;
};

std::string ReadString(const toml::node& n, std::string* out) {
  auto v = n.value<std::string>();
  if (!v || !n.is_string()) return "must be a string";
  *out = *v;
  return "";
}

std::string ReadDuration(const toml::node& n, int64_t* out, bool allow_off) {
  std::string text;
  if (!ReadString(n, &text).empty())
    return "must be a duration in a string, such as \"30d\", \"12h\" or \"5m\"";
  if (allow_off && text == "off") {
    *out = 0;
    return "";
  }
  if (!ParseDuration(text, out))
    return "'" + text + "' is not a duration (a number and one of ms, s, m, h, d, w: \"30d\")";
  return "";
}

const std::vector<Key>& Keys() {
  static const std::vector<Key> kKeys = {
      {"capture.on_failure",
       [](const toml::node& n, Settings* s, const std::string& src) {
         std::string v;
         if (std::string e = ReadString(n, &v); !e.empty()) return e;
         if (v != "block" && v != "allow") return "'" + v + "' is neither \"block\" nor \"allow\"";
         s->on_capture_failure = {v, src};
         return std::string();
       },
       [](const Settings& s) { return TomlBasicString(s.on_capture_failure.value); },
       [](const Settings& s) -> const std::string& { return s.on_capture_failure.source; }},
      {"capture.mode",
       [](const toml::node& n, Settings* s, const std::string& src) {
         std::string v;
         if (std::string e = ReadString(n, &v); !e.empty()) return e;
         if (std::string e = CheckMode(v); !e.empty()) return e;
         s->mode = {v, src};
         return std::string();
       },
       [](const Settings& s) { return TomlBasicString(s.mode.value); },
       [](const Settings& s) -> const std::string& { return s.mode.source; }},
      {"capture.hide_state",
       [](const toml::node& n, Settings* s, const std::string& src) {
         std::string v;
         if (std::string e = ReadString(n, &v); !e.empty()) return e;
         if (std::string e = CheckHideState(v); !e.empty()) return e;
         s->hide_state = {v, src};
         return std::string();
       },
       [](const Settings& s) { return TomlBasicString(s.hide_state.value); },
       [](const Settings& s) -> const std::string& { return s.hide_state.source; }},
      {"capture.checkpoint_every",
       [](const toml::node& n, Settings* s, const std::string& src) {
         int64_t ns = 0;
         if (std::string e = ReadDuration(n, &ns, true); !e.empty()) return e + " (or \"off\")";
         s->checkpoint_every_ns = {ns, src};
         return std::string();
       },
       [](const Settings& s) {
         return s.checkpoint_every_ns.value == 0 ? TomlBasicString("off") : TomlBasicString(FormatDuration(s.checkpoint_every_ns.value));
       },
       [](const Settings& s) -> const std::string& { return s.checkpoint_every_ns.source; }},
      {"capture.sync_every",
       [](const toml::node& n, Settings* s, const std::string& src) {
         int64_t ns = 0;
         if (std::string e = ReadDuration(n, &ns, false); !e.empty()) return e;
         if (ns < kSyncEveryMinNs || ns > kSyncEveryMaxNs) {
           return "'" + FormatDuration(ns) + "' is outside \"" + FormatDuration(kSyncEveryMinNs) + "\" to \"" +
                  FormatDuration(kSyncEveryMaxNs) + "\"";
         }
         s->sync_every_ns = {ns, src};
         return std::string();
       },
       [](const Settings& s) { return TomlBasicString(FormatDuration(s.sync_every_ns.value)); },
       [](const Settings& s) -> const std::string& { return s.sync_every_ns.source; }},
      {"retention.keep",
       [](const toml::node& n, Settings* s, const std::string& src) {
         int64_t ns = 0;
         if (std::string e = ReadDuration(n, &ns, false); !e.empty()) return e;
         s->keep_ns = {ns, src};
         return std::string();
       },
       [](const Settings& s) { return TomlBasicString(FormatDuration(s.keep_ns.value)); },
       [](const Settings& s) -> const std::string& { return s.keep_ns.source; }},
      {"retention.max_size",
       [](const toml::node& n, Settings* s, const std::string& src) {
         uint64_t bytes = 0;
         if (auto i = n.value<int64_t>(); n.is_integer() && i && *i >= 0) {
           bytes = static_cast<uint64_t>(*i);
         } else {
           std::string text;
           if (!ReadString(n, &text).empty() || !ParseSize(text, &bytes))
             return std::string("must be a size such as \"10GiB\", \"500MB\" or a number of bytes");
         }
         s->max_size = {bytes, src};
         return std::string();
       },
       [](const Settings& s) {
         // "10GiB" when a binary unit divides it exactly, else the bytes.
         uint64_t v = s.max_size.value;
         for (auto [unit, scale] : {std::pair{"TiB", 1ULL << 40}, {"GiB", 1ULL << 30}, {"MiB", 1ULL << 20},
                                    {"KiB", 1ULL << 10}}) {
           if (v != 0 && v % scale == 0) return TomlBasicString(std::to_string(v / scale) + unit);
         }
         return std::to_string(v);
       },
       [](const Settings& s) -> const std::string& { return s.max_size.source; }},
      {"retention.keep_newest",
       [](const toml::node& n, Settings* s, const std::string& src) {
         auto i = n.value<int64_t>();
         if (!n.is_integer() || !i || *i < 0 || *i > 1000000) return std::string("must be a whole number, 0 or more");
         s->keep_newest = {*i, src};
         return std::string();
       },
       [](const Settings& s) { return std::to_string(s.keep_newest.value); },
       [](const Settings& s) -> const std::string& { return s.keep_newest.source; }},
      {"retention.auto_gc",
       [](const toml::node& n, Settings* s, const std::string& src) {
         auto b = n.value<bool>();
         if (!n.is_boolean() || !b) return std::string("must be true or false");
         s->auto_gc = {*b, src};
         return std::string();
       },
       [](const Settings& s) { return std::string(s.auto_gc.value ? "true" : "false"); },
       [](const Settings& s) -> const std::string& { return s.auto_gc.source; }},
      {"shell_init.agents",
       [](const toml::node& n, Settings* s, const std::string& src) {
         const toml::array* a = n.as_array();
         if (a == nullptr) return std::string("must be an array of command names");
         std::vector<std::string> agents;
         for (const toml::node& e : *a) {
           auto v = e.value<std::string>();
           if (!e.is_string() || !v || v->empty()) return std::string("must be an array of command names");
           agents.push_back(*v);
         }
         s->agents = {agents, src};
         return std::string();
       },
       [](const Settings& s) {
         std::string out = "[";
         for (const std::string& a : s.agents.value) out += (out.size() > 1 ? ", " : "") + TomlBasicString(a);
         return out + "]";
       },
       [](const Settings& s) -> const std::string& { return s.agents.source; }},
  };
  return kKeys;
}

std::string KnownKeys() {
  std::string out;
  for (const Key& k : Keys()) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

std::string Where(const std::string& path, const toml::source_region& r) {
  return path + ":" + std::to_string(r.begin.line);
}

// Reads one table's entries as `prefix.key`, each problem into s->problems
// with the key at its default; returns the first problem.
Status ReadTable(const toml::table& table, const std::string& prefix, const std::string& path, Settings* s) {
  Status first = Status::Ok();
  auto problem = [&](const std::string& key, const std::string& message) {
    s->problems.push_back({key, message});
    if (first.ok()) first = Status::InvalidArgument(message);
  };
  for (auto&& [k, v] : table) {
    std::string name = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    std::string where = Where(path, k.source().begin.line ? k.source() : v.source());
    if (prefix.empty() && v.is_table()) {
      bool known_section = false;
      for (const Key& key : Keys()) known_section |= std::string(key.name).rfind(name + ".", 0) == 0;
      if (!known_section) {
        problem(name, where + ": unknown section [" + name + "] (known keys: " + KnownKeys() + ")");
        continue;
      }
      Status inner = ReadTable(*v.as_table(), name, path, s);
      if (first.ok()) first = inner;
      continue;
    }
    const Key* key = nullptr;
    for (const Key& candidate : Keys()) {
      if (name == candidate.name) key = &candidate;
    }
    if (key == nullptr) {
      problem(name, where + ": unknown key '" + name + "' (known keys: " + KnownKeys() + ")");
      continue;
    }
    std::string error = key->read(v, s, where);
    if (!error.empty()) problem(name, where + ": " + name + ": " + error);
  }
  return first;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

}  // namespace

std::string ConfigPath() {
  std::string xdg = Env("XDG_CONFIG_HOME");
  if (!xdg.empty() && xdg[0] == '/') return xdg + "/guard/config.toml";
  std::string home = Env("HOME");
  if (home.empty()) return "";
  return home + "/.config/guard/config.toml";
}

std::string CheckHideState(const std::string& value) {
  if (value == "auto" || value == "required" || value == "off") return "";
  return "'" + value + "' is not \"auto\", \"required\" nor \"off\"";
}

std::string CheckMode(const std::string& mode) {
  if (mode == "auto" || mode == "trace" || mode == "preload" || mode == "watch") return "";
  return "unknown mode '" + mode + "' (auto, trace, preload or watch)";
}

Status ParseConfig(std::string_view text, const std::string& path, Settings* settings) {
  settings->path = path;
  toml::table table;
  try {
    table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const toml::source_position& at = e.source().begin;
    std::string message = path + ":" + std::to_string(at.line) + ": not valid TOML: " + std::string(e.description());
    settings->problems.push_back({"", message});
    return Status::InvalidArgument(message);
  }
  return ReadTable(table, "", path, settings);
}

Status LoadConfigFile(const std::string& path, Settings* settings) {
  settings->path = path;
  settings->file_found = false;
  if (path.empty()) return Status::Ok();
  std::string text;
  Status s = ReadFileToString(path, &text);
  if (s.IsNotFound()) return Status::Ok();
  if (!s.ok()) {
    std::string message = path + ": cannot read the configuration: " + s.ToString();
    settings->problems.push_back({"", message});
    return Status::IOError(message);
  }
  settings->file_found = true;
  return ParseConfig(text, path, settings);
}

bool Settings::CaptureUnsure() const {
  for (const ConfigProblem& p : problems) {
    if (p.key.empty() || p.key == "capture" || p.key.rfind("capture.", 0) == 0) return true;
  }
  return false;
}

std::vector<std::string> ConfigKeyNames() {
  std::vector<std::string> out;
  for (const Key& k : Keys()) out.push_back(k.name);
  return out;
}

bool PrintSetting(const Settings& settings, const std::string& key, std::string* value, std::string* source) {
  for (const Key& k : Keys()) {
    if (key != k.name) continue;
    *value = k.print(settings);
    *source = k.source(settings);
    return true;
  }
  return false;
}

std::string DescribeSettings(const Settings& settings) {
  std::string out;
  for (const Key& k : Keys()) {
    std::string line = std::string(k.name) + " = " + k.print(settings);
    if (line.size() < 44) line.resize(44, ' ');
    out += line + "  # " + k.source(settings) + "\n";
  }
  return out;
}

std::string TomlBasicString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace guard
