@testable import CremaPostgres
import Testing

/// The pool's rules, with strings in place of connections: no database, no clock.
@Suite struct PostgresPoolStateMachineTests {
    typealias Machine = PostgresPoolStateMachine<String>

    @Test("a lease connects an empty slot and later leases reuse the returned connection") func aLeaseConnectsAnEmptySlotAndLaterLeasesReuseTheReturnedConnection() {
        var pool = Machine(maxConnections: 3)
        #expect(pool.lease(waiterID: 1) == .use(.empty))
        #expect(pool.released("a") == .park)
        #expect(pool.lease(waiterID: 2) == .use(.connection("a")))
        #expect(pool.slotsCreated == 1)
    }

    @Test("the most recently returned connection is leased first") func theMostRecentlyReturnedConnectionIsLeasedFirst() {
        var pool = Machine(maxConnections: 2)
        _ = pool.lease(waiterID: 1)
        _ = pool.lease(waiterID: 2)
        _ = pool.released("a")
        _ = pool.released("b")
        #expect(pool.lease(waiterID: 3) == .use(.connection("b")))
        #expect(pool.lease(waiterID: 4) == .use(.connection("a")))
    }

    @Test("slots are created lazily up to the maximum and then callers wait") func slotsAreCreatedLazilyUpToTheMaximumAndThenCallersWait() {
        var pool = Machine(maxConnections: 2)
        #expect(pool.slotsCreated == 0)
        #expect(pool.lease(waiterID: 1) == .use(.empty))
        #expect(pool.lease(waiterID: 2) == .use(.empty))
        #expect(pool.lease(waiterID: 3) == .wait)
        #expect(pool.slotsCreated == 2)
        #expect(pool.waiters == [3])
    }

    @Test("a maximum below one means one") func aMaximumBelowOneMeansOne() {
        var pool = Machine(maxConnections: 0)
        #expect(pool.lease(waiterID: 1) == .use(.empty))
        #expect(pool.lease(waiterID: 2) == .wait)
    }

