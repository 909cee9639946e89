#!/usr/bin/env python3
"""What PostgreSQL wrote over a measured window, per event or per push (issue #45): WAL bytes, index entries per table
and per index, the HOT share of updates, and blocks dirtied and written.

bench/lib.sh takes the inputs (pg_writes_begin / pg_writes_end): a snapshot of the database's counters before and after
the window (bench/lib.sh PG_WRITES_SNAPSHOT: the WAL insert position, pg_stat_wal, pg_stat_user_tables,
pg_stat_user_indexes with each index's predicate and file, and the sums of pg_stat_statements when the module is
loaded), and the window's WAL itself, read back by pg_waldump and summed per relation file and record type
(bench/lib.sh pg_writes_walcount). Where the numbers come from:

- WAL bytes: the LSN distance over the window (pg_wal_lsn_diff; everything the cluster logged: the statements,
  autovacuum, the checkpointer's records) and, beside it, pg_stat_statements' wal_bytes summed over every statement of
  the window (what the statements themselves logged). Full-page images: pg_stat_statements' wal_fpi. A window that
  starts right after a CHECKPOINT (both scripts run one first) logs a full page the first time it touches each page,
  so the FPI share shrinks as the window grows.
- Index entries: PostgreSQL counts no index insertions (pg_stat_user_indexes has scans and tuples read, nothing
  written). They are counted exactly in the window's WAL instead: every btree leaf insertion logs one record
  (INSERT_LEAF, INSERT_POST for a posting-list split, or a level-0 SPLIT_L/SPLIT_R that carries the new tuple), on
  the index's file. Cross-check, printed per table: an index without a predicate gets one entry per heap tuple written
  with new index entries, i.e. n_tup_ins + (n_tup_upd - n_tup_hot_upd) of pg_stat_user_tables; a partial index gets
  one only when the new tuple satisfies its predicate, which no counter tells, hence the WAL. Every index here is a
  btree (other access methods would not be counted: the script says so when it finds one).
- HOT share: (n_tup_hot_upd) / (n_tup_upd) of pg_stat_user_tables over the window.
- Blocks dirtied and written: pg_stat_statements' shared_blks_dirtied and shared_blks_written summed over the window's
  statements (written: blocks a backend had to write out itself to free a buffer).

Usage:
  bench/pg_writes.py side NAME UNIT EVENTS BEFORE.json AFTER.json WALCOUNT.tsv OUT.json   -> the side's lines
      (EVENTS: a number, or rows:TABLE for the rows the window inserted into TABLE)
  bench/pg_writes.py indexes FINAL.json SIDE.json...                                     -> the per-index listing
"""

import json
import os
import sys

INSERTS = {"INSERT_LEAF", "INSERT_POST", "SPLIT_L0", "SPLIT_R0"}


def load(path):
    return json.load(open(path))


def wal_counts(path, snapshot):
    """Per relation name: WAL bytes (records' total length, full-page images included) and btree leaf insertions.

    WALCOUNT.tsv rows: database oid, relation file node (0: a record with no block, e.g. a commit), rmgr, record type,
    records, bytes. Files are named from the AFTER snapshot (its database's tables and indexes; the rest is "other
    databases and catalogs", or "no relation (rmgr)" for records without a block: commits, checkpoints)."""
    names = {}
    for table, t in snapshot["tables"].items():
        names[t["filenode"]] = ("table", table, table)
        if t.get("toast"):
            names[t["toast"]] = ("toast", table, f"{table} (TOAST)")
        if t.get("toast_index"):
            names[t["toast_index"]] = ("toast index", table, f"{table} (TOAST index)")
    for index, i in snapshot["indexes"].items():
        names[i["filenode"]] = ("index", i["table"], index)
    db = str(snapshot["db_oid"])
    rel_bytes, inserts, by_kind = {}, {}, {}
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) != 6:
            continue
        dboid, node, rmgr, rtype, records, nbytes = f[0], int(f[1]), f[2], f[3], int(f[4]), int(f[5])
        mine = dboid == db and node in names
        key = names[node][2] if mine else f"no relation ({rmgr})" if node == 0 else "other databases and catalogs"
        rel_bytes[key] = rel_bytes.get(key, 0) + nbytes
        if not mine:
            continue
        kind, table, relname = names[node]
        if rmgr == "Btree" and rtype in INSERTS:
            inserts[relname] = inserts.get(relname, 0) + records
        k = by_kind.setdefault(table, {"heap": 0, "toast": 0, "indexes": 0})
        k["heap" if kind == "table" else "toast" if kind.startswith("toast") else "indexes"] += nbytes
    return {"bytes": rel_bytes, "inserts": inserts, "by_table": by_kind}


