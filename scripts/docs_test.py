#!/usr/bin/env python3
"""Runs the tutorials' shell blocks against a fresh Crema and compares every answer with the one pasted.

Usage: docs_test.py BIN_DIR TUTORIAL.md...   (scripts/docs-test passes the tutorials)
       docs_test.py --self-test              (checks the normaliser below on fixed examples)
       DOCS_TEST_SHOW=1 docs_test.py ...     (also prints every command's output as it came, to paste)

For each tutorial: a fresh embedded Crema (`crema serve` with CREMA_DATA_DIR in a new temporary folder, a free
loopback port, no CREMA_DATABASE_URL or CREMA_API_KEYS, so it starts its own PostgreSQL cluster and generates its
keys into $CREMA_DATA_DIR/api-keys), then the tutorial's ```console blocks, in order, in ONE bash process (so
variables carry over from block to block), started in the repository's root with:
  API             the instance's base URL (a tutorial writes API=${API:-http://127.0.0.1:8080})
  CREMA_DATA_DIR  the instance's folder (a tutorial reads ${CREMA_DATA_DIR:-.crema}/api-keys)
  PATH            BIN_DIR first, so `crema` and `barista` are the binaries under test
  HOME            an empty folder, so no config file of the tester's (~/.config/barista) is read
and no other CREMA_*, PG* or BARISTA_CONFIG variable of the tester's.

A block is a sequence of `$ command` lines (a line ending in `\\` continues on the next), each followed by the
output it is expected to print, up to the next `$ ` line or the end of the block. Its stdout and stderr are
compared together, and a non-zero exit status is printed as a last line `[exit N]`, so it is part of the
expected output too. Each command has 60 s.

Rules of the comparison, applied to the pasted output and the actual one alike:
  1. Leading and trailing blank lines are dropped; trailing spaces (and \\r) are dropped; a run of spaces inside
     a line compares as one space (a table's column widths follow its widest cell, e.g. an age of 9s or 10s).
  2. In the actual output, the instance's URL reads as http://127.0.0.1:8080 and its folder as .crema,
     which is what a reader running scripts/run sees.
  3. Generated API keys (`pos_…`, `barista_…`: a lowercase word, `_`, 32 or more hex digits) become <key>,
     UUIDs <uuid>, RFC 3339 timestamps <time>, other runs of 16 or more hex digits <hex>, wall-clock times
     (12:34 or 12:34:56, as barista prints them) <clock>, counts of seconds (0s, 12s) <secs>, and integers of
     9 or 10 digits (seconds since an epoch, as the projection's "eta") <epoch>.
  4. A line that is JSON on both sides is compared as JSON (Crema prints keys sorted, so it reads the same).
  5. A pasted output line ending in `# ignore` matches any one line. A command ending in `# ignore` runs but
     its output is not compared.
Every command is counted; the first mismatch is shown as a diff with the tutorial's file and line, later ones
by file and line only. The last line is `docs-test: N passed, M failed`; exit 1 on any failure.

A tutorial that needs its instance started with some variables says so to its reader in words and to this script in a
line `<!-- docs-test: serve with NAME=value ... -->` (docs/tutorial-webhooks.md: CREMA_WEBHOOK_ALLOW_PRIVATE=1).
"""

import difflib
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

COMMAND_TIMEOUT = 60
READY_TIMEOUT = 180  # initdb and the migrations on a busy 2-core CI machine
READER_API = "http://127.0.0.1:8080"
READER_DATA_DIR = ".crema"
IGNORE = "# ignore"
SENTINEL = "__docs_test_done__"

RULES = [
    (re.compile(r"\b[a-z][a-z0-9]*_[0-9a-f]{32,}\b"), "<key>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})"), "<time>"),
    (re.compile(r"\b[0-9a-fA-F]{16,}\b"), "<hex>"),
    (re.compile(r"\b\d{2}:\d{2}(:\d{2})?\b"), "<clock>"),
    (re.compile(r"\b\d+s\b"), "<secs>"),
    (re.compile(r"(?<![\d.])\d{9,10}(?![\d.])"), "<epoch>"),
]


def normalise_line(line):
    for pattern, replacement in RULES:
        line = pattern.sub(replacement, line)
    return re.sub(r"[ \t]+", " ", line.rstrip())


def trim_blank(lines):
    lines = [line.rstrip("\r").rstrip() for line in lines]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def as_json(line):
    if not line[:1] in ("{", "["):
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


def lines_match(expected, actual):
    """expected and actual are normalised lines."""
    if expected.endswith(IGNORE):
        return True
    if expected == actual:
        return True
    a, b = as_json(expected), as_json(actual)
    return a is not None and b is not None and a == b


def outputs_match(expected, actual):
    return len(expected) == len(actual) and all(lines_match(e, a) for e, a in zip(expected, actual))


