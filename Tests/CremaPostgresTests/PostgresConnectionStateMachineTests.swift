@testable import CremaPostgres
import Testing

/// The connection's rules, fed events by hand: no server, no socket, no libpq. Statements are named by their
/// prepared keys, results by their kinds.
@Suite struct PostgresConnectionStateMachineTests {
    typealias Machine = PostgresConnectionStateMachine

    static let select: PostgresPreparedKey = .text("SELECT $1::int")
    static let insert: PostgresPreparedKey = .statement(7)
    static let refused = PostgresError(.server, sqlState: "23505", detail: "duplicate key")

    /// A connection just opened and on the loop.
    static func machine(preparedLimit: Int = 256, preparedMaxLength: Int = 16_384) -> Machine {
        var machine = Machine(preparedLimit: preparedLimit, preparedMaxLength: preparedMaxLength)
        machine.attached(registered: true)
        return machine
    }

    /// Sends a pipelined flight of `keys` (answers 0, 1, …) and returns how each statement went out.
    static func send(_ keys: [PostgresPreparedKey], on machine: inout Machine, length: Int = 20) -> [Machine.StatementSend] {
        guard case .send = machine.startFlight(.pipeline) else {
            Issue.record("the flight did not go out")
            return []
        }
        return keys.enumerated().map { machine.queue($1, length: length, answer: $0) }
    }

    /// What the server answers a flight whose every prepare and statement succeeds, then the sync.
    static func answerAll(_ machine: inout Machine) -> [Machine.Received] {
        let steps = machine.flight?.steps ?? []
        var received: [Machine.Received] = []
        for _ in steps {
            received.append(machine.received(.succeeded))
            received.append(machine.received(.end))
        }
        received.append(machine.received(.sync))
        return received
    }

    // MARK: - Prepared statements

    @Test("a statement is prepared at its first use and runs by that name once the server accepted it")
    func aStatementIsPreparedAtItsFirstUseAndRunsByThatNameOnceTheServerAcceptedIt() {
        var machine = Self.machine()
        #expect(Self.send([Self.select], on: &machine) == [.prepare("crema_1")])
        #expect(Self.answerAll(&machine).last == .complete(failing: nil))
        #expect(machine.prepared.name(for: Self.select) == "crema_1")
        #expect(Self.send([Self.select], on: &machine) == [.byName("crema_1")])
    }

    @Test("the same statement twice in one flight is prepared once") func theSameStatementTwiceInOneFlightIsPreparedOnce() {
        var machine = Self.machine()
        #expect(Self.send([Self.select, Self.insert, Self.select], on: &machine) == [.prepare("crema_1"), .prepare("crema_2"), .byName("crema_1")])
        #expect(machine.prepared.serial == 2)
    }

    @Test("statements beyond the prepared limit run unnamed") func statementsBeyondThePreparedLimitRunUnnamed() {
        var machine = Self.machine(preparedLimit: 2)
        _ = Self.send([.text("a"), .text("b")], on: &machine)
        _ = Self.answerAll(&machine)
        #expect(Self.send([.text("c"), .text("a")], on: &machine) == [.unnamed, .byName("crema_1")])
    }

    @Test("a statement longer than the prepared maximum runs unnamed") func aStatementLongerThanThePreparedMaximumRunsUnnamed() {
        var machine = Self.machine(preparedMaxLength: 100)
        #expect(Self.send([Self.select], on: &machine, length: 101) == [.unnamed])
        _ = Self.answerAll(&machine)
        #expect(Self.send([Self.select], on: &machine, length: 100) == [.prepare("crema_1")])
    }

    @Test("a prepare the server refused is not remembered") func aPrepareTheServerRefusedIsNotRemembered() {
        var machine = Self.machine()
        _ = Self.send([Self.select], on: &machine)
        // The Parse fails; the statement behind it is skipped.
        #expect(machine.received(.failed(Self.refused)) == .discard)
        #expect(machine.received(.end) == .discard)
        #expect(machine.received(.aborted) == .discard)
        #expect(machine.received(.end) == .discard)
        #expect(machine.received(.sync) == .complete(failing: Self.refused))
        #expect(machine.prepared.name(for: Self.select) == nil)
        #expect(Self.send([Self.select], on: &machine) == [.prepare("crema_2")])
    }

