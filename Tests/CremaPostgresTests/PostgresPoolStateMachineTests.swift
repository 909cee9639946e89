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

    @Test("the pool reports its usage before any connection") func thePoolReportsItsUsageBeforeAnyConnection() async {
        let pool = PostgresPool(.init(conninfo: "host=127.0.0.1 port=1", maxConnections: 3))
        let usage = await pool.usage
        #expect([usage.open, usage.leased, usage.waiting, usage.max] == [0, 0, 0, 3])
    }
}