def localise(text, api, data_dir):
    """Rule 2: the actual output as a reader on scripts/run would see it."""
    return text.replace(api, READER_API).replace(data_dir, READER_DATA_DIR)


class Command:
    def __init__(self, path, line, text, expected):
        self.path, self.line, self.text, self.expected = path, line, text, expected

    @property
    def ignored(self):
        return self.text.rstrip().endswith(IGNORE)


def parse(path):
    """The ```console blocks' commands, in order, each with the line it starts on and its pasted output."""
    commands = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        i += 1
        current = None
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            if line.startswith("$ "):
                start = i + 1
                text = [line[2:]]
                while text[-1].endswith("\\") and i + 1 < len(lines):
                    i += 1
                    text.append(lines[i])
                current = Command(path, start, "\n".join(text), [])
                commands.append(current)
            elif current is not None:
                current.expected.append(line)
            elif line.strip():
                sys.exit(f"{path}:{i + 1}: output before any '$ ' command in a console block")
            i += 1
        if i >= len(lines):
            sys.exit(f"{path}: a console block is not closed")
        i += 1
    return commands


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_environment():
    env = {k: v for k, v in os.environ.items()
           if not (k.startswith("CREMA_") or k.startswith("PG") or k in ("BARISTA_CONFIG", "API", "XDG_CONFIG_HOME"))}
    env["NO_COLOR"] = "1"
    env.setdefault("LANG", "C.UTF-8")
    return env


SERVE_WITH = re.compile(r"^<!-- docs-test: serve with ((?:[A-Z_]+=\S+ ?)+) -->$")


def serve_environment(path):
    """Variables a tutorial asks its instance to be started with, from a line
    `<!-- docs-test: serve with NAME=value ... -->` (the tutorial says the same to its reader in words)."""
    env = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            match = SERVE_WITH.match(line.strip())
            if match:
                env.update(pair.split("=", 1) for pair in match.group(1).split())
    return env


class Instance:
    """A fresh embedded `crema serve` in a temporary folder, stopped and removed by stop()."""

    def __init__(self, bin_dir, serve_env=None):
        self.folder = tempfile.mkdtemp(prefix="crema-docs-test-")
        self.data_dir = os.path.join(self.folder, "crema")
        self.home = os.path.join(self.folder, "home")
        os.mkdir(self.home)
        self.bin_dir = bin_dir
        self.port = free_port()
        self.api = f"http://127.0.0.1:{self.port}"
        self.log_path = os.path.join(self.folder, "server.log")
        env = clean_environment()
        env["CREMA_DATA_DIR"] = self.data_dir
        env["LOG_LEVEL"] = "info"
        env.update(serve_env or {})
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen([os.path.join(bin_dir, "crema"), "serve", "--port", str(self.port)],
                                        env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)

    def wait_ready(self):
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                with urllib.request.urlopen(self.api + "/health/ready", timeout=2) as answer:
                    if answer.status == 200 and os.path.exists(os.path.join(self.data_dir, "api-keys")):
                        return True
            except OSError:
                pass
            time.sleep(0.3)
        with open(self.log_path, errors="replace") as f:
            sys.stderr.write("docs-test: the instance did not become ready; its log ends:\n"
                             + "".join(f.readlines()[-30:]))
        return False

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # drains and stops the cluster it started
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()
        cluster = os.path.join(self.data_dir, "postgres")
        if os.path.exists(os.path.join(cluster, "data", "postmaster.pid")):
            subprocess.run([os.path.join(self.bin_dir, "crema"), "postgres", "stop", "--dir", cluster],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=False)
        shutil.rmtree(self.folder, ignore_errors=True)


class Shell:
    """One bash process; each command's stdout and stderr go to a file, then a line on bash's stdout says done."""

    def __init__(self, instance, root):
        env = clean_environment()
        env.update(API=instance.api, CREMA_DATA_DIR=instance.data_dir, HOME=instance.home,
                   PATH=instance.bin_dir + os.pathsep + env.get("PATH", "/usr/bin:/bin"))
        self.out = os.path.join(instance.folder, "command.out")
        self.process = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=root, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        self.buffer = b""

    def run(self, text):
        """The command's output as it came (with `[exit N]` when it failed), or None when bash died or timed out."""
        script = (f"{{ {text}\n}} > '{self.out}' 2>&1 < /dev/null; __docs_status=$?\n"
                  f"[ $__docs_status -eq 0 ] || echo \"[exit $__docs_status]\" >> '{self.out}'\n"
                  f"echo {SENTINEL}\n")
        try:
            self.process.stdin.write(script.encode())
            self.process.stdin.flush()
        except BrokenPipeError:
            return None
        deadline = time.monotonic() + COMMAND_TIMEOUT
        while (SENTINEL + "\n").encode() not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.process.stdout], [], [], left)[0]:
                self.stop()
                return None
            chunk = os.read(self.process.stdout.fileno(), 4096)
            if not chunk:
                return None
            self.buffer += chunk
        self.buffer = self.buffer.split((SENTINEL + "\n").encode(), 1)[1]
        with open(self.out, "rb") as f:
            return f.read().decode("utf-8", errors="replace")

    def stop(self):
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait(timeout=10)


