import Foundation
import Synchronization

/// Per-TLS-connection state: which provider token the connection uses, to answer 429
/// `TooManyProviderTokenUpdates` when it changes tokens more than once in 20 minutes (docs/apns.md §2).
final class SimulatorConnection: Sendable {
    let id: Int
    let httpVersion: String
    private let token = Mutex<(current: String?, lastChange: Date?)>((nil, nil))
    /// HTTP/2 streams: the highest whose request was processed, how many processed ones are still unanswered, and
    /// the last stream a GOAWAY named once one was decided.
    private let streams = Mutex<(highest: Int, unanswered: Int, goAwayAfter: Int?)>((0, 0, nil))

    /// Notes that the request of `stream` is about to be processed; false when a GOAWAY already named an earlier
    /// stream as the last processed, so this one must not be.
    func processes(stream: Int) -> Bool {
        streams.withLock { streams in
            if let last = streams.goAwayAfter, stream > last { return false }
            streams.highest = max(streams.highest, stream)
            streams.unanswered += 1
            return true
        }
    }

    /// Notes that a processed stream got its answer; true when that was the last one owed after a GOAWAY, so the
    /// connection can close.
    func answered() -> Bool {
        streams.withLock { streams in
            streams.unanswered = max(0, streams.unanswered - 1)
            return streams.goAwayAfter != nil && streams.unanswered == 0
        }
    }

    /// Decides the GOAWAY: every stream processed so far is answered, none after it is processed. Returns that
    /// stream.
    func goAway() -> Int {
        streams.withLock { streams in
            let last = streams.goAwayAfter ?? streams.highest
            streams.goAwayAfter = last
            return last
        }
    }

    init(id: Int, httpVersion: String) {
        self.id = id
        self.httpVersion = httpVersion
    }

    /// Records `fingerprint` as the connection's token; false when that would be a second change within 20 minutes.
    func adopt(_ fingerprint: String, now: Date) -> Bool {
        token.withLock { state in
            guard let current = state.current else {
                state.current = fingerprint
                return true
            }
            if current == fingerprint { return true }
            if let last = state.lastChange, now.timeIntervalSince(last) < 20 * 60 { return false }
            state = (fingerprint, now)
            return true
        }
    }
}
