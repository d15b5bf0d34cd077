#include "supervisor/restore/chained_request.h"

#include <charconv>

#include "common/session_marks.h"
#include "supervisor/base/path_escape.h"

namespace guard {
namespace {

// --to and --turns as the boundary sequence number (0: the whole session).
// A mark's own seq is no operation's: undo "to" it restores the state just
// after the operations before it (CallStart of a seq that is no call is
// itself), replay the same state. --turns counts from `turns_before`, the
// turns undone already.
Status ResolveTo(const SessionHistory& history, const std::string& id, const RestoreAsk& ask, uint64_t turns_before,
                 uint64_t* to_seq) {
  *to_seq = 0;
  if (ask.turns != 0) {
    if (ask.verb != "undo") return Status::InvalidArgument("--turns is for undo only");
    if (!ask.to.empty()) return Status::InvalidArgument("--to and --turns exclude each other");
    Status s = TurnsStartSeq(history, turns_before + ask.turns, to_seq);
    if (!s.ok()) {
      std::string done = turns_before == 0 ? "" : " (" + std::to_string(turns_before) + " undone already)";
      return Status::InvalidArgument("--turns " + std::to_string(ask.turns) + ": session " + id + done + ": " +
                                     s.message());
    }
    return Status::Ok();
  }
  if (ask.to.empty()) return Status::Ok();
  if (IsMarkSpec(ask.to)) {
    Status s = MarkSeq(history, ask.to, to_seq);
    if (!s.ok()) return Status::InvalidArgument("--to " + EscapeForTerminal(ask.to) + ": session " + id + ": " + s.message());
    return Status::Ok();
  }
  const char* end = ask.to.data() + ask.to.size();
  if (std::from_chars(ask.to.data(), end, *to_seq).ptr != end) *to_seq = 0;  // out of range
  bool found = false;
  for (const HistoryOp& h : history.all_ops()) found = found || h.op.seq == *to_seq;
  for (const Record& m : history.marks()) found = found || m.seq == *to_seq;
  if (!found || *to_seq == 0) {
    return Status::InvalidArgument("--to " + EscapeForTerminal(ask.to) + ": session " + id +
                                   " has no operation with that sequence number (guard show lists them)");
  }
  return Status::Ok();
}

}  // namespace

Status MakeChainedRequest(const SessionHistory& history, const std::string& id, const RestoreChain& chain,
                          const RestoreAsk& ask, ChainedRequest* out) {
  *out = ChainedRequest();
  const uint64_t last = history.last_seq();
  const bool redo = ask.verb == "redo";
  const bool undo = ask.verb == "undo";
  RestoreRequest& request = out->request;
  RestoreOf& account = out->account;
  request.direction = undo ? RestoreDirection::kUndo : RestoreDirection::kReplay;
  request.exact_boundary = true;
  account.verb = ask.verb;
  account.of = id;
  account.from = chain.known ? chain.current : undo ? last : 0;
  account.paths = ask.paths;

  if (redo) {
    if (!chain.partial || chain.interrupted.verb != "redo") {
      if (chain.undos.empty()) {
        return Status::NotFound("nothing to redo: no undo of session " + id + " is in effect");
      }
      const RestoreChain::Undo& last_undo = chain.undos.back();
      account.boundary = last_undo.account.from;
      account.paths = last_undo.account.paths;
      account.turns = last_undo.turns_before;
    }
  } else {
    uint64_t to_seq = 0;
    GUARD_RETURN_IF_ERROR(ResolveTo(history, id, ask, chain.known ? chain.turns : 0, &to_seq));
    if (undo) {
      account.boundary = to_seq ? history.CallStart(to_seq) - 1 : 0;
      account.turns = ask.turns != 0 ? (chain.known ? chain.turns : 0) + ask.turns : 0;
    } else {
      account.boundary = to_seq ? history.CallEnd(to_seq) : last;
    }
  }

  // The same command as the interrupted one: its plan again.
  const RestoreOf& cut = chain.interrupted;
  bool same = chain.partial && cut.verb == ask.verb &&
              (redo || (account.paths == cut.paths && account.boundary == cut.boundary));
  // Typed bare after an interrupted restore with paths or a target of its
  // own, the command means that restore too.
  if (chain.partial && cut.verb == ask.verb && ask.to.empty() && ask.turns == 0 && ask.paths.empty()) same = true;
  if (same) {
    out->finishing = true;
    account.from = cut.from;
    account.boundary = cut.boundary;
    account.paths = cut.paths;
    account.turns = cut.turns;
  }
  request.boundary = account.boundary;
  request.paths = account.paths;
  if (chain.known) {
    request.expected.push_back(chain.current);
    if (chain.partial) {
      request.expected.push_back(cut.boundary);
      request.absent_expected = true;
    }
  }
  out->already_undone = undo && !out->finishing && chain.known && !chain.partial && chain.current == 0 &&
                        ask.to.empty() && ask.turns == 0 && ask.paths.empty();
  return Status::Ok();
}

}  // namespace guard
