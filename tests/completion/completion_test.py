#!/usr/bin/env python3
"""Each shell's completion of guard, for real: the files `cmake --install`
puts under /usr and under /usr/local (in DESTDIR stages), loaded the way
each shell loads them, and a line typed with TAB in a pseudo-terminal
(bash, zsh) or fish's own `complete -C`. The completed line is then run, so
that what the shell completed is what guard reads. zsh's completion file
must also leave zsh's own _guard helper (used by _seq, _tmux...) alone.

    completion_test.py CMAKE BUILD_DIR
"""
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

CMAKE, BUILD = sys.argv[1], sys.argv[2]
failures = []


def check(ok, what, detail=""):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
        if detail:
            print("     " + detail.replace("\n", "\n     ")[-3000:])


def install(stage, prefix):
    env = dict(os.environ, DESTDIR=stage)
    subprocess.run([CMAKE, "--install", BUILD, "--prefix", prefix], env=env, check=True,
                   stdout=subprocess.DEVNULL)


def read_until_quiet(fd, quiet=0.7, limit=15.0):
    out = b""
    end = time.time() + limit
    last = time.time()
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            last = time.time()
        elif time.time() - last > quiet:
            break
    # Without the terminal's escape sequences (zsh's line editor draws with them).
    return re.sub(r"\x1b(\[[0-9;?]*[A-Za-z]|[()][0-9A-Za-z]|[=>])", "", out.decode("utf-8", "replace"))


PROMPT = "READY> "


def read_until_prompt(fd, limit=20.0):
    """What the shell shows until its next prompt (PROMPT), which compinit
    may take seconds to reach."""
    shown = ""
    end = time.time() + limit
    while time.time() < end and not shown.rstrip().endswith(PROMPT.strip()):
        shown += read_until_quiet(fd, quiet=0.3, limit=max(0.1, end - time.time()))
    return shown


