#!/usr/bin/env python3
"""Where crema's instructions per event go, from a callgrind dump of `crema serve` (bench/ingest.sh -i writes one).

Usage: bench/ingest_profile.py EVENTS CALLGRIND_FILE... [--top N]
  (the files of one dump: with --separate-threads, one per thread; bench/ingest.sh -i passes them)

0. The split by thread. Then, in instructions per event and in % of all the dump counted (issue #35's parts):

1. Who runs each instruction (self cost, every instruction in exactly one row, the rows sum to 100 %): allocation and
   reference counting; the concurrency runtime and Dispatch, NIO's async bridges and the locks under them (the hops
   between event loop, task and driver); the HTTP server (Hummingbird, NIO, HTTPTypes, llhttp); the driver (libpq and
   CremaPostgres); Foundation's JSON; crema's own modules; the Swift runtime's generic metadata, casts and exclusivity
   checks; the standard library (String, Array, Dictionary, Hasher); libc. A function belongs to the module its
   mangled name starts with: a generic of the standard library specialized inside crema counts as the standard library.
2. Stages, inclusive (each with the allocation, standard library and runtime work it calls, so they overlap table 1):
   request decoding, the core (transition, projection, plan), every JSON encoding by what it encodes, the JSON
   decodings, SQL text building, UUID strings, HTTP in and out. Only synchronous calls are measured so: an async
   function's cost is spread over the executor's jobs, and callgrind's inclusive cost of it is not meaningful (the
   script does not report one).
3. How often, per event: statements sent, NOTIFYs, JSON codings, UUID strings, jobs resumed, malloc, swift_retain.
4. The functions by self cost.

Needs callgrind_annotate (valgrind) and `swift demangle` on PATH.
"""
import argparse
import re
import subprocess
import sys

LINE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(\*|<|>)?\s*(.*?)(?: \((\d[\d,]*)x\))?(?: \[(.*)\])?$")


def annotate(path, *options):
    result = subprocess.run(["callgrind_annotate", "--threshold=100", *options, path], capture_output=True, text=True,
                            check=True)
    return result.stdout


def demangle(names):
    result = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names) + "\n", capture_output=True,
                            text=True, check=True)
    return result.stdout.split("\n")[:len(names)]


def function_name(field):
    """'???:name' or 'file:name' -> name, without callgrind's cycle mark ('2)."""
    name = field.split(":", 1)[1] if ":" in field and not field.startswith("$") else field
    return re.sub(r"'\d+$", "", name)


def mangled_module(name):
    """The module a Swift symbol's first entity is in ('Swift' for the standard library), or None."""
    m = re.match(r"^\$s(.*)", name)
    if not m:
        return None
    rest = m.group(1)
    if rest.startswith("s") or re.match(r"^S[a-zA-Z]", rest) and not rest.startswith("So") and not rest.startswith("Sc"):
        return "Swift"
    if rest.startswith("Sc"):
        return "_Concurrency"
    if rest.startswith("So"):
        return "__C"
    length = re.match(r"^(\d+)", rest)
    if not length:
        return None
    n = int(length.group(1))
    return rest[len(length.group(1)):len(length.group(1)) + n]


ALLOCATION = re.compile(
    r"^(malloc|free|cfree|realloc|calloc|_int_malloc|_int_free|_int_realloc|malloc_consolidate|unlink_chunk.*|"
    r"tcache_.*|__libc_(malloc|free|calloc|realloc)|sysmalloc|alloc_perturb|__malloc_.*|_mid_memalign|"
    r"posix_memalign|aligned_alloc|swift_(retain|release|allocObject|deallocObject|deallocClassInstance|"
    r"deallocPartialClassInstance|deallocUninitializedObject|slowAlloc|slowDealloc|bridgeObjectRetain|"
    r"bridgeObjectRelease|unknownObjectRetain|unknownObjectRelease|nonatomic_\w+|allocBox|deallocBox|"
    r"initStackObject|isUniquelyReferenced\w*|arrayDestroy|weak\w+|unownedRetain\w*|unownedRelease\w*|"
    r"retain_n|release_n|bridgeObjectRetain_n|bridgeObjectRelease_n|setDeallocating)\w*|_swift_release_dealloc|"
    r".*RefCounts<.*)$")
