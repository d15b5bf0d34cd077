#include "tests/e2e/support/claude_standin.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "tests/e2e/support/guard_command.h"

namespace guard::e2e {
namespace {

// argv: PORT_FILE SCRIPT_FILE LOG_FILE [TREE SNAPSHOT_DIR]. Streamed (SSE)
// or whole answers, as the request asks; count_tokens and GETs answered
// with something harmless.
constexpr char kStandIn[] = R"py(import http.server, json, os, shutil, sys, threading, time
port_file, script_file, log_file = sys.argv[1:4]
tree = sys.argv[4] if len(sys.argv) > 5 else ""
snapshots = sys.argv[5] if len(sys.argv) > 5 else ""
calls = json.load(open(script_file))
lock = threading.RLock()
def log(line):
    with lock, open(log_file, "a") as f:
        f.write(line + "\n")
def copy(dst):
    shutil.copytree(tree, dst + ".tmp", symlinks=True)
    os.rename(dst + ".tmp", dst)
def sse(events):
    return "".join("event: %s\ndata: %s\n\n" % (n, json.dumps(d)) for n, d in events).encode()
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass
    def reply(self, kind, data):
        self.send_response(200); self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def do_GET(self):
        self.reply("application/json", b"{}")
    def do_HEAD(self):
        self.send_response(200); self.end_headers()
    def do_POST(self):
        n = int(self.headers.get("content-length", 0)); body = json.loads(self.rfile.read(n) or b"{}")
        if "count_tokens" in self.path:
            return self.reply("application/json", b'{"input_tokens":10}')
        msgs = body.get("messages", [])
        model = body.get("model", "m")
        step = sum(1 for m in msgs if m.get("role") == "assistant")
        main = bool(body.get("tools"))
        log("request %s step %d tools %s" % (self.path, step, main))
        for m in msgs[-1:]:
            if isinstance(m.get("content"), list):
                for c in m["content"]:
                    if c.get("type") == "tool_result":
                        log("  result%s: %s" % (" (error)" if c.get("is_error") else "", json.dumps(c.get("content"))[:300]))
        if main and tree:
            with lock:
                dst = os.path.join(snapshots, str(step))
                if not os.path.exists(dst):
                    copy(dst)
                    wake = calls[step].get("wake") if step < len(calls) else None
                    if wake:
                        open(wake["touch"], "w").close()
                        for _ in range(1200):
                            if os.path.lexists(wake["wait_for"]):
                                break
                            time.sleep(0.05)
                        log("woke %s: %s" % (wake["touch"], os.path.lexists(wake["wait_for"])))
                        copy(dst + ".woken")
        if main and step < len(calls):
            c = calls[step]
            content = [{"type": "tool_use", "id": "toolu_%d" % step, "name": c["name"], "input": c["input"]}]; stop = "tool_use"
        else:
            content = [{"type": "text", "text": "done"}]; stop = "end_turn"
        msg = {"id": "msg_%d" % step, "type": "message", "role": "assistant", "model": model, "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
        if not body.get("stream", False):
            msg["content"] = content; msg["stop_reason"] = stop
            return self.reply("application/json", json.dumps(msg).encode())
        ev = [("message_start", {"type": "message_start", "message": msg})]
        for i, c in enumerate(content):
            if c["type"] == "text":
                ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}))
                ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": c["text"]}}))
            else:
                ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": c["id"], "name": c["name"], "input": {}}}))
                ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(c["input"])}}))
            ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}))
        ev.append(("message_stop", {"type": "message_stop"}))
        self.reply("text/event-stream", sse(ev))
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(port_file + ".tmp", port_file)
srv.serve_forever()
)py";

std::string Dirname(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/" + name;
    start = end + 1;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string FindClaude() {
  std::string found = FindOnPath("claude");
  if (!found.empty()) return found;
  std::string beside = Dirname(GuardBinary()) + "/claude-code/claude";
  return access(beside.c_str(), X_OK) == 0 ? beside : "";
}

MessagesApiStandIn::MessagesApiStandIn(const std::string& dir, const nlohmann::json& tool_calls,
                                       const std::string& tree)
    : dir_(dir) {
  WriteFile(dir_ + "/standin.py", kStandIn);
  WriteFile(dir_ + "/script.json", tool_calls.dump());
  MakeDir(dir_ + "/snapshots");
  const std::string port_file = dir_ + "/port";
  ProcessSpec spec;
  spec.argv = {"python3", dir_ + "/standin.py", port_file, dir_ + "/script.json", dir_ + "/api.log"};
  if (!tree.empty()) {
    spec.argv.push_back(tree);
    spec.argv.push_back(dir_ + "/snapshots");
  }
  spec.timeout_seconds = 600;
  server_ = std::make_unique<ChildProcess>(spec);
  for (int i = 0; i < 600 && !PathExists(port_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!PathExists(port_file)) throw std::runtime_error("the stand-in for the Messages API did not start");
  port_ = ReadFile(port_file);
}

MessagesApiStandIn::~MessagesApiStandIn() = default;

std::string MessagesApiStandIn::Log() const {
  return PathExists(dir_ + "/api.log") ? ReadFile(dir_ + "/api.log") : std::string();
}

void InstallClaudeHooks(const Workspace& ws) {
  ProcessSpec install;
  install.argv = {GuardBinary(), "hooks", "install", "claude", "--root", ws.tree()};
  install.env = GuardEnv(ws);
  ProcessResult r = RunProcess(install);
  if (r.exit_code != 0) throw std::runtime_error("guard hooks install claude: " + DescribeResult(r));
}

GuardRun ClaudeRun(const MessagesApiStandIn& api, const std::string& home, const std::string& prompt,
                   const std::string& tools) {
  GuardRun run;
  run.command = {FindClaude(), "-p", prompt, "--allowedTools", tools};
  run.env["HOME"] = home;
  run.env["ANTHROPIC_BASE_URL"] = api.base_url();
  run.env["ANTHROPIC_API_KEY"] = "sk-ant-test-not-a-key";
  run.env["DISABLE_AUTOUPDATER"] = "1";
  run.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1";
  run.timeout_seconds = 240;
  return run;
}

}  // namespace guard::e2e
