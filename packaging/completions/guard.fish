# fish completion for guard: subcommands, their options, and session ids for
# --session and forget (from `guard __complete sessions`).
# Installed as share/fish/vendor_completions.d/guard.fish.

set -l subcommands sessions status show diff export undo replay redo checkpoint commit recover gc forget config shell-init mark hooks doctor help
complete -c guard -f
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a sessions -d 'List the sessions of this root'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a status -d 'Running sessions, the last one, the store'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a show -d 'The operations of a session'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a diff -d 'What a session changed'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a export -d 'A session as a patch or tar'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a undo -d 'Put back what a session changed'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a replay -d 'Put back the state a session left'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a redo -d 'Reverse the last undo of a session'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a recover -d 'Complete sessions whose guard died'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a gc -d 'Remove old sessions and unneeded blobs'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a forget -d 'Remove the given sessions'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a config -d 'Print the effective settings'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a shell-init -d 'Shell code that runs agents under guard'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a mark -d 'Record a labelled point in the session this runs in'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a hooks -d "Add guard's hooks to an agent's settings, or remove them"
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a doctor -d 'Say which capture modes work on this machine, and try each one'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a checkpoint -d "Commit the session's state to refs/guard/<session-id>"
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a commit -d "Commit exactly the session's paths on the current branch"
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -a help -d "Print guard's help, or a subcommand's"
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -l checkpoint-every -x -d 'Checkpoint the session every DURATION'
complete -c guard -n "__fish_seen_subcommand_from checkpoint commit" -l session -x -a '(guard __complete sessions 2>/dev/null)' -d 'ID, prefix, last or last~N'
complete -c guard -n "__fish_seen_subcommand_from checkpoint commit" -s m -l message -x -d 'The commit message'
complete -c guard -n "__fish_seen_subcommand_from checkpoint" -l at -x -d 'The state at mark @N or LABEL'
complete -c guard -n "__fish_seen_subcommand_from commit" -s y -l yes -d 'Do not ask'
complete -c guard -n "__fish_seen_subcommand_from commit" -l dry-run -d 'Only show what would be committed'
complete -c guard -n "__fish_seen_subcommand_from commit" -l include-ignored -d 'Commit ignored files too'

complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -l root -r -a '(__fish_complete_directories)' -d 'The tree to protect'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -s q -l quiet -d 'Print nothing of guard\'s own'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -l on-capture-failure -x -a 'block allow'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -l mode -x -a 'auto trace preload watch'
complete -c guard -n "not __fish_seen_subcommand_from $subcommands" -l version -d 'Print the version and commit'
complete -c guard -s h -l help -d 'Print help'

complete -c guard -n "__fish_seen_subcommand_from sessions" -l json -l all
complete -c guard -n "__fish_seen_subcommand_from sessions" -l all -d 'Sessions of every root'
complete -c guard -n "__fish_seen_subcommand_from status show" -l json -d 'Print JSON'
complete -c guard -n "__fish_seen_subcommand_from show diff export undo replay redo" -l session -x -a '(guard __complete sessions 2>/dev/null)' -d 'ID, prefix, last or last~N'
complete -c guard -n "__fish_seen_subcommand_from diff export" -l to -x -d 'Operation SEQ, or mark @N or LABEL'
complete -c guard -n "__fish_seen_subcommand_from undo replay" -l to -x -d 'Operation SEQ, or mark @N or LABEL'
complete -c guard -n "__fish_seen_subcommand_from undo" -l turns -x -d 'The last N marked turns'
complete -c guard -n "__fish_seen_subcommand_from mark" -l step -d 'A point inside a turn'
complete -c guard -n "__fish_seen_subcommand_from mark" -l hook -x -a claude -d 'Run as an agent hook'
complete -c guard -n "__fish_seen_subcommand_from doctor" -l json -d 'The findings and the modes as JSON'
complete -c guard -n "__fish_seen_subcommand_from hooks; and not __fish_seen_subcommand_from install uninstall" -x -a 'install uninstall'
complete -c guard -n "__fish_seen_subcommand_from install uninstall; and not __fish_seen_subcommand_from claude" -x -a claude
complete -c guard -n "__fish_seen_subcommand_from hooks" -l project -d 'The project settings (default)'
complete -c guard -n "__fish_seen_subcommand_from hooks" -l user -d '~/.claude/settings.json'
complete -c guard -n "__fish_seen_subcommand_from diff show status sessions" -l color -x -a 'auto always never'
complete -c guard -n "__fish_seen_subcommand_from export" -l format -x -a 'patch tar'
complete -c guard -n "__fish_seen_subcommand_from export" -l pending -x -d 'An unnamed pre-image, by its key'
complete -c guard -n "__fish_seen_subcommand_from diff" -l stat -d 'A diffstat'
complete -c guard -n "__fish_seen_subcommand_from diff" -l name-only -d 'The changed names only'
complete -c guard -n "__fish_seen_subcommand_from diff show" -l no-pager -d 'Do not page'
complete -c guard -n "__fish_seen_subcommand_from undo replay redo gc forget" -l dry-run -d 'Only print what would change'
complete -c guard -n "__fish_seen_subcommand_from undo replay redo" -s y -l yes -d 'Do not ask'
complete -c guard -n "__fish_seen_subcommand_from undo replay redo" -l force -d 'Overwrite conflicts'
complete -c guard -n "__fish_seen_subcommand_from undo replay redo" -s v -l verbose -d 'List every change of a long plan'
complete -c guard -n "__fish_seen_subcommand_from undo replay diff" -F
complete -c guard -n "__fish_seen_subcommand_from gc" -l keep -x -d 'Remove sessions older than DURATION'
complete -c guard -n "__fish_seen_subcommand_from gc" -l max-size -x -d 'The size cap'
complete -c guard -n "__fish_seen_subcommand_from gc" -l keep-newest -x -d 'Sessions of each root always kept'
complete -c guard -n "__fish_seen_subcommand_from forget" -x -a '(guard __complete sessions 2>/dev/null)'
complete -c guard -n "__fish_seen_subcommand_from forget" -s y -l yes -d 'Do not ask'
complete -c guard -n "__fish_seen_subcommand_from shell-init" -x -a 'bash zsh fish'
complete -c guard -n "__fish_seen_subcommand_from shell-init" -l prompt -d 'A prompt hook too'
complete -c guard -n "__fish_seen_subcommand_from help" -x -a "$subcommands"
complete -c guard -n "__fish_seen_subcommand_from config; and not __fish_seen_subcommand_from get set" -x -a 'get set'
complete -c guard -n "__fish_seen_subcommand_from config; and not __fish_seen_subcommand_from get set" -l json -d 'Print JSON'
complete -c guard -n "__fish_seen_subcommand_from get set; and test (count (commandline -opc)) -eq 3" -x -a 'capture.on_failure capture.mode capture.hide_state capture.checkpoint_every capture.sync_every retention.keep retention.max_size retention.keep_newest retention.auto_gc shell_init.agents'
