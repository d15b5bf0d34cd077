// guard hooks with the real Claude Code (npm install -g
// @anthropic-ai/claude-code), when it is installed: skipped otherwise.
// Without network the model never answers, but `claude -p PROMPT` runs the
// UserPromptSubmit hook before it gives up, so this checks, end to end,
// that the installed hook makes a mark labelled with the prompt's first
// words in the guard session claude runs in, and that uninstalling leaves
// the project as it was. (PostToolUse needs the model to call a tool: not
// testable offline; its input is tested in mark_test.)
#define BOOST_TEST_MODULE claude_hooks
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/e2e/support/guard_command.h"
#include "tests/e2e/support/guard_runner.h"
#include "tests/e2e/support/workspace.h"

namespace guard::e2e {
namespace {

std::string FindClaude() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/claude";
    start = end + 1;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

BOOST_AUTO_TEST_CASE(PromptHookOfRealClaudeMarksTheGuardSession) {
  if (FindClaude().empty()) {
    BOOST_WARN_MESSAGE(false, "skipped: claude (Claude Code) is not installed (npm install -g @anthropic-ai/claude-code)");
    return;
  }
  Workspace ws;
  ws.Write("README", "a project\n");
  // Claude Code's own state goes to a home of the test's, never the user's.
  const std::string home = ws.outside() + "/home";
  MakeDir(home);
  ProcessSpec install;
  install.argv = {GuardBinary(), "hooks", "install", "claude", "--project", "--root", ws.tree()};
  install.env = GuardEnv(ws);
  install.env["HOME"] = home;
  ProcessResult r = RunProcess(install);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_REQUIRE(ws.Exists(".claude/settings.json"));

  GuardRun run;
  run.command = {FindClaude(), "-p", "please rename README to README.md and stop"};
  run.env["HOME"] = home;
  run.env["ANTHROPIC_API_KEY"] = std::nullopt;
  run.env["DISABLE_AUTOUPDATER"] = "1";
  run.timeout_seconds = 180;
  GuardResult g = RunGuard(ws, run);
  BOOST_REQUIRE_EQUAL(g.new_sessions.size(), 1u);
  GuardResult show = RunGuardCommand(ws, {"show", "--session", g.new_sessions[0], "--json"});
  BOOST_REQUIRE_MESSAGE(show.exit_code == 0, DescribeResult(show));
  size_t marks = 0;
  std::string label;
  for (const auto& e : nlohmann::json::parse(show.out)) {
    if (e["op"] != "mark") continue;
    ++marks;
    label = e["label"].get<std::string>();
    BOOST_TEST(e["step"] == false);
  }
  BOOST_TEST(marks == 1u, "claude's output: " << DescribeResult(g));
  BOOST_TEST(label == "prompt: please rename README to README.md and stop");

  install.argv[2] = "uninstall";
  r = RunProcess(install);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));
  BOOST_TEST(!ws.Exists(".claude/settings.json"));
}

// A stand-in for the Messages API (python3): the first request that offers
// tools gets a Bash tool_use writing tool.txt; every later one, "done".
// It writes the port it listens on to argv[1].
constexpr char kMockApi[] = R"py(import http.server, json, os, sys
calls = {"n": 0}
def sse(events):
    out = ""
    for name, data in events:
        out += "event: %s\ndata: %s\n\n" % (name, json.dumps(data))
    return out.encode()
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        sys.stderr.write("%s %s\n" % (self.command, self.path)); sys.stderr.flush()
    def do_GET(self):
        self.send_response(200); self.send_header("content-type","application/json"); self.end_headers(); self.wfile.write(b"{}")
    def do_HEAD(self):
        self.send_response(200); self.end_headers()
    def do_POST(self):
        n = int(self.headers.get("content-length", 0)); body = json.loads(self.rfile.read(n) or b"{}")
        if "count_tokens" in self.path:
            self.send_response(200); self.send_header("content-type","application/json"); self.end_headers(); self.wfile.write(b'{"input_tokens":10}'); return
        msgs = body.get("messages", [])
        has_result = any(isinstance(m.get("content"), list) and any(c.get("type")=="tool_result" for c in m["content"]) for m in msgs)
        model = body.get("model", "m")
        stream = body.get("stream", False)
        if has_result or not body.get("tools"):
            content = [{"type":"text","text":"done"}]; stop="end_turn"
        else:
            content = [{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"echo made-by-tool > tool.txt","description":"write a file"}}]; stop="tool_use"
        msg = {"id":"msg_1","type":"message","role":"assistant","model":model,"content":[],"stop_reason":None,"stop_sequence":None,"usage":{"input_tokens":1,"output_tokens":1}}
        if not stream:
            msg["content"]=content; msg["stop_reason"]=stop
            self.send_response(200); self.send_header("content-type","application/json"); self.end_headers(); self.wfile.write(json.dumps(msg).encode()); return
        ev=[("message_start",{"type":"message_start","message":msg})]
        for i,c in enumerate(content):
            if c["type"]=="text":
                ev.append(("content_block_start",{"type":"content_block_start","index":i,"content_block":{"type":"text","text":""}}))
                ev.append(("content_block_delta",{"type":"content_block_delta","index":i,"delta":{"type":"text_delta","text":c["text"]}}))
            else:
                ev.append(("content_block_start",{"type":"content_block_start","index":i,"content_block":{"type":"tool_use","id":c["id"],"name":c["name"],"input":{}}}))
                ev.append(("content_block_delta",{"type":"content_block_delta","index":i,"delta":{"type":"input_json_delta","partial_json":json.dumps(c["input"])}}))
            ev.append(("content_block_stop",{"type":"content_block_stop","index":i}))
        ev.append(("message_delta",{"type":"message_delta","delta":{"stop_reason":stop,"stop_sequence":None},"usage":{"output_tokens":5}}))
        ev.append(("message_stop",{"type":"message_stop"}))
        self.send_response(200); self.send_header("content-type","text/event-stream"); self.end_headers(); self.wfile.write(sse(ev))
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
)py";

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