LOCKS = re.compile(r"^(pthread_\w+|__pthread_\w+|___pthread_\w+|futex_\w+|__futex\w*|__lll_\w+|lll_\w+|sem_\w+|"
                   r"__new_sem_\w+|__GI___pthread\w*|epoll_wait|__libc_.*(read|write|recv|send)\w*|syscall|eventfd_\w+)$")
HTTP_MODULES = {"NIOCore", "NIOPosix", "NIOHTTP1", "NIOConcurrencyHelpers", "_NIODataStructures", "_NIOBase64",
                "NIOFoundationCompat", "NIOExtras", "NIOHTTPTypes", "NIOHTTPTypesHTTP1", "HTTPTypes", "Hummingbird",
                "HummingbirdCore", "HummingbirdRouter", "HummingbirdHTTP2", "NIOHTTP2", "NIOTLS", "NIOSSL",
                "ServiceLifecycle", "UnixSignals", "AsyncAlgorithms", "DequeModule", "InternalCollectionsUtilities",
                "Atomics", "NIOTransportServices", "ServiceContextModule"}
CORE_MODULES = {"CremaCore", "CremaActivityModels"}

PARTS = [  # (key, label) in the order table 1 prints them
    ("alloc", "allocation and reference counting (malloc/free, swift_retain/release, swift_allocObject, ...)"),
    ("hops", "hops: concurrency runtime (swift_task_*, jobs), Dispatch, NIO's async bridges, locks"),
    ("http", "HTTP server's own code: Hummingbird, NIO, HTTPTypes, llhttp"),
    ("driver", "driver: libpq and CremaPostgres"),
    ("json", "Foundation's JSON (JSONEncoder/JSONDecoder, JSONWriter, key sorting)"),
    ("foundation", "Foundation, other (Date, UUID; standard library generics specialized in it, mostly for JSON)"),
    ("core", "crema's pure core: CremaCore, CremaActivityModels (transition, projection, plan)"),
    ("crema", "crema's other modules (CremaStore, CremaService, CremaAPI, CremaServer, ...)"),
    ("runtime", "Swift runtime: generic metadata, dynamic casts, exclusivity checks, TLS"),
    ("stdlib", "Swift standard library (String, Array, Dictionary, Hasher, ...)"),
    ("libc", "libc, other (memcpy, printf, strlen, ...)"),
    ("logging", "logging and metrics (swift-log, swift-metrics)"),
    ("other", "other"),
]


def classify(name, obj, demangled):
    obj = obj or ""
    module = mangled_module(name)
    if ALLOCATION.match(name):
        return "alloc"
    if "libswift_Concurrency" in obj or "libdispatch" in obj or module == "_Concurrency" or LOCKS.match(name):
        return "hops"
    if module in ("NIOCore", "NIOPosix") and re.search(r"NIOAsync|AsyncChannel|AsyncSequenceProducer|AsyncWriter",
                                                        demangled):
        return "hops"
    if "libpq" in obj or module in ("CremaPostgres", "CLibPQ", "CEpoll"):
        return "driver"
    if module in HTTP_MODULES or name.startswith("c_nio_") or name.startswith("llhttp"):
        return "http"
    if module in ("Logging", "Metrics", "CoreMetrics", "Prometheus"):
        return "logging"
    if "libFoundation" in obj or module in ("FoundationEssentials", "Foundation", "FoundationInternationalization"):
        return "json" if re.search(r"JSON|_Encoder|_Decoder|Coding|lexicographicallyPrecedes", demangled) else "foundation"
    if module in CORE_MODULES:
        return "core"
    if module and (module.startswith("Crema") or module in ("crema", "CremaServer")):
        return "crema"
    if module == "Swift" or ("libswiftCore" in obj and module):
        return "stdlib"
    if "libswiftCore" in obj or "libswift" in obj:
        return "runtime"
    if "ld-linux" in obj or name.startswith("__tls_get_addr") or name.startswith("__swift_"):
        return "runtime"
    if "libc.so" in obj or "libm.so" in obj:
        return "libc"
    if module:
        return "crema" if "crema" in obj else "other"
    return "other"


