import CremaAPNsKey
import CremaClock
import Foundation
import Synchronization

/// One provider token cache and one set of connections (one per APNs host) per signing key: APNs counts a
/// connection that switches tokens as refreshing too often (429), so keys never share a connection. Keys unused for
/// a whole token lifetime are dropped and their connections released, so keys retired at run time do not
/// accumulate.
final class ProviderTokenKeyring<Connection: Sendable>: Sendable {
    /// What makes two keys the same for APNs: the team and Key ID it signs as, and the key's own bytes (a key
    /// uploaded again under the same Key ID must not reuse the old key's token).
    struct KeyIdentity: Sendable, Hashable {
        var teamID: String
        var keyID: String
        var fingerprint: String

        init(_ key: APNsSigningKey) {
            teamID = key.teamID
            keyID = key.keyID
            fingerprint = key.fingerprint
        }
    }

    /// What one key sends with.
    struct Lane: Sendable {
        let tokens: ProviderTokenCache
        let connection: Connection
    }

    private struct Entry {
        var lane: Lane
        var lastUsed: Date
    }

    private struct State {
        var entries: [KeyIdentity: Entry] = [:]
        var nextSweep: Date = .distantPast
        var closed = false
    }

    private let lifetime: Duration
    private let idleLimit: TimeInterval
    private let now: @Sendable () -> Date
    private let connect: @Sendable (APNsSigningKey) -> Connection
    private let release: @Sendable (Connection) -> Void
    private let state = Mutex(State())

    /// `connect` opens a key's connection on its first use; `release` closes one whose key went idle.
    init(
        lifetime: Duration,
        now: @escaping @Sendable () -> Date,
        connect: @escaping @Sendable (APNsSigningKey) -> Connection,
        release: @escaping @Sendable (Connection) -> Void
    ) {
        self.lifetime = lifetime
        self.idleLimit = lifetime.timeInterval
        self.now = now
        self.connect = connect
        self.release = release
    }

    /// The lane for `key`, created on first use; every call counts as a use. Nil once ``close()`` was called.
    func lane(for key: APNsSigningKey) -> Lane? {
        let identity = KeyIdentity(key)
        let now = now()
        let (lane, evicted) = state.withLock { state -> (Lane?, [Lane]) in
            guard !state.closed else { return (nil, []) }
            var evicted: [Lane] = []
            // Sweeping at most ten times per lifetime keeps a send O(1) however many keys there are.
            if now >= state.nextSweep {
                for (id, entry) in state.entries where now.timeIntervalSince(entry.lastUsed) > idleLimit {
                    evicted.append(entry.lane)
                    state.entries[id] = nil
                }
                state.nextSweep = now.addingTimeInterval(idleLimit / 10)
            }
            if var entry = state.entries[identity] {
                entry.lastUsed = now
                state.entries[identity] = entry
                return (entry.lane, evicted)
            }
            let lane = Lane(
                tokens: ProviderTokenCache(key: key, lifetime: lifetime, now: self.now), connection: connect(key))
            state.entries[identity] = Entry(lane: lane, lastUsed: now)
            return (lane, evicted)
        }
        for old in evicted { release(old.connection) }
        return lane
    }

    /// Refuses new lanes and hands back every open connection for the caller to close.
    func close() -> [Connection] {
        state.withLock { state in
            state.closed = true
            defer { state.entries.removeAll() }
            return state.entries.values.map(\.lane.connection)
        }
    }

    /// The keys with a lane (tests and diagnostics).
    var identities: Set<KeyIdentity> {
        state.withLock { Set($0.entries.keys) }
    }
}