    @Test("waiters are served first come first served as connections come back") func waitersAreServedFirstComeFirstServedAsConnectionsComeBack() {
        var pool = Machine(maxConnections: 1)
        _ = pool.lease(waiterID: 1)
        for id in 2...4 { #expect(pool.lease(waiterID: id) == .wait) }
        #expect(pool.released("a") == .resume(2, .connection("a")))
        #expect(pool.released("a") == .resume(3, .connection("a")))
        #expect(pool.released("a") == .resume(4, .connection("a")))
        #expect(pool.released("a") == .park)
        #expect(pool.waiters.isEmpty)
    }

    @Test("a handed over connection stays leased") func aHandedOverConnectionStaysLeased() {
        var pool = Machine(maxConnections: 1)
        _ = pool.lease(waiterID: 1)
        _ = pool.lease(waiterID: 2)
        #expect(pool.released("a") == .resume(2, .connection("a")))
        #expect(pool.leased == 1)
        #expect(pool.openConnections == 1)
        #expect(pool.idle.isEmpty)
    }

    @Test("a timeout fails only that waiter") func aTimeoutFailsOnlyThatWaiter() {
        var pool = Machine(maxConnections: 1)
        _ = pool.lease(waiterID: 1)
        for id in 2...4 { _ = pool.lease(waiterID: id) }
        #expect(pool.timedOut(waiterID: 3) == .fail(3, .timedOut))
        #expect(pool.waiters == [2, 4])
        #expect(pool.released("a") == .resume(2, .connection("a")))
        #expect(pool.released("a") == .resume(4, .connection("a")))
    }

    @Test("a cancellation fails only that waiter") func aCancellationFailsOnlyThatWaiter() {
        var pool = Machine(maxConnections: 1)
        _ = pool.lease(waiterID: 1)
        for id in 2...4 { _ = pool.lease(waiterID: id) }
        #expect(pool.cancelled(waiterID: 2) == .fail(2, .cancelled))
        #expect(pool.waiters == [3, 4])
        #expect(pool.released("a") == .resume(3, .connection("a")))
    }

    @Test("a timeout or cancellation after the waiter was served does nothing") func aTimeoutOrCancellationAfterTheWaiterWasServedDoesNothing() {
        var pool = Machine(maxConnections: 1)
        _ = pool.lease(waiterID: 1)
        _ = pool.lease(waiterID: 2)
        _ = pool.released("a")
        #expect(pool.timedOut(waiterID: 2) == .none)
        #expect(pool.cancelled(waiterID: 2) == .none)
        #expect(pool.cancelled(waiterID: 99) == .none)
        #expect(pool.leased == 1)
    }

    @Test("a failed connect gives its empty slot to the next waiter") func aFailedConnectGivesItsEmptySlotToTheNextWaiter() {
        var pool = Machine(maxConnections: 1)
        #expect(pool.lease(waiterID: 1) == .use(.empty))
        #expect(pool.lease(waiterID: 2) == .wait)
        #expect(pool.leaseFailed(.empty) == .resume(2, .empty))
        #expect(pool.leased == 1)
        #expect(pool.openConnections == 1)
    }

    @Test("a failed connect with nobody waiting frees the slot for the next lease") func aFailedConnectWithNobodyWaitingFreesTheSlotForTheNextLease() {
        var pool = Machine(maxConnections: 1)
        _ = pool.lease(waiterID: 1)
        #expect(pool.leaseFailed(.empty) == .park)
        #expect(pool.openConnections == 0)
        #expect(pool.lease(waiterID: 2) == .use(.empty))
        #expect(pool.slotsCreated == 1)
    }

    @Test("a connection that could not be repaired is kept for the next lease to repair") func aConnectionThatCouldNotBeRepairedIsKeptForTheNextLeaseToRepair() {
        var pool = Machine(maxConnections: 1)
        _ = pool.lease(waiterID: 1)
        _ = pool.released("a")
        #expect(pool.lease(waiterID: 2) == .use(.connection("a")))
        #expect(pool.leaseFailed(.connection("a")) == .park)
        #expect(pool.lease(waiterID: 3) == .use(.connection("a")))
    }

    @Test("closing fails every waiter and later leases") func closingFailsEveryWaiterAndLaterLeases() {
        var pool = Machine(maxConnections: 1)
        _ = pool.lease(waiterID: 1)
        _ = pool.lease(waiterID: 2)
        _ = pool.lease(waiterID: 3)
        #expect(pool.close() == .init(failWaiters: [2, 3], closeConnections: []))
        #expect(pool.waiters.isEmpty)
        #expect(pool.lease(waiterID: 4) == .fail(.closed))
        #expect(pool.timedOut(waiterID: 2) == .none)
    }

    @Test("closing closes idle connections only once") func closingClosesIdleConnectionsOnlyOnce() {
        var pool = Machine(maxConnections: 3)
        for id in 1...3 { _ = pool.lease(waiterID: id) }
        _ = pool.released("a")
        _ = pool.leaseFailed(.empty)
        _ = pool.released("c")
        #expect(pool.close() == .init(failWaiters: [], closeConnections: ["a", "c"]))
        #expect(pool.close() == .init(failWaiters: [], closeConnections: []))
        #expect(pool.openConnections == 0)
    }

    @Test("a connection returned after close is closed") func aConnectionReturnedAfterCloseIsClosed() {
        var pool = Machine(maxConnections: 3)
        for id in 1...3 { _ = pool.lease(waiterID: id) }
        _ = pool.close()
        #expect(pool.released("a") == .closeConnection("a"))
        #expect(pool.leaseFailed(.connection("b")) == .closeConnection("b"))
        #expect(pool.leaseFailed(.empty) == .none)
        #expect(pool.leased == 0)
        #expect(pool.idle.isEmpty)
    }

    @Test("usage counts open leased and waiting") func usageCountsOpenLeasedAndWaiting() {
        var pool = Machine(maxConnections: 2)
        func usage() -> [Int] { [pool.openConnections, pool.leased, pool.waiters.count] }
        #expect(usage() == [0, 0, 0])
        _ = pool.lease(waiterID: 1)  // connecting counts as open and leased
        #expect(usage() == [1, 1, 0])
        _ = pool.lease(waiterID: 2)
        _ = pool.lease(waiterID: 3)
        #expect(usage() == [2, 2, 1])
        _ = pool.released("a")  // handed to waiter 3
        #expect(usage() == [2, 2, 0])
        _ = pool.released("a")
        #expect(usage() == [2, 1, 0])
        _ = pool.leaseFailed(.empty)  // an empty idle slot is not an open connection
        #expect(usage() == [1, 0, 0])
    }

    // MARK: - Fair shares

    /// A pool of `size` whose every slot `holder` leased, as ids 1 through `size`.
    static func full(_ size: Int, by holder: String?) -> Machine {
        var pool = Machine(maxConnections: size)
        for id in 1...size { _ = pool.lease(waiterID: id, for: holder) }
        return pool
    }

    @Test("waiters are served round-robin by tenant, not first come first served")
    func waitersAreServedRoundRobinByTenant() {
        var pool = Self.full(1, by: "a")
        for (id, tenant) in [(11, "a"), (12, "a"), (13, "a"), (21, "b"), (31, "c")] {
            #expect(pool.lease(waiterID: id, for: tenant) == .wait)
        }
        #expect(pool.turns == ["a", "b", "c"])
        #expect(pool.released("x", by: "a") == .resume(11, .connection("x")))
        #expect(pool.released("x", by: "a") == .resume(21, .connection("x")))
        #expect(pool.released("x", by: "b") == .resume(31, .connection("x")))
        #expect(pool.released("x", by: "c") == .resume(12, .connection("x")))
        #expect(pool.released("x", by: "a") == .resume(13, .connection("x")))
        #expect(pool.released("x", by: "a") == .park)
        #expect(pool.held.isEmpty && pool.weights.isEmpty && pool.turns.isEmpty)
    }

    @Test("a tenant alone uses every connection, and its waiters are served when nobody else waits")
    func aTenantAloneUsesEveryConnection() {
        var pool = Machine(maxConnections: 4)
        for id in 1...4 { #expect(pool.lease(waiterID: id, for: "a") == .use(.empty)) }
        #expect(pool.held == ["a": 4])
        #expect(pool.lease(waiterID: 5, for: "a") == .wait)
        // Over any share, but nobody else waits: the slot is not kept free.
        #expect(pool.released("x", by: "a") == .resume(5, .connection("x")))
        #expect(pool.held == ["a": 4])
    }

    @Test("a tenant holding its share is served after another tenant that waits, and only while one waits")
    func aTenantAtItsShareIsServedAfterAnotherThatWaits() {
        var pool = Self.full(4, by: "a")
        for id in 11...13 { _ = pool.lease(waiterID: id, for: "a") }
        _ = pool.lease(waiterID: 21, for: "b")
        _ = pool.lease(waiterID: 22, for: "b")
        // "a" is first in turn but holds 3 of 4, over its half: "b" gets the slot, then the next one too.
        #expect(pool.released("x", by: "a") == .resume(21, .connection("x")))
        #expect(pool.released("x", by: "a") == .resume(22, .connection("x")))
        #expect(pool.held == ["a": 2, "b": 2])
        // "b" no longer waits: "a" gets every slot back, past its half.
        #expect(pool.released("y", by: "b") == .resume(11, .connection("y")))
        #expect(pool.released("y", by: "b") == .resume(12, .connection("y")))
        #expect(pool.held == ["a": 4])
    }

    @Test("a tenant of a larger weight holds more of the pool while tenants compete")
    func aLargerWeightHoldsMore() {
        var pool = Self.full(4, by: "a")
        for id in 11...19 { _ = pool.lease(waiterID: id, for: "a", weight: 3) }
        for id in 21...29 { _ = pool.lease(waiterID: id, for: "b", weight: 1) }
        // Every slot that comes back goes to whichever of the two is under its share (3 and 1 of 4).
        var served: [Int] = []
        for round in 0..<8 {
            let releasing = round.isMultiple(of: 4) ? "b" : "a"
            guard pool.held[releasing] != nil else { continue }
            if case .resume(let id, _) = pool.released("x", by: releasing) { served.append(id) }
            #expect((pool.held["a"] ?? 0) + (pool.held["b"] ?? 0) == 4)
        }
        #expect(pool.held == ["a": 3, "b": 1])
        // "b" is served only when it holds nothing; first come, first served would have been 11 through 17.
        #expect(served == [21, 11, 12, 22, 13, 14, 15])
    }

    @Test("work that names no tenant is one more party in the turn")
    func unattributedWorkIsOneMoreParty() {
        var pool = Self.full(1, by: nil)
        _ = pool.lease(waiterID: 11, for: nil)
        _ = pool.lease(waiterID: 12, for: nil)
        _ = pool.lease(waiterID: 21, for: "a")
        #expect(pool.released("x", by: nil) == .resume(11, .connection("x")))
        #expect(pool.released("x", by: nil) == .resume(21, .connection("x")))
        #expect(pool.released("x", by: "a") == .resume(12, .connection("x")))
    }

    @Test("a waiter that times out or is cancelled leaves its tenant's queue, and the tenant its turn once none of it waits")
    func aWaiterLeavesItsTenantsQueue() {
        var pool = Self.full(1, by: "a")
        _ = pool.lease(waiterID: 11, for: "a")
        _ = pool.lease(waiterID: 21, for: "b")
        _ = pool.lease(waiterID: 22, for: "b")
        _ = pool.lease(waiterID: 31, for: "c", weight: 5)
        #expect(pool.timedOut(waiterID: 21) == .fail(21, .timedOut))
        #expect(pool.turns == ["a", "b", "c"])
        #expect(pool.cancelled(waiterID: 31) == .fail(31, .cancelled))
        // "c" holds nothing and waits no more: it leaves the turn and its weight no longer counts.
        #expect(pool.turns == ["a", "b"])
        #expect(pool.weights["c"] == nil)
        #expect(pool.waiters == [11, 22])
        #expect(pool.released("x", by: "a") == .resume(11, .connection("x")))
        #expect(pool.released("x", by: "a") == .resume(22, .connection("x")))
        #expect(pool.timedOut(waiterID: 22) == .none)
        #expect(pool.waiting == 0)
    }

    @Test("a lost connection's slot goes to the tenant whose turn it is, and counts against it from then on")
    func aLostConnectionsSlotGoesToTheTenantInTurn() {
        var pool = Machine(maxConnections: 2)
        #expect(pool.lease(waiterID: 1, for: "a") == .use(.empty))
        #expect(pool.lease(waiterID: 2, for: "a") == .use(.empty))
        _ = pool.lease(waiterID: 11, for: "a")
        _ = pool.lease(waiterID: 21, for: "b")
        // The server is lost: the repair of "a"'s connection fails, and the slot goes on to "b", under its share.
        #expect(pool.leaseFailed(.connection("x"), by: "a") == .resume(21, .connection("x")))
        #expect(pool.held == ["a": 1, "b": 1])
        // "b"'s repair fails too: the slot goes back to "a", and every slot is free once "a" gives up both.
        #expect(pool.leaseFailed(.connection("x"), by: "b") == .resume(11, .connection("x")))
        #expect(pool.leaseFailed(.empty, by: "a") == .park)
        #expect(pool.leaseFailed(.connection("x"), by: "a") == .park)
        #expect(pool.leased == 0 && pool.held.isEmpty && pool.weights.isEmpty)
        #expect(pool.lease(waiterID: 3, for: "b") == .use(.connection("x")))
    }

    @Test("closing fails the waiters of every tenant")
    func closingFailsTheWaitersOfEveryTenant() {
        var pool = Self.full(1, by: "a")
        _ = pool.lease(waiterID: 11, for: "a")
        _ = pool.lease(waiterID: 21, for: "b")
        #expect(pool.close() == .init(failWaiters: [11, 21], closeConnections: []))
        #expect(pool.turns.isEmpty && pool.waiting == 0)
        #expect(pool.released("x", by: "a") == .closeConnection("x"))
        #expect(pool.held.isEmpty && pool.weights.isEmpty)
    }

    @Test("the pool reports its usage before any connection") func thePoolReportsItsUsageBeforeAnyConnection() async {
        let pool = PostgresPool(.init(conninfo: "host=127.0.0.1 port=1", maxConnections: 3))
        let usage = await pool.usage
        #expect([usage.open, usage.leased, usage.waiting, usage.max] == [0, 0, 0, 3])
    }
}