def in_terminal(argv, env, setup, typed, cwd):
    """Starts argv in a pseudo-terminal, sends `setup` lines (the first
    sets PS1 to PROMPT), each once the shell prompts again, then `typed`
    (with its TABs); returns what the terminal showed after `typed`, up to
    the next prompt when `typed` ends a line."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execvpe(argv[0], argv, env)
    try:
        read_until_quiet(fd)
        for line in setup:
            os.write(fd, line.encode() + b"\n")
            read_until_prompt(fd)
        shown = ""
        for part in typed:
            os.write(fd, part.encode())
            shown += read_until_prompt(fd) if part.endswith("\n") else read_until_quiet(fd)
        return shown
    finally:
        os.write(fd, b"\x03exit\n")
        time.sleep(0.2)
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)


def main():
    for shell in ("bash", "zsh", "fish"):
        if shutil.which(shell) is None:
            print(f"FAIL {shell} is not installed (tools/setup.sh installs it)")
            return 1
    work = tempfile.mkdtemp(prefix="guard-completion-")
    usr, local = work + "/usr-stage", work + "/local-stage"
    install(usr, "/usr")
    install(local, "/usr/local")
    home = work + "/home"
    tree = work + "/tree"
    os.makedirs(home)
    os.makedirs(tree)
    env = {"PATH": usr + "/usr/bin:/usr/bin:/bin", "HOME": home, "TERM": "dumb", "GUARD_HOME": work + "/state",
           "XDG_CONFIG_HOME": home + "/.config", "LANG": "C.UTF-8"}
    # One session, for the completion of session ids.
    subprocess.run(["guard", "-q", "--", "true"], cwd=tree, env=env, check=True)
    ids = subprocess.run(["guard", "__complete", "sessions"], cwd=tree, env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    session = ids[0]

    # bash: the file bash-completion would load, sourced by an interactive bash.
    for stage, prefix in ((usr, "/usr"), (local, "/usr/local")):
        script = f"{stage}{prefix}/share/bash-completion/completions/guard"
        check(os.path.exists(script), f"bash: {prefix}/share/bash-completion/completions/guard is installed")
        bash = ["bash", "--norc", "--noprofile", "-i"]
        setup = [f"PS1='{PROMPT}'", "bind 'set show-all-if-ambiguous on'", f"source {script}"]
        shown = in_terminal(bash, env, setup, ["guard un\t", "--help\n"], tree)
        check("Usage: guard undo" in shown, f"bash ({prefix}): 'guard un<TAB>' completes to guard undo", shown)
        shown = in_terminal(bash, env, setup, ["guard s\t"], tree)
        check(all(w in shown for w in ("sessions", "shell-init", "show", "status")),
              f"bash ({prefix}): 'guard s<TAB>' lists the subcommands", shown)
        shown = in_terminal(bash, env, setup, ["guard show --session \t"], tree)
        check(session in shown and "last" in shown, f"bash ({prefix}): --session <TAB> offers the session ids", shown)
        shown = in_terminal(bash, env, setup, ["guard config get retention.k\t"], tree)
        check("retention.keep" in shown and "retention.keep_newest" in shown,
              f"bash ({prefix}): config get <TAB> offers the keys", shown)

    # zsh: compinit over the fpath Debian's zsh has, with the staged
    # directory where the install put the file.
    for stage, prefix, sub in ((usr, "/usr", "vendor-completions"), (local, "/usr/local", "site-functions")):
        comp_dir = f"{stage}{prefix}/share/zsh/{sub}"
        check(os.path.exists(comp_dir + "/_guard_cmd"), f"zsh: {prefix}/share/zsh/{sub}/_guard_cmd is installed")
        check(not os.path.exists(comp_dir + "/_guard"), f"zsh: no _guard in {prefix}/share/zsh/{sub}")
        setup = [f"PS1='{PROMPT}'", f"fpath=({comp_dir} $fpath)", "autoload -Uz compinit", "compinit -u -D"]
        zsh = ["zsh", "-f", "-i"]
        zenv = dict(env, TERM="xterm")  # with TERM=dumb zsh has no line editor
        shown = in_terminal(zsh, zenv, setup, ["guard un\t", "--help\n"], tree)
        check("Usage: guard undo" in shown, f"zsh ({prefix}): 'guard un<TAB>' completes to guard undo", shown)
        shown = in_terminal(zsh, zenv, setup, ["guard s\t"], tree)
        check(all(w in shown for w in ("sessions", "shell-init", "show", "status")),
              f"zsh ({prefix}): 'guard s<TAB>' lists the subcommands", shown)
        shown = in_terminal(zsh, zenv, setup, ["guard show --session \t"], tree)
        check(session in shown, f"zsh ({prefix}): --session <TAB> offers the session ids", shown)
        # zsh's own _guard (a helper of _seq, _tmux, _git...) is still zsh's.
        r = subprocess.run(["zsh", "-f", "-c", f"fpath=({comp_dir} $fpath); autoload -Uz compinit; compinit -u -D; "
                            "zmodload zsh/parameter; autoload +X _guard; print -r -- $_comps[guard]; "
                            "print -r -- $functions_source[_guard]"],
                           env=env, cwd=tree, capture_output=True, text=True)
        lines = r.stdout.split("\n")
        check(lines[0] == "_guard_cmd", f"zsh ({prefix}): guard is completed by _guard_cmd", r.stdout + r.stderr)
        check(len(lines) > 1 and lines[1].startswith("/usr/share/zsh/functions/"),
              f"zsh ({prefix}): _guard stays zsh's own helper", r.stdout + r.stderr)

    # fish: its own completion engine, which finds vendor_completions.d
    # through XDG_DATA_DIRS.
    for stage, prefix in ((usr, "/usr"), (local, "/usr/local")):
        data = f"{stage}{prefix}/share"
        check(os.path.exists(data + "/fish/vendor_completions.d/guard.fish"),
              f"fish: {prefix}/share/fish/vendor_completions.d/guard.fish is installed")
        fenv = dict(env, XDG_DATA_DIRS=data + ":/usr/share")

        def fish(line):
            r = subprocess.run(["fish", "-c", f"complete -C '{line}'"], env=fenv, cwd=tree,
                               capture_output=True, text=True)
            return [l.split("\t")[0] for l in r.stdout.splitlines()]

        got = fish("guard un")
        check(got == ["undo"], f"fish ({prefix}): 'guard un' completes to undo", str(got))
        got = fish("guard s")
        check(all(w in got for w in ("sessions", "shell-init", "show", "status")),
              f"fish ({prefix}): 'guard s' lists the subcommands", str(got))
        got = fish("guard show --session ")
        check(session in got and "last" in got, f"fish ({prefix}): --session offers the session ids", str(got))
        got = fish("guard undo --tu")
        check(got == ["--turns"], f"fish ({prefix}): 'guard undo --tu' completes to --turns", str(got))

    shutil.rmtree(work, ignore_errors=True)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


sys.exit(main())