    @Test("a flight whose error says the names are gone or stale forgets every prepared name", arguments: ["26000", "0A000"])
    func aFlightWhoseErrorSaysTheNamesAreGoneOrStaleForgetsEveryPreparedName(_ sqlState: String) {
        var machine = Self.machine()
        _ = Self.send([Self.select], on: &machine)
        _ = Self.answerAll(&machine)
        _ = Self.send([Self.select], on: &machine)
        let stale = PostgresError(.server, sqlState: sqlState)
        #expect(machine.received(.failed(stale)) == .discard)
        #expect(machine.received(.end) == .discard)
        #expect(machine.received(.sync) == .complete(failing: stale))
        #expect(machine.prepared.names.isEmpty)
        #expect(Self.send([Self.select], on: &machine) == [.prepare("crema_2")])
    }

    @Test("another server error keeps the prepared names") func anotherServerErrorKeepsThePreparedNames() {
        var machine = Self.machine()
        _ = Self.send([Self.select], on: &machine)
        _ = Self.answerAll(&machine)
        _ = Self.send([Self.select], on: &machine)
        _ = machine.received(.failed(Self.refused))
        _ = machine.received(.end)
        _ = machine.received(.sync)
        #expect(Self.send([Self.select], on: &machine) == [.byName("crema_1")])
    }

    @Test("after a reset every statement is prepared again under a name never used before")
    func afterAResetEveryStatementIsPreparedAgainUnderANameNeverUsedBefore() {
        var machine = Self.machine()
        _ = Self.send([Self.select, Self.insert], on: &machine)
        _ = Self.answerAll(&machine)
        #expect(machine.resetStarted() == .reset)
        #expect(machine.prepared.names.isEmpty)
        #expect(machine.resetEnded(nil) == .attach)
        machine.attached(registered: true)
        #expect(Self.send([Self.insert, Self.select], on: &machine) == [.prepare("crema_3"), .prepare("crema_4")])
    }

    @Test("a flight the connection lost remembers nothing it prepared") func aFlightTheConnectionLostRemembersNothingItPrepared() {
        var machine = Self.machine()
        _ = Self.send([Self.select], on: &machine)
        #expect(machine.received(.succeeded) == .discard)
        #expect(machine.connectionLost("server closed the connection") == .detach(failing: PostgresError(.connectionFailed, detail: "server closed the connection")))
        #expect(machine.prepared.names.isEmpty)
    }

    // MARK: - Results

    @Test("a pipelined flight hands each statement its answer and completes at the sync")
    func aPipelinedFlightHandsEachStatementItsAnswerAndCompletesAtTheSync() {
        var machine = Self.machine()
        _ = Self.send([Self.select, Self.insert], on: &machine)
        // Parse, statement 0, Parse, statement 1: each's result, then its NULL.
        #expect(Self.answerAll(&machine) == [.discard, .discard, .keep(answer: 0), .discard, .discard, .discard, .keep(answer: 1), .discard, .complete(failing: nil)])
        #expect(machine.flight == nil)
        #expect(machine.isIdle)
    }

    @Test("the first failure is the flight's error and the answers after it are dropped")
    func theFirstFailureIsTheFlightsErrorAndTheAnswersAfterItAreDropped() {
        var machine = Self.machine()
        _ = Self.send([Self.select, Self.insert], on: &machine)
        _ = machine.received(.succeeded)
        _ = machine.received(.end)
        #expect(machine.received(.failed(Self.refused)) == .discard)
        #expect(machine.received(.end) == .discard)
        // A second failure does not replace the first, and no answer is handed out after a failure.
        #expect(machine.received(.failed(PostgresError(.server, sqlState: "42P01"))) == .discard)
        #expect(machine.received(.end) == .discard)
        #expect(machine.received(.succeeded) == .discard)
        #expect(machine.received(.end) == .discard)
        #expect(machine.received(.sync) == .complete(failing: Self.refused))
    }

    @Test("a simple flight completes at the end of its results, all of them its one answer")
    func aSimpleFlightCompletesAtTheEndOfItsResultsAllOfThemItsOneAnswer() {
        var machine = Self.machine()
        guard case .send(nil) = machine.startFlight(.simple) else {
            Issue.record("the flight did not go out")
            return
        }
        #expect(machine.received(.succeeded) == .keep(answer: 0))
        #expect(machine.received(.succeeded) == .keep(answer: 0))
        #expect(machine.received(.end) == .complete(failing: nil))
    }

    @Test("a stray null before any result changes nothing") func aStrayNullBeforeAnyResultChangesNothing() {
        var machine = Self.machine()
        _ = Self.send([Self.select], on: &machine)
        #expect(machine.received(.end) == .discard)
        #expect(machine.received(.succeeded) == .discard)
        #expect(machine.received(.end) == .discard)
        #expect(machine.received(.succeeded) == .keep(answer: 0))
    }