def self_costs(path):
    """(total, [(self cost, mangled name, object)]) of one callgrind file."""
    rows, text_all = [], annotate(path)
    for text in text_all.splitlines():
        m = LINE.match(text)
        if not m or "PROGRAM TOTALS" in text or m.group(2):
            continue
        field, obj = m.group(3), m.group(5)
        if obj is None and field.startswith("./"):  # glibc's own source paths; callgrind_annotate left the object out
            obj = "libc.so"
        rows.append((int(m.group(1).replace(",", "")), function_name(field), obj))
    total = re.search(r"^\s*([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text_all, re.M)
    return (int(total.group(1).replace(",", "")) if total else 0), rows


def caller_tree(path, functions, calls):
    """Adds one file's {function: (inclusive, {caller: inclusive of that call})} (demangled, callgrind's cycle marks
    dropped) to functions, and how often each was called to calls. Within a file, a function split into several
    entries counts its largest; across files (threads) the costs add up."""
    text = annotate(path, "--inclusive=yes", "--tree=caller")
    local, callers, pending = {}, {}, 0
    for line in demangle(text.split("\n")):
        m = LINE.match(line)
        if not m or not m.group(2):
            if not line.strip():
                callers, pending = {}, 0
            continue
        ir, mark, name = int(m.group(1).replace(",", "")), m.group(2), function_name(m.group(3))
        if mark == "<":
            callers[name] = callers.get(name, 0) + ir
            pending += int(m.group(4).replace(",", "")) if m.group(4) else 0
        elif mark == "*":
            calls[name] = calls.get(name, 0) + pending
            pending = 0
            old = local.get(name, (0, {}))
            merged = dict(old[1])
            for caller, cost in callers.items():
                merged[caller] = max(merged.get(caller, 0), cost)
            local[name] = (max(old[0], ir), merged)
            callers = {}
    for name, (ir, calls) in local.items():
        old = functions.get(name, (0, {}))
        merged = dict(old[1])
        for caller, cost in calls.items():
            merged[caller] = merged.get(caller, 0) + cost
        functions[name] = (old[0] + ir, merged)


def thread_kind(names):
    """What a thread is, from the loop it runs (callgrind numbers threads but does not name them). Other threads
    call into NIO and the driver (to hand them work), so this looks for each loop's own run function."""
    names = set(names)
    if "PostgresEventLoop.run()" in names:
        return "driver loop (crema-pg-loop: libpq's reads and writes)"
    if "_dispatch_worker_thread" in names:
        return "task pool (Dispatch workers: the request tasks, service, store, core, JSON)"
    if "SelectableEventLoop.run()" in names:
        return "NIO event loops (sockets, HTTP parsing and writing)"
    if "PostgresListener.wait(on:)" in names:
        return "listener (crema-pg-listen: LISTEN/NOTIFY)"
    if any(name.startswith("_dispatch_event_loop") or name.startswith("_dispatch_mgr") for name in names):
        return "Dispatch's manager thread (timers)"
    return "other threads"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("events", type=int, help="the events the counted window added (order_events rows)")
    parser.add_argument("callgrind_files", nargs="+", help="one dump: one file, or one per thread (--separate-threads)")
    parser.add_argument("--top", type=int, default=15, help="how many functions of the self-cost list to print")
    args = parser.parse_args()
    events = args.events

    total, merged, threads = 0, {}, {}
    for path in args.callgrind_files:
        file_total, file_rows = self_costs(path)
        if not file_rows:
            continue
        total += file_total
        pretty = demangle([name for _, name, _ in file_rows])
        kind = thread_kind(pretty)
        threads[kind] = (threads.get(kind, (0, 0))[0] + file_total, threads.get(kind, (0, 0))[1] + 1)
        for (ir, name, obj), nice in zip(file_rows, pretty):
            key = (name, obj)
            merged[key] = (merged.get(key, (0, nice))[0] + ir, nice)
    rows = [(ir, name, obj) for (name, obj), (ir, _) in merged.items()]
    names = [merged[(name, obj)][1] for _, name, obj in rows]
    parts, by_part = {key: 0 for key, _ in PARTS}, {key: {} for key, _ in PARTS}
    for (ir, name, obj), pretty in zip(rows, names):
        key = classify(name, obj, pretty)
        parts[key] += ir
        short = re.sub(r"\(.*", "", pretty)[:40]
        by_part[key][short] = by_part[key].get(short, 0) + ir
    per = lambda ir: f"{ir / events:>11,.0f}"
    share = lambda ir: f"{100 * ir / total:5.1f} %"
    print(f"instructions per event: {total / events:,.0f} ({total:,} over {events} events)")
    print("0. by thread (callgrind --separate-threads):" if len(args.callgrind_files) > 1 else
          "0. by thread: not separated (one file; bench/ingest.sh runs callgrind with --separate-threads=yes)")
    for kind, (ir, count) in sorted(threads.items(), key=lambda kv: -kv[1][0]) if len(args.callgrind_files) > 1 else []:
        print(f"   {per(ir)}  {share(ir)}  {kind}, {count} thread{'s' if count > 1 else ''}")
    print("1. who runs them (self cost; the rows sum to 100 %):")
    for key, label in PARTS:
        if parts[key]:
            top = ", ".join(n for n, _ in sorted(by_part[key].items(), key=lambda kv: -kv[1])[:3])
            print(f"   {per(parts[key])}  {share(parts[key])}  {label}")
            print(f"   {'':11}  {'':7}  largest: {top}")

    tree, calls = {}, {}
    for path in args.callgrind_files:
        caller_tree(path, tree, calls)

    def inclusive(pattern, caller=None):
        """The largest inclusive cost of a function matching pattern (callgrind splits some into several entries),
        or with caller, the sum over that function's calls from callers matching it."""
        best = 0
        for name, (ir, callers) in tree.items():
            if re.search(pattern, name):
                if caller is None:
                    best = max(best, ir)
                else:
                    best = max(best, sum(c for who, c in callers.items() if re.search(caller, who)))
        return best

    encode, decode = r"^JSONEncoder\.encode<A>\(_:\)$", r"^JSONDecoder\.decode<A>\(_:from:\)$"
    stages = [
        ("request decoding: JSONDecoder.decode from WireCoding.decode", inclusive(decode, r"WireCoding\.decode")),
        ("the core: OrderStateMachine.place/apply", inclusive(r"OrderStateMachine\.(place|apply)\(")),
        ("the core: OrderProjector.contentState (the projection)", inclusive(r"OrderProjector\.contentState\(")),
        ("the core: DeliveryPlanner.plan (with its projection)", inclusive(r"DeliveryPlanner\.plan\(")),
        ("every JSONEncoder.encode", inclusive(encode)),
        ("  the answer: OrderService.answer", inclusive(encode, r"OrderService\.answer\(")),
        ("  the stored projection: StoredProjection.json", inclusive(encode, r"StoredProjection\.json\(")),
        ("  SQL parameters: PostgresJSON.init(encoding:)", inclusive(encode, r"PostgresJSON\.init")),
        ("  change feed payloads: ChangeFeed.payload", inclusive(encode, r"ChangeFeed\.payload")),
        ("  idempotency's canonical request: WireCoding.canonical", inclusive(encode, r"WireCoding\.canonical")),
        ("  the placed event's draft: OrderService.draft", inclusive(encode, r"OrderService\.draft")),
        ("every JSONDecoder.decode", inclusive(decode)),
        ("  rows' JSON columns: PostgresJSON.decode", inclusive(decode, r"PostgresJSON\.decode")),
        ("  change feed notifications: ChangeFeed.change", inclusive(decode, r"ChangeFeed\.change")),
        ("SQL text built per statement: PostgresQuery.StringInterpolation.appendInterpolation",
         sum(inclusive(r"^PostgresQuery\.StringInterpolation\.appendInterpolation" + p + r"\(_:\)$")
             for p in ("", "<A>"))),
        ("  of it, values as text: appendInterpolation<A>",
         inclusive(r"^PostgresQuery\.StringInterpolation\.appendInterpolation<A>\(_:\)$")),
        ("  then the statement's NUL scan: PostgresConnection.containsNUL",
         inclusive(r"PostgresConnection\.containsNUL\(")),
        ("  then its prepared name, looked up by its text: Dictionary.find in PostgresConnection.send",
         inclusive(r"__RawDictionaryStorage\.find<A>\(_:\)$", r"^PostgresConnection\.send\(")),
        ("UUID.uuidString (Foundation formats each UUID with snprintf)", inclusive(r"^UUID\.uuidString\.getter$")),
        ("HTTP in: BaseStreamSocketChannel.readFromSocket (read, parse, hand to the task)",
         inclusive(r"^BaseStreamSocketChannel\.readFromSocket\(\)$")),
        ("HTTP out: HTTP1ToHTTPServerCodec.write (the answer's head and body)",
         inclusive(r"HTTP1ToHTTPServerCodec\.write\(context:data:promise:\)$")),
        ("HTTP out: BaseSocketChannel.flushNow (the socket write)", inclusive(r"^BaseSocketChannel\.flushNow\(\)$")),
    ]
    print("2. stages, inclusive (synchronous calls; they overlap table 1):")
    for label, ir in stages:
        print(f"   {per(ir)}  {share(ir)}  {label}")
    # Calls into async functions are left out: callgrind sees their pieces as cycles and counts some calls twice.
    print("3. how often, per event (calls; what a change removes shows here first):")
    counted = [
        ("statements sent (PostgresConnection.send)", r"^PostgresConnection\.send\(_:answer:on:into:\)$"),
        ("change feed announcements (ChangeFeed.payload: one NOTIFY each, at most one per 5 ms)",
         r"ChangeFeed\.payload\(announcing:queued:from:\)$"),
        ("JSONEncoder.encode", r"^JSONEncoder\.encode<A>\(_:\)$"),
        ("JSONDecoder.decode", r"^JSONDecoder\.decode<A>\(_:from:\)$"),
        ("UUID.uuidString", r"^UUID\.uuidString\.getter$"),
        ("jobs run (swift_job_run: a task resumed, each one a hop)", r"^swift_job_run$"),
        ("Optional's metadata looked up at run time (unspecialized generics)", r"^type metadata accessor for Optional$"),
        ("malloc", r"^malloc$"),
        ("swift_retain", r"^swift_retain$"),
    ]
    for label, pattern in counted:
        n = sum(c for name, c in calls.items() if re.search(pattern, name))
        print(f"   {n / events:>11,.1f}  {'':7}  {label}")
    print(f"4. functions by self cost (top {args.top}):")
    by_name = {}
    for (ir, _, _), pretty in zip(rows, names):
        by_name[pretty] = by_name.get(pretty, 0) + ir
    for pretty, ir in sorted(by_name.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"   {per(ir)}  {share(ir)}  {pretty[:110]}")


if __name__ == "__main__":
    sys.exit(main())
