# bash completion for guard: subcommands, their options, and session ids
# for --session and forget (from `guard __complete sessions`).
# Installed as share/bash-completion/completions/guard.

_guard_cmd_sessions() {
  COMPREPLY=($(compgen -W "$(guard __complete sessions 2>/dev/null)" -- "$1"))
}

_guard_cmd() {
  local cur prev i sub=""
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  local subcommands="sessions status show diff export undo replay redo checkpoint commit recover gc forget config shell-init mark hooks doctor help"
  local global="--root --quiet -q --on-capture-failure --mode --checkpoint-every --help -h --version"
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      --) COMPREPLY=($(compgen -c -- "$cur")); return ;;  # the command guard runs
      --root|--on-capture-failure|--mode|--checkpoint-every|--session|--to|--turns|--at|-m|--message|--hook|--color|--format|--keep|--max-size|--keep-newest)
        ((i++)) ;;
      -*) ;;
      *) [[ -z $sub ]] && sub=${COMP_WORDS[i]} ;;
    esac
  done
  case $prev in
    --session) _guard_cmd_sessions "$cur"; return ;;
    --root) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --on-capture-failure) COMPREPLY=($(compgen -W "block allow" -- "$cur")); return ;;
    --mode) COMPREPLY=($(compgen -W "auto trace preload watch" -- "$cur")); return ;;
    --color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
    --format) COMPREPLY=($(compgen -W "patch tar" -- "$cur")); return ;;
    --hook) COMPREPLY=($(compgen -W "claude" -- "$cur")); return ;;
    --to|--turns|--at|-m|--message|--checkpoint-every|--keep|--max-size|--keep-newest) return ;;
  esac
  local opts
  case $sub in
    "") COMPREPLY=($(compgen -W "$subcommands $global --" -- "$cur")); return ;;
    sessions) opts="--json --all --color" ;;
    status) opts="--json --color" ;;
    show) opts="--session --json --no-pager --color" ;;
    diff) opts="--session --to --color --stat --name-only --no-pager" ;;
    export) opts="--session --format --to --pending" ;;
    undo) opts="--session --to --turns --dry-run --yes -y --force --verbose -v" ;;
    replay) opts="--session --to --dry-run --yes -y --force --verbose -v" ;;
    redo) opts="--session --dry-run --yes -y --force --verbose -v" ;;
    checkpoint) opts="--session --at -m --message" ;;
    commit) opts="--session -m --message --yes -y --dry-run --include-ignored" ;;
    mark) opts="--step --hook" ;;
    doctor) opts="--json" ;;
    hooks)
      # guard hooks install|uninstall claude [--project|--user] [--root DIR]
      local words=" ${COMP_WORDS[*]:1:COMP_CWORD-1} "
      if [[ $words != *" install "* && $words != *" uninstall "* ]]; then opts="install uninstall"
      elif [[ $words != *" claude "* ]]; then opts="claude"
      else opts="--project --user --root"; fi ;;
    recover) opts="" ;;
    config)
      # guard config [--json] | get KEY | set KEY VALUE
      local words=" ${COMP_WORDS[*]:1:COMP_CWORD-1} "
      if [[ $words == *" get "* || $words == *" set "* ]]; then
        [[ $prev == get || $prev == set ]] || return
        opts="capture.on_failure capture.mode capture.hide_state capture.checkpoint_every capture.sync_every retention.keep retention.max_size retention.keep_newest retention.auto_gc shell_init.agents"
      else opts="get set --json"; fi ;;
    help) opts="$subcommands" ;;
    gc) opts="--dry-run --keep --max-size --keep-newest" ;;
    forget)
      if [[ $cur != -* ]]; then _guard_cmd_sessions "$cur"; return; fi
      opts="--dry-run --yes" ;;
    shell-init) opts="bash zsh fish --prompt" ;;
  esac
  COMPREPLY=($(compgen -W "$opts --help" -- "$cur"))
  # undo, replay, diff and commit also take paths.
  case $sub in undo|replay|diff|commit) [[ $cur != -* ]] && COMPREPLY+=($(compgen -f -- "$cur")) ;; esac
}
complete -F _guard_cmd guard