    @Test("each flight counts one round trip and one flight is in the air at a time")
    func eachFlightCountsOneRoundTripAndOneFlightIsInTheAirAtATime() {
        var machine = Self.machine()
        _ = Self.send([Self.select, Self.insert], on: &machine)
        #expect(machine.roundTrips == 1)
        #expect(!machine.isIdle)
        _ = Self.answerAll(&machine)
        _ = Self.send([Self.select], on: &machine)
        #expect(machine.roundTrips == 2)
    }

    @Test("the loop is asked for writability only while bytes are left to send") func theLoopIsAskedForWritabilityOnlyWhileBytesAreLeftToSend() {
        var machine = Self.machine()
        _ = Self.send([Self.select], on: &machine)
        #expect(machine.flushed(pending: false) == .none)
        #expect(machine.flushed(pending: true) == .watch)
        #expect(machine.flushed(pending: true) == .none)
        #expect(machine.flushed(pending: false) == .stopWatching)
        #expect(machine.flushed(pending: false) == .none)
    }

    // MARK: - Pipelined transactions

    @Test("a begin goes out as the first statement of the next flight and nobody gets its rows")
    func aBeginGoesOutAsTheFirstStatementOfTheNextFlightAndNobodyGetsItsRows() {
        var machine = Self.machine()
        machine.begin(.repeatableRead)
        guard case .send(let begin?) = machine.startFlight(.pipeline) else {
            Issue.record("the flight did not carry the begin")
            return
        }
        #expect(begin.sql == "BEGIN ISOLATION LEVEL REPEATABLE READ")
        #expect(machine.queue(.statement(begin.id), length: begin.sql.utf8.count, answer: nil) == .prepare("crema_1"))
        #expect(machine.queue(Self.select, length: 20, answer: 0) == .prepare("crema_2"))
        #expect(machine.flight?.steps == [.prepare(name: "crema_1", key: .statement(begin.id)), .statement(answer: nil), .prepare(name: "crema_2", key: Self.select), .statement(answer: 0)])
        #expect(Self.answerAll(&machine) == [.discard, .discard, .discard, .discard, .discard, .discard, .keep(answer: 0), .discard, .complete(failing: nil)])
        #expect(machine.pendingBegin == nil)
        // The next flight of the transaction goes without it.
        guard case .send(nil) = machine.startFlight(.pipeline) else {
            Issue.record("the begin went out twice")
            return
        }
    }

    @Test("a begin goes out in front of a simple flight's script") func aBeginGoesOutInFrontOfASimpleFlightsScript() {
        var machine = Self.machine()
        machine.begin(.serializable)
        guard case .send(let begin?) = machine.startFlight(.simple) else {
            Issue.record("the flight did not carry the begin")
            return
        }
        #expect(begin.sql == "BEGIN ISOLATION LEVEL SERIALIZABLE")
    }

    @Test("a flight that could not go out keeps the waiting begin for the rollback to drop")
    func aFlightThatCouldNotGoOutKeepsTheWaitingBeginForTheRollbackToDrop() {
        var machine = Self.machine()
        _ = machine.connectionLost("gone")
        machine.begin(.readCommitted)
        guard case .fail(let error) = machine.startFlight(.pipeline) else {
            Issue.record("a flight went out on a broken connection")
            return
        }
        #expect(error.code == .connectionFailed)
        #expect(machine.isInTransaction(.unknown))
        #expect(machine.rollback() == .none)
        #expect(!machine.isInTransaction(.unknown))
    }

    @Test("ending a transaction whose begin never went out sends nothing") func endingATransactionWhoseBeginNeverWentOutSendsNothing() {
        var machine = Self.machine()
        machine.begin(.readCommitted)
        #expect(machine.commit(.idle) == .none)
        #expect(machine.pendingBegin == nil)
        machine.begin(.readCommitted)
        #expect(machine.rollback() == .none)
        #expect(machine.rollback() == .rollback)
    }

    @Test("committing a failed transaction rolls it back and says so") func committingAFailedTransactionRollsItBackAndSaysSo() {
        var machine = Self.machine()
        #expect(machine.commit(.inTransaction) == .commit)
        #expect(machine.commit(.failed) == .rollbackFailed)
    }

    @Test("a transaction is open while its begin waits or while the server says one is")
    func aTransactionIsOpenWhileItsBeginWaitsOrWhileTheServerSaysOneIs() {
        var machine = Self.machine()
        #expect(!machine.isInTransaction(.idle))
        #expect(machine.isInTransaction(.inTransaction))
        #expect(machine.isInTransaction(.failed))
        #expect(!machine.isInTransaction(.active))
        machine.begin(.readCommitted)
        #expect(machine.isInTransaction(.idle))
    }

