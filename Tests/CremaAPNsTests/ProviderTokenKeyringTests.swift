import CremaAPNsKey
import Foundation
import Synchronization
import Testing

@testable import CremaAPNs

@Suite("Provider tokens per signing key")
struct ProviderTokenKeyringTests {
    /// Connections are numbers here; released ones are written down.
    final class Connections: Sendable {
        private let state = Mutex((opened: 0, released: [Int]()))

        func open() -> Int {
            state.withLock {
                $0.opened += 1; return $0.opened
            }
        }
        func release(_ connection: Int) { state.withLock { $0.released.append(connection) } }
        var released: [Int] { state.withLock { $0.released } }
    }

    static let teamA = APNsSigningKey.generate(keyID: "KEYA000001", teamID: "TEAMA00001")
    static let teamB = APNsSigningKey.generate(keyID: "KEYB000001", teamID: "TEAMB00001")

    static func keyring(_ clock: ManualClock, _ connections: Connections) -> ProviderTokenKeyring<Int> {
        ProviderTokenKeyring(
            lifetime: .seconds(50 * 60), now: { clock.now() }, connect: { _ in connections.open() },
            release: { connections.release($0) })
    }

    @Test("Each key keeps one token for its lifetime, and two keys never share a token or a connection")
    func oneTokenPerKey() throws {
        let clock = ManualClock()
        let keyring = Self.keyring(clock, Connections())
        let a = try #require(keyring.lane(for: Self.teamA))
        let b = try #require(keyring.lane(for: Self.teamB))
        let firstA = a.tokens.token()
        let firstB = b.tokens.token()
        #expect(firstA != firstB)
        #expect(a.connection != b.connection)

        clock.advance(by: 49 * 60)
        #expect(try #require(keyring.lane(for: Self.teamA)).tokens.token() == firstA)
        #expect(try #require(keyring.lane(for: Self.teamB)).tokens.token() == firstB)
        #expect(try #require(keyring.lane(for: Self.teamA)).connection == a.connection)

        clock.advance(by: 2 * 60)
        let renewedA = try #require(keyring.lane(for: Self.teamA)).tokens.token()
        #expect(renewedA != firstA)
        #expect(renewedA.jwt.split(separator: ".").count == 3)
        #expect(keyring.identities.count == 2)
    }

    @Test("A key uploaded again under the same Key ID and team gets its own token")
    func reuploadedKeyIsAnotherKey() throws {
        let keyring = Self.keyring(ManualClock(), Connections())
        let again = APNsSigningKey.generate(keyID: Self.teamA.keyID, teamID: Self.teamA.teamID)
        #expect(again.fingerprint != Self.teamA.fingerprint)
        let old = try #require(keyring.lane(for: Self.teamA)).tokens.token()
        let new = try #require(keyring.lane(for: again)).tokens.token()
        #expect(old != new)
        #expect(keyring.identities.count == 2)
    }

    @Test("A key unused for longer than the token lifetime is dropped and its connection released")
    func idleKeyIsEvicted() throws {
        let clock = ManualClock()
        let connections = Connections()
        let keyring = Self.keyring(clock, connections)
        let a = try #require(keyring.lane(for: Self.teamA))
        _ = keyring.lane(for: Self.teamB)

        clock.advance(by: 30 * 60)
        _ = keyring.lane(for: Self.teamB)
        #expect(keyring.identities.count == 2)
        #expect(connections.released.isEmpty)

        clock.advance(by: 21 * 60)  // A idle 51 minutes, B 21
        _ = keyring.lane(for: Self.teamB)
        #expect(keyring.identities == [.init(Self.teamB)])
        #expect(connections.released == [a.connection])

        let back = try #require(keyring.lane(for: Self.teamA))
        #expect(back.connection != a.connection)
    }

    @Test("A closed keyring hands out no lane and returns every connection to close")
    func closeReturnsConnections() throws {
        let keyring = Self.keyring(ManualClock(), Connections())
        let a = try #require(keyring.lane(for: Self.teamA))
        let b = try #require(keyring.lane(for: Self.teamB))
        #expect(Set(keyring.close()) == [a.connection, b.connection])
        #expect(keyring.lane(for: Self.teamA) == nil)
        #expect(keyring.identities.isEmpty)
    }
}
