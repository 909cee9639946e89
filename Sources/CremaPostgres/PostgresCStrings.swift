import Foundation

/// C strings for libpq's arrays of them, which live for one call.
enum PostgresCStrings {
    /// Calls `body` with `strings` as C strings, followed by a NULL (libpq's keyword and value lists).
    static func withTerminated<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        withOptional(strings.map(Optional.some), { body($0 + [nil]) })
    }

    /// Calls `body` with `strings` as C strings, nil as NULL (SQL NULL among a statement's values).
    static func withOptional<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
        let owned = strings.map { $0.flatMap { strdup($0) } }
        defer { owned.forEach { free($0) } }
        return body(owned.map { $0.map { UnsafePointer($0) } })
    }
}