    // MARK: - Loss, close and cancel

    @Test("a connection lost under a flight fails that flight, refuses the next, and is reconnected at the next lease")
    func aConnectionLostUnderAFlightFailsThatFlightRefusesTheNextAndIsReconnectedAtTheNextLease() {
        var machine = Self.machine()
        _ = Self.send([Self.select], on: &machine)
        #expect(machine.flushed(pending: true) == .watch)
        let lost = PostgresError(.connectionFailed, detail: "terminating connection due to administrator command")
        #expect(machine.connectionLost(lost.detail) == .detach(failing: lost))
        #expect(machine.state == .detached)
        #expect(!machine.watchingWrites)
        guard case .fail(let error) = machine.startFlight(.pipeline) else {
            Issue.record("a flight went out on a lost connection")
            return
        }
        #expect(error == PostgresError(.connectionFailed, detail: "the connection is broken"))
        #expect(machine.roundTrips == 1)
        #expect(machine.leased(connectionOK: true, transaction: .idle) == .reconnect(.broken))
    }

    @Test("a connection lost while idle only comes off the loop") func aConnectionLostWhileIdleOnlyComesOffTheLoop() {
        var machine = Self.machine()
        #expect(machine.connectionLost("eof") == .detach(failing: nil))
        #expect(machine.state == .detached)
        #expect(machine.leased(connectionOK: true, transaction: .idle) == .reconnect(.broken))
    }

    @Test("a loss keeps the server's earlier failure as the flight's error") func aLossKeepsTheServersEarlierFailureAsTheFlightsError() {
        var machine = Self.machine()
        _ = Self.send([Self.select], on: &machine)
        _ = machine.received(.failed(Self.refused))
        #expect(machine.connectionLost("eof") == .detach(failing: Self.refused))
    }

    @Test("a send that failed midway takes the connection off the loop and fails the flight")
    func aSendThatFailedMidwayTakesTheConnectionOffTheLoopAndFailsTheFlight() {
        var machine = Self.machine()
        _ = Self.send([Self.select], on: &machine)
        let failure = PostgresError(.connectionFailed, detail: "could not send")
        #expect(machine.sendFailed(failure) == .detach(failing: failure))
        #expect(machine.flight == nil)
        #expect(machine.leased(connectionOK: true, transaction: .idle) == .reconnect(.broken))
    }

    @Test("closing fails the flight in the air and every later flight with closed, and closing twice does nothing")
    func closingFailsTheFlightInTheAirAndEveryLaterFlightWithClosedAndClosingTwiceDoesNothing() {
        var machine = Self.machine()
        _ = Self.send([Self.select], on: &machine)
        #expect(machine.close() == .detach(failing: PostgresError(.closed)))
        #expect(machine.close() == .none)
        guard case .fail(let error) = machine.startFlight(.simple) else {
            Issue.record("a flight went out on a closed connection")
            return
        }
        #expect(error.code == .closed)
        #expect(machine.resetStarted() == .fail(PostgresError(.closed)))
    }

    @Test("a cancel goes out only while a flight is in the air, and then the next lease resets the connection as routine")
    func aCancelGoesOutOnlyWhileAFlightIsInTheAirAndThenTheNextLeaseResetsTheConnectionAsRoutine() {
        var machine = Self.machine()
        #expect(machine.cancelRequested() == .none)
        #expect(machine.leased(connectionOK: true, transaction: .idle) == .use)
        _ = Self.send([Self.select], on: &machine)
        #expect(machine.cancelRequested() == .sendCancel)
        _ = machine.received(.failed(PostgresError(.canceled, sqlState: "57014")))
        _ = machine.received(.end)
        _ = machine.received(.sync)
        // The flight is over, but the cancel may still land on whatever runs next.
        #expect(machine.leased(connectionOK: true, transaction: .idle) == .reconnect(.cancelled))
    }

    // MARK: - Leases and reconnects

    @Test("a lease hands out a connection only when it is idle, trusted and the server says it is well and outside a transaction",
        arguments: [(true, Machine.TransactionStatus.idle, Machine.LeaseAction.use), (false, .idle, .reconnect(.broken)),
            (true, .inTransaction, .reconnect(.broken)), (true, .failed, .reconnect(.broken)), (true, .active, .reconnect(.broken))])
    func aLeaseHandsOutAConnectionOnlyWhenItIsIdleTrustedAndTheServerSaysItIsWellAndOutsideATransaction(
        _ connectionOK: Bool, _ transaction: Machine.TransactionStatus, _ expected: Machine.LeaseAction
    ) {
        let machine = Self.machine()
        #expect(machine.leased(connectionOK: connectionOK, transaction: transaction) == expected)
    }

