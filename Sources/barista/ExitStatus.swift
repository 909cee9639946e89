import Foundation

/// How `barista` ends, for scripts: loosely after BSD `sysexits.h`, so the numbers mean what shell users expect.
/// `barista --help` prints this table (a test checks every code is there); the README repeats it.
enum ExitStatus: Int32, CaseIterable, Sendable {
    case ok = 0
    /// Anything unexpected: the server failed inside (500) or answered something `barista` cannot read.
    case failure = 1
    /// Bad arguments or options (ArgumentParser's own validation failures exit 64 too).
    case usage = 64
    /// The server refused a value (400/422): a blank reason, a delay that ends too far away.
    case refused = 65
    /// No such order (by number in the store, or by id) or no such store.
    case notFound = 66
    /// The server cannot be reached, or answers 503 (its database is down).
    case unavailable = 69
    /// Someone changed the order since you looked (`version_conflict`): nothing was applied; look again.
    case conflict = 75
    /// The order's state does not allow this now (`invalid_transition`): nothing was applied.
    case notAllowed = 76
    /// The key was refused (401) or is not a barista key (403).
    case forbidden = 77
    /// Configuration is missing or unreadable: no key, a bad config file.
    case configuration = 78

    var meaning: String {
        switch self {
        case .ok: "done"
        case .failure: "unexpected error (server error or unreadable answer)"
        case .usage: "usage error (bad arguments or options)"
        case .refused: "the server refused a value (e.g. a blank reason)"
        case .notFound: "unknown order or store"
        case .unavailable: "server unreachable or unavailable"
        case .conflict: "the order changed since you looked: nothing applied"
        case .notAllowed: "not allowed in the order's current state: nothing applied"
        case .forbidden: "key refused or not a barista key"
        case .configuration: "configuration missing or unreadable (no key, bad config file)"
        }
    }

    /// The "EXIT CODES" block of `--help`.
    static var helpTable: String {
        allCases.map { "  \(String($0.rawValue).padding(toLength: 4, withPad: " ", startingAt: 0))\($0.meaning)" }
            .joined(separator: "\n")
    }
}
