#!/usr/bin/env python3
"""Holds the ingest benchmark's pgbench files to the statements crema sends, so the two sides cannot drift.

bench/ingest.sh runs one order lifecycle (placed, started, ready, picked_up) through `crema serve` with PostgreSQL's
statement log on (log_statement = 'all', log_line_prefix = '<<%p>> '), then calls this with that log and the pgbench
files. Each of crema's four event transactions (BEGIN ... COMMIT on one backend, holding the Idempotency-Key claim) is
compared, statement for statement and in order, with what each pgbench file runs for the same stage (its \\if :stage
branches). Exit 0 when every file matches, 1 (with the first difference of each file) when one does not: ingest.sh
then refuses to run, since the comparison would no longer be of the same SQL.

Both sides are normalized the same way before comparing: comments and whitespace, then every bound parameter
($n, :variable), literal ('text', 42, NULL) and clock reading (now()) becomes `?`, because the pgbench files write as
literals what crema binds (bench/ingest.pgbench.sql, "Deviations"). The few expressions pgbench computes where crema
binds one value (md5(:oid::text)::uuid, ('s' || :st), now() - interval '24 hours', repeat('x', 250), the event's stream
position read back from the store's row) become `?` too,
and so does a uuid cast on a value (crema casts the webhook drafts' ids it binds; pgbench's md5(...)::uuid has its own).
Everything else (tables, columns, CTEs, joins, casts, clause order) must be the same text.

Usage: bench/ingest_statements.py LOG PGBENCH_FILE...
"""

import re
import sys

STAGES = ["placed", "started", "ready", "picked_up"]


def crema_transactions(log_path):
    """The order commands in a statement log: per backend, BEGIN to COMMIT, kept when it claims an Idempotency-Key."""
    text = open(log_path, encoding="utf-8", errors="replace").read()
    records = re.split(r"^<<(\d+)>> ", text, flags=re.M)
    open_by_pid, done = {}, []
    for pid, message in zip(records[1::2], records[2::2]):
        m = re.match(r"LOG:\s+(?:statement|execute [^:]*):\s(.*)", message, flags=re.S)
        if not m:
            continue
        sql = m.group(1).strip()
        head = sql.split(None, 1)[0].upper() if sql else ""
        if head == "BEGIN":
            open_by_pid[pid] = [sql]
        elif pid in open_by_pid:
            open_by_pid[pid].append(sql)
            if head in ("COMMIT", "ROLLBACK"):
                statements = open_by_pid.pop(pid)
                if any("INSERT INTO idempotency_keys" in s for s in statements):
                    done.append(statements)
    return done


def pgbench_statements(path, stage):
    """The SQL commands a pgbench script runs for `:stage` = stage, in order (meta-commands evaluated or skipped)."""
    statements, current = [], []
    active = [True]  # one entry per open \if: whether its current branch runs (and every enclosing one)
    taken = [True]  # whether a branch of that \if already ran

    def holds(expression):
        return eval(re.sub(r"(?<![<>!=])=(?!=)", "==", expression.replace(":stage", str(stage))), {})

    for line in open(path, encoding="utf-8"):
        stripped = line.strip()
        if stripped.startswith("\\"):
            command, _, argument = stripped[1:].partition(" ")
            if command == "if":
                runs = active[-1] and holds(argument)
                active.append(runs)
                taken.append(runs)
            elif command == "elif":
                runs = active[-2] and not taken[-1] and holds(argument)
                active[-1] = runs
                taken[-1] = taken[-1] or runs
            elif command == "else":
                active[-1] = active[-2] and not taken[-1]
                taken[-1] = True
            elif command == "endif":
                active.pop()
                taken.pop()
            continue  # \set, \startpipeline, \endpipeline: no SQL
        if not active[-1] or not stripped or (stripped.startswith("--") and not current):
            continue
        ends_gset = stripped.endswith("\\gset")
        if ends_gset:
            line = line.rstrip().removesuffix("\\gset")
        current.append(line)
        if ends_gset or stripped.endswith(";"):
            statements.append("".join(current).strip().removesuffix(";"))
            current = []
    return statements


def normalize(sql):
    """The statement's shape: what both sides must share (see the module's doc)."""
    sql = re.sub(r"--[^\n]*", " ", sql)
    sql = re.sub(r"'(?:[^']|'')*'", "?", sql)  # text literals (before variables: a literal may hold ':')
    sql = re.sub(r"\$\d+", "?", sql)  # crema's parameters
    sql = re.sub(r"(?<!:):[A-Za-z_]\w*", "?", sql)  # pgbench's variables
    sql = re.sub(r"(?<![\w?])\d+(?:\.\d+)?(?!\w)", "?", sql)  # numbers
    sql = re.sub(r"\bNULL\b", "?", sql)
    sql = re.sub(r"\bnow\(\)", "?", sql)
    sql = re.sub(r"\s+", " ", sql)
    sql = re.sub(r"\s*([(),])\s*", r"\1", sql)
    # What pgbench computes where crema binds one value, until nothing changes.
    collapses = [
        (r"md5\(\?::text\)::uuid", "?"),
        (r"md5\(\?::text \|\| \?\)::uuid", "?"),
        (r"repeat\(\?,\?\)", "?"),
        (r"\? - interval \?", "?"),
        # The event's stream position, read back from the store's row pgbench's transaction updated (crema binds the
        # value its first round trip returned; pgbench cannot keep it across a pipeline).
        (r"\(SELECT stream_position FROM stores p WHERE p\.tenant_id\s*=\s*\?\s*AND p\.store_id\s*=\s*\?\)", "?"),
        (r"\(\?(?: \|\| \?)+\)", "?"),
        # An id pgbench computes as md5(...)::uuid is one crema binds, cast or not.
        (r"\?::uuid", "?"),
    ]
    previous = None
    while previous != sql:
        previous = sql
        for pattern, replacement in collapses:
            sql = re.sub(pattern, replacement, sql)
    return re.sub(r"\s*\?\s*", "?", sql).strip()  # a collapsed value may have kept a space on one side only


def first_difference(a, b):
    """A short view of where two normalized statements part."""
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, i - 80)
    return f"      crema:   …{a[start:i + 80]}…\n      pgbench: …{b[start:i + 80]}…"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    transactions = crema_transactions(sys.argv[1])
    if len(transactions) != len(STAGES):
        print(f"expected {len(STAGES)} order transactions in {sys.argv[1]}, found {len(transactions)}", file=sys.stderr)
        return 1
    failed = False
    for path in sys.argv[2:]:
        problems = []
        for stage, (name, crema) in enumerate(zip(STAGES, transactions)):
            bench = pgbench_statements(path, stage)
            ours, theirs = [normalize(s) for s in crema], [normalize(s) for s in bench]
            if len(ours) != len(theirs):
                problems.append(f"  {name}: crema sends {len(ours)} statements, the file {len(theirs)}")
                heads = lambda ss: ", ".join(s.split("(")[0][:30] for s in ss)
                problems.append(f"      crema:   {heads(ours)}\n      pgbench: {heads(theirs)}")
                continue
            for n, (a, b) in enumerate(zip(ours, theirs), start=1):
                if a != b:
                    problems.append(f"  {name}, statement {n} of {len(ours)} differs:\n{first_difference(a, b)}")
                    break
        if problems:
            failed = True
            print(f"{path} differs from what crema sends:", file=sys.stderr)
            print("\n".join(problems), file=sys.stderr)
        else:
            print(f"{path}: the same statements as crema's, for each of {', '.join(STAGES)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