    @Test("a connection whose socket the loop refused is never handed out") func aConnectionWhoseSocketTheLoopRefusedIsNeverHandedOut() {
        var machine = Machine(preparedLimit: 256, preparedMaxLength: 16_384)
        machine.attached(registered: false)
        #expect(machine.state == .detached)
        #expect(machine.leased(connectionOK: true, transaction: .idle) == .reconnect(.broken))
    }

    @Test("a write refused as read-only reconnects at the next lease, before any other reason")
    func aWriteRefusedAsReadOnlyReconnectsAtTheNextLeaseBeforeAnyOtherReason() {
        var machine = Self.machine()
        machine.noteFailure(Self.refused)
        machine.noteFailure(PostgresError(.connectionFailed))
        #expect(machine.leased(connectionOK: true, transaction: .idle) == .use)
        machine.markUnwanted()
        #expect(machine.leased(connectionOK: true, transaction: .idle) == .reconnect(.unwanted))
        machine.noteFailure(PostgresError(.server, sqlState: PostgresError.SQLState.readOnlyTransaction))
        _ = Self.send([Self.select], on: &machine)
        _ = machine.cancelRequested()
        #expect(machine.leased(connectionOK: false, transaction: .unknown) == .reconnect(.refusedWrites))
    }

    @Test("a connection whose server is not the kind wanted reconnects at the next lease, before a cancel")
    func aConnectionWhoseServerIsNotTheKindWantedReconnectsAtTheNextLeaseBeforeACancel() {
        var machine = Self.machine()
        _ = Self.send([Self.select], on: &machine)
        _ = machine.cancelRequested()
        machine.markUnwanted()
        #expect(machine.leased(connectionOK: true, transaction: .idle) == .reconnect(.unwanted))
    }

    @Test("a reset forgets every reason and the waiting begin, and a successful one hands the connection out again")
    func aResetForgetsEveryReasonAndTheWaitingBeginAndASuccessfulOneHandsTheConnectionOutAgain() {
        var machine = Self.machine()
        _ = Self.send([Self.select], on: &machine)
        _ = machine.cancelRequested()
        _ = Self.answerAll(&machine)
        machine.markUnwanted()
        machine.noteFailure(PostgresError(.server, sqlState: "25006"))
        machine.begin(.serializable)
        _ = machine.flushed(pending: true)
        #expect(machine.resetStarted() == .reset)
        #expect(machine.state == .connecting)
        #expect(machine.pendingBegin == nil)
        #expect(!machine.watchingWrites)
        #expect(!machine.refusedWrites && !machine.unwanted && !machine.cancelled)
        // While it resets, it is not to be handed out, nor flown.
        #expect(machine.leased(connectionOK: true, transaction: .idle) == .reconnect(.broken))
        guard case .fail = machine.startFlight(.pipeline) else {
            Issue.record("a flight went out during a reset")
            return
        }
        #expect(machine.resetEnded(nil) == .attach)
        machine.attached(registered: true)
        #expect(machine.leased(connectionOK: true, transaction: .idle) == .use)
    }

    @Test("a failed reset leaves the connection off the loop and the next lease tries again")
    func aFailedResetLeavesTheConnectionOffTheLoopAndTheNextLeaseTriesAgain() {
        var machine = Self.machine()
        _ = machine.connectionLost("eof")
        #expect(machine.resetStarted() == .reset)
        let refused = PostgresError(.connectionFailed, detail: "connection refused")
        #expect(machine.resetEnded(refused) == .fail(refused))
        #expect(machine.state == .detached)
        #expect(machine.leased(connectionOK: true, transaction: .idle) == .reconnect(.broken))
        #expect(machine.resetStarted() == .reset)
        #expect(machine.resetEnded(nil) == .attach)
    }

    @Test("a connection closed while it was reset stays closed") func aConnectionClosedWhileItWasResetStaysClosed() {
        var machine = Self.machine()
        #expect(machine.resetStarted() == .reset)
        #expect(machine.close() == .detach(failing: nil))
        #expect(machine.resetEnded(nil) == .none)
        #expect(machine.state == .closed)
        let refused = PostgresError(.connectionFailed, detail: "connection refused")
        #expect(machine.resetEnded(refused) == .fail(refused))
        #expect(machine.state == .closed)
    }
}