BOOST_AUTO_TEST_CASE(ToolHookOfRealClaudeMarksAStepAndUndoTurnsRemovesWhatBashDid) {
  if (FindClaude().empty() || FindOnPath("python3").empty()) {
    BOOST_WARN_MESSAGE(false, "skipped: needs claude (npm install -g @anthropic-ai/claude-code) and python3");
    return;
  }
  Workspace ws;
  ws.Write("README", "a project\n");
  const std::string home = ws.outside() + "/home";
  MakeDir(home);
  WriteFile(ws.outside() + "/mock_api.py", kMockApi);
  const std::string port_file = ws.outside() + "/port";
  ProcessSpec mock;
  mock.argv = {"python3", ws.outside() + "/mock_api.py", port_file};
  mock.timeout_seconds = 300;
  ChildProcess server(mock);  // killed and reaped when the test ends
  for (int i = 0; i < 600 && !PathExists(port_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  BOOST_REQUIRE_MESSAGE(PathExists(port_file), "the stand-in API did not start");
  const std::string port = ReadFile(port_file);

  ProcessSpec install;
  install.argv = {GuardBinary(), "hooks", "install", "claude", "--root", ws.tree()};
  install.env = GuardEnv(ws);
  ProcessResult r = RunProcess(install);
  BOOST_REQUIRE_MESSAGE(r.exit_code == 0, DescribeResult(r));

  GuardRun run;
  run.command = {FindClaude(), "-p", "write the file please", "--allowedTools", "Bash"};
  run.env["HOME"] = home;
  run.env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:" + port;
  run.env["ANTHROPIC_API_KEY"] = "sk-ant-test-not-a-key";
  run.env["DISABLE_AUTOUPDATER"] = "1";
  run.timeout_seconds = 180;
  GuardResult g = RunGuard(ws, run);
  BOOST_REQUIRE_EQUAL(g.new_sessions.size(), 1u);
  BOOST_TEST(ws.Read("tool.txt") == "made-by-tool\n", DescribeResult(g));
  GuardResult show = RunGuardCommand(ws, {"show", "--session", g.new_sessions[0], "--json"});
  BOOST_REQUIRE(show.exit_code == 0);
  std::vector<std::string> order;
  for (const auto& e : nlohmann::json::parse(show.out)) {
    if (e["op"] == "mark") order.push_back((e["step"] == true ? "step " : "turn ") + e["label"].get<std::string>());
    else if (e["op"] == "create" && e["outside_root"] == false) order.push_back(e["path"].get<std::string>());
  }
  std::vector<std::string> expected = {"turn prompt: write the file please", "step before Bash", "tool.txt",
                                       "step Bash"};
  BOOST_TEST(order == expected, nlohmann::json(order).dump() << "\n" << DescribeResult(g));

  GuardResult undo = RunGuardCommand(ws, {"undo", "--session", g.new_sessions[0], "--turns", "1", "--yes"});
  BOOST_TEST(undo.exit_code == 0, DescribeResult(undo));
  BOOST_TEST(!ws.Exists("tool.txt"));
  BOOST_TEST(ws.Read("README") == "a project\n");
}

}  // namespace
}  // namespace guard::e2e