def run_tutorial(path, bin_dir, root, show):
    commands = parse(path)
    if not commands:
        sys.exit(f"{path}: no ```console block")
    print(f"docs-test: {path}: {len(commands)} commands against a fresh instance", flush=True)
    instance = Instance(bin_dir, serve_environment(path))
    failures = []
    try:
        if not instance.wait_ready():
            return 0, [(command, None, None) for command in commands]
        shell = Shell(instance, root)
        try:
            for command in commands:
                raw = shell.run(command.text)
                if show:
                    print(f"--- {command.path}:{command.line}\n$ {command.text}\n{raw}", flush=True)
                if raw is None:
                    failures.append((command, None, "bash died or the command outlasted "
                                                    f"{COMMAND_TIMEOUT}s"))
                    shell = Shell(instance, root)
                    continue
                if command.ignored:
                    continue
                expected = [normalise_line(line) for line in trim_blank(command.expected)]
                actual = [normalise_line(line)
                          for line in trim_blank(localise(raw, instance.api, instance.data_dir).split("\n"))]
                if not outputs_match(expected, actual):
                    failures.append((command, expected, actual))
        finally:
            shell.stop()
    finally:
        instance.stop()
    return len(commands) - len(failures), failures


def report(failures):
    for index, (command, expected, actual) in enumerate(failures):
        where = f"{command.path}:{command.line}"
        first_line = command.text.split("\n")[0]
        if index > 0:
            print(f"docs-test: also differs: {where}: $ {first_line[:100]}")
            continue
        print(f"\ndocs-test: MISMATCH at {where}\n  $ {command.text}")
        if expected is None:
            print(f"  ({actual or 'the instance did not start'})")
            continue
        print("  diff of the normalised outputs (- pasted in the tutorial, + printed now):")
        for line in difflib.unified_diff(expected, actual, "pasted", "actual", lineterm="", n=2):
            print("  " + line)
        print()


def self_test():
    cases = [
        ('{"id":"93eee9e2-2949-4ad9-8caf-001041f53a47","at":"2026-11-22T03:57:36.878Z"}',
         '{"id":"<uuid>","at":"<time>"}'),
        ("  pos       pos_346a6d7fecb722d748c7fc0eb205c84a105b6da072f0a2bf", " pos <key>"),
        ("token 8f2a61c0d5e94b7a8c3e1f6d2b9a04e7 and 8f2a61c0…", "token <hex> and 8f2a61c0…"),
        ("  1  Ana    0s   in 6m  1× Oat latte", " 1 Ana <secs> in 6m 1× Oat latte"),
        ("Harbor St (harbor-st) · 3 open · 23:28:17", "Harbor St (harbor-st) · 3 open · <clock>"),
        ("HTTP/1.1 200 OK\r", "HTTP/1.1 200 OK"),
        ("http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"),
        ('"eta":817396292,"number":1', '"eta":<epoch>,"number":1'),
    ]
    bad = [(given, normalise_line(given), want) for given, want in cases if normalise_line(given) != want]
    assert lines_match(normalise_line('{"b":1, "a":"x"}'), normalise_line('{"a":"x","b":1}'))
    assert lines_match("anything at all # ignore", "something else")
    assert not outputs_match(["a"], ["a", "b"])
    assert localise("at http://127.0.0.1:40001 in /tmp/x/crema/apns-sim", "http://127.0.0.1:40001",
                    "/tmp/x/crema") == "at http://127.0.0.1:8080 in .crema/apns-sim"
    for given, got, want in bad:
        print(f"normaliser: {given!r} gave {got!r}, wanted {want!r}")
    if bad:
        sys.exit(1)
    print("docs-test: normaliser self-test passed")


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    bin_dir, tutorials = os.path.abspath(sys.argv[1]), sys.argv[2:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    show = os.environ.get("DOCS_TEST_SHOW") == "1"
    # SIGTERM and SIGHUP stop the instance and remove its folder as Ctrl-C does (the `finally`s on the way out).
    def interrupt(signum, _frame):
        raise KeyboardInterrupt
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, interrupt)
    passed, failures = 0, []
    try:
        for path in tutorials:
            ok, failed = run_tutorial(path, bin_dir, root, show)
            passed += ok
            failures += failed
    except KeyboardInterrupt:
        print("docs-test: interrupted; the instance is stopped and its folder removed", file=sys.stderr)
        sys.exit(130)
    report(failures)
    print(f"docs-test: {passed} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