def side(name, unit, events, before_path, after_path, walcount_path, out_path):
    b, a = load(before_path), load(after_path)
    if events.startswith("rows:"):  # the events are the rows the window added to that table (ingest: order_events)
        table = events[5:]
        events = a["tables"][table]["ins"] - b["tables"].get(table, {"ins": 0})["ins"]
    else:
        events = int(events)
    wal = wal_counts(walcount_path, a)
    per = lambda v: v / events if events else float("nan")
    lsn_bytes = a["lsn_bytes"] - b["lsn_bytes"]
    st = None
    if a.get("statements") and b.get("statements") is not None:
        st = {k: (a["statements"][k] or 0) - ((b["statements"] or {}).get(k) or 0) for k in a["statements"]}
    tables = {}
    for t, x in a["tables"].items():
        y = b["tables"].get(t, {"ins": 0, "upd": 0, "hot": 0, "del": 0})
        d = {k: x[k] - y[k] for k in ("ins", "upd", "hot", "del")}
        if any(d.values()) or (wal and (wal["inserts"].get(t) or wal["by_table"].get(t))):
            tables[t] = d
    upd = sum(d["upd"] for d in tables.values())
    hot = sum(d["hot"] for d in tables.values())
    entries = sum(wal["inserts"].values()) if wal else None
    indexes = {}
    for i, x in a["indexes"].items():
        if x["table"] in tables:
            y = b["indexes"].get(i, {"scan": 0})
            indexes[i] = {"table": x["table"], "partial": x["partial"], "am": x.get("am", "btree"),
                          "entries": (wal["inserts"].get(i, 0) if wal else None), "scans": x["scan"] - y["scan"]}
    result = {"name": name, "unit": unit, "events": events, "lsn_bytes": lsn_bytes, "statements": st,
              "tables": tables, "indexes": indexes, "index_entries": entries, "updates": upd, "hot_updates": hot,
              "wal_by_relation": wal["bytes"] if wal else None, "wal_by_table": wal["by_table"] if wal else None}
    json.dump(result, open(out_path, "w"), indent=1)

    # The side's line: the same shape for every side, so sides and runs compare line by line.
    stmt = (f"statements {per(st['wal_bytes']):,.0f} B, {per(st['wal_fpi']):.2f} full-page images" if st else
            "statements: not measured (pg_stat_statements not loaded)")
    hot_share = f"{100 * hot / upd:.0f} %" if upd else "-"
    ent = f"{per(entries):.2f}" if entries is not None else "not counted (WAL not readable)"
    blocks = (f"blocks dirtied {per(st['dirtied']):.2f}/{unit}, written {per(st['written']):.3f}" if st else "blocks: not measured")
    print(f"  {name:17} WAL {per(lsn_bytes):,.0f} B/{unit} (LSN distance; {stmt}) | index entries {ent}/{unit}"
          f" | updates {per(upd):.2f}/{unit}, HOT {hot_share} | {blocks}")
    # Per table: rows written, the index entries they made (WAL-counted) against the counters' derivation.
    def table_wal(t):
        return sum((wal["by_table"].get(t) or {}).values()) if wal else 0
    for t in sorted(tables, key=lambda t: (-table_wal(t), t)):
        d = tables[t]
        idx = [i for i, x in indexes.items() if x["table"] == t]
        plain = [i for i in idx if not indexes[i]["partial"]]
        derived = d["ins"] + d["upd"] - d["hot"]
        counted = sum(indexes[i]["entries"] or 0 for i in idx) if wal else None
        check = ""
        if wal and plain:
            differ = [i for i in plain if indexes[i]["entries"] != derived]
            check = f"; each of the {len(plain)} without predicate: {per(derived):.2f} (inserts + non-HOT updates)"
            if differ:
                check += ", but the WAL counted " + ", ".join(f"{i} {per(indexes[i]['entries']):.2f}" for i in differ)
        toast_entries = wal["inserts"].get(f"{t} (TOAST index)", 0) if wal else 0
        if toast_entries:
            check += f"; its TOAST index {per(toast_entries):.2f}"
        wb = (wal["by_table"].get(t) or {"heap": 0, "toast": 0, "indexes": 0}) if wal else None
        walpart = (f" | WAL {per(wb['heap']):,.0f} B heap, {per(wb['indexes']):,.0f} B indexes"
                   + (f", {per(wb['toast']):,.0f} B TOAST" if wb["toast"] else "")) if wal else ""
        print(f"    {t:24} ins {per(d['ins']):.2f} upd {per(d['upd']):.2f} (HOT {per(d['hot']):.2f}) del {per(d['del']):.2f}"
              f" | index entries {per(counted) if counted is not None else float('nan'):.2f} in {len(idx)} indexes"
              f" ({len(idx) - len(plain)} partial){check}{walpart}")
    if wal:
        rest = {k: v for k, v in wal["bytes"].items() if k not in a["tables"] and k not in a["indexes"]
                and not k.endswith("(TOAST)") and not k.endswith("(TOAST index)")}
        rest = {k: v for k, v in rest.items() if per(v) >= 0.5}
        if rest:
            print(f"    {'WAL of no table':24} " + ", ".join(f"{k} {per(v):,.0f} B" for k, v in sorted(rest.items(), key=lambda kv: -kv[1])))
    others = sorted({x["am"] for x in indexes.values()} - {"btree"})
    if others:
        print(f"    (indexes of access methods {', '.join(others)} are not counted: only btree insertions are read from the WAL)")


def listing(final_path, side_paths):
    """Every index of the tables the sides wrote: idx_scan since the cluster started (the whole run), and its entries
    per event or push in each side."""
    final = load(final_path)
    sides = [load(p) for p in side_paths]
    written = {t for s in sides for t in s["tables"]}
    head = "".join(f"{s['name']:>19}" for s in sides)
    print(f"  {'index':44}{'table':22}{'idx_scan':>10}{head}")
    for i, x in sorted(final["indexes"].items(), key=lambda kv: (kv[1]["table"], kv[0])):
        if x["table"] not in written:
            continue
        cells = "".join(f"{(s['indexes'].get(i, {}).get('entries') or 0) / s['events'] if s['events'] else 0:>19.2f}" for s in sides)
        # A unique index with no scans still does work: it enforces its constraint on every insertion.
        unused = "  no scans (enforces uniqueness)" if x.get("unique") else "  unused"
        print(f"  {i + (' (partial)' if x['partial'] else ''):44}{x['table']:22}{x['scan']:>10}{cells}"
              + (unused if x["scan"] == 0 else ""))


if __name__ == "__main__":
    if len(sys.argv) == 9 and sys.argv[1] == "side":
        side(sys.argv[2], sys.argv[3], sys.argv[4], *sys.argv[5:9])
    elif len(sys.argv) >= 4 and sys.argv[1] == "indexes":
        listing(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
