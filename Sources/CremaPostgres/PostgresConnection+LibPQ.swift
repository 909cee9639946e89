import CLibPQ
import Foundation

// What libpq asks of the text it is given, and reading the socket: the connection's helpers that hold no state.
extension PostgresConnection {
    /// Refuses a statement libpq would cut short or refuse halfway through a flight, before anything is sent.
    static func check(_ query: PostgresQuery) throws(PostgresError) {
        // A kept statement's text was checked once, when it was made; a text built per call is checked at each.
        let textHasNUL = query.statement.map(\.containsNUL) ?? containsNUL(query.sql)
        if textHasNUL || query.binds.contains(where: { $0.map(containsNUL) == true }) {
            throw PostgresError(.invalidParameter, detail: "a statement or value contains a NUL character")
        }
        // The protocol counts parameters in 16 bits; libpq would refuse the statement halfway through a flight.
        if query.binds.count > Int(UInt16.max) {
            throw PostgresError(.invalidParameter, detail: "a statement has more than 65535 parameters")
        }
    }

    /// libpq takes C strings, so a NUL would cut a statement or value short; checked over the contiguous bytes with
    /// libc's `memchr`, which reads them a vector at a time (a byte loop was most of `pipeline`'s own cost: every
    /// event binds a few kilobytes of JSON).
    static func containsNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, 0, bytes.count) != nil
        }
    }

    static func sendFailure(_ handle: OpaquePointer) -> PostgresError {
        PostgresError(.connectionFailed, detail: message(handle))
    }

    /// Reads whatever the server sent to an idle connection, without blocking. A terminated backend sends a FATAL
    /// message and then closes: reading goes on while the socket is readable, so the end-of-file behind the message is
    /// seen too (it marks the connection bad).
    func readWaiting(_ handle: OpaquePointer) {
        var reads = 0
        while reads < 4, PQstatus(handle) == CONNECTION_OK, Self.isReadable(PQsocket(handle)) {
            if PQconsumeInput(handle) == 0 { break }
            reads += 1
        }
    }

    /// Whether the socket has data (or end-of-file) waiting, without blocking.
    private static func isReadable(_ socket: Int32) -> Bool {
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }
}
