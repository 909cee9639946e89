@testable import CremaPostgres
import Testing

/// The listener's steps, backoff and logging decisions, fed events by hand: no server, no thread, no clock.
@Suite struct PostgresListenerStateMachineTests {
    typealias Machine = PostgresListenerStateMachine

    static func machine(reconnectDelay: Duration = .milliseconds(500)) -> Machine {
        Machine(reconnectDelay: reconnectDelay, maxReconnectDelay: .seconds(30))
    }

    /// Runs one connection up to listening.
    static func listen(_ machine: inout Machine, at now: ContinuousClock.Instant = .now) -> Machine.Action {
        #expect(machine.connected() == .listen)
        return machine.listened(at: now)
    }

    @Test("the first step is to connect and a successful listen delivers reconnected") func theFirstStepIsToConnectAndASuccessfulListenDeliversReconnected() {
        var machine = Self.machine()
        #expect(machine.start() == .connect)
        #expect(machine.connected() == .listen)
        #expect(machine.listened(at: .now) == .deliverReconnected(after: nil))
    }

    @Test("failures back off doubling from the reconnect delay up to thirty seconds") func failuresBackOffDoublingFromTheReconnectDelayUpToThirtySeconds() {
        var machine = Self.machine()
        _ = machine.start()
        var delays: [Duration] = []
        for _ in 0..<9 {
            guard case .wait(let delay, _) = machine.connectFailed("refused") else {
                Issue.record("a failure did not wait")
                return
            }
            delays.append(delay)
            #expect(machine.waited() == .connect)
        }
        #expect(delays == [0.5, 1, 2, 4, 8, 16, 30, 30, 30].map { Duration.milliseconds(Int($0 * 1000)) })
        #expect(machine.backoff(after: 10_000) == .seconds(30))
    }

    @Test("a reconnect delay above the cap is used as is") func aReconnectDelayAboveTheCapIsUsedAsIs() {
        let machine = Machine(reconnectDelay: .seconds(45), maxReconnectDelay: .seconds(30))
        #expect(machine.backoff(after: 1) == .seconds(45))
        #expect(machine.backoff(after: 5) == .seconds(45))
    }

    @Test("a failed listen counts as a failed attempt") func aFailedListenCountsAsAFailedAttempt() {
        var machine = Self.machine()
        _ = machine.start()
        #expect(machine.connected() == .listen)
        #expect(machine.listenFailed("permission denied") == .wait(.milliseconds(500), warning: .firstFailure("permission denied")))
        #expect(machine.waited() == .connect)
        #expect(machine.connectFailed("refused") == .wait(.seconds(1), warning: nil))
    }

    @Test("a loss waits the reconnect delay and the backoff starts over after listening") func aLossWaitsTheReconnectDelayAndTheBackoffStartsOverAfterListening() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.connectFailed("refused")
        _ = machine.waited()
        _ = machine.connectFailed("refused")
        _ = machine.waited()
        #expect(Self.listen(&machine) == .deliverReconnected(after: nil))
        #expect(machine.failedAttempts == 0)
        #expect(machine.lost("terminated", at: .now) == .wait(.milliseconds(500), warning: .lost("terminated")))
        #expect(machine.waited() == .connect)
        #expect(machine.connectFailed("refused") == .wait(.milliseconds(500), warning: nil))
        #expect(machine.waited() == .connect)
        #expect(machine.connectFailed("refused") == .wait(.seconds(1), warning: nil))
    }

    @Test("listening again reports the outage from the loss with its attempts") func listeningAgainReportsTheOutageFromTheLossWithItsAttempts() {
        var machine = Self.machine()
        let start = ContinuousClock.now
        _ = machine.start()
        _ = Self.listen(&machine, at: start)
        _ = machine.lost("terminated", at: start + .seconds(10))
        for _ in 0..<2 {
            _ = machine.waited()
            _ = machine.connectFailed("refused")
        }
        _ = machine.waited()
        #expect(
            Self.listen(&machine, at: start + .seconds(13)) == .deliverReconnected(after: .init(attempts: 3, duration: .seconds(3))))
        // The next loss is a new outage.
        _ = machine.lost("terminated", at: start + .seconds(20))
        _ = machine.waited()
        #expect(
            Self.listen(&machine, at: start + .milliseconds(20_600))
                == .deliverReconnected(after: .init(attempts: 1, duration: .milliseconds(600))))
    }

    @Test("only the first failure before any listen is warned about") func onlyTheFirstFailureBeforeAnyListenIsWarnedAbout() {
        var machine = Self.machine()
        _ = machine.start()
        var warnings: [Machine.Warning?] = []
        for _ in 0..<4 {
            if case .wait(_, let warning) = machine.connectFailed("refused") { warnings.append(warning) }
            _ = machine.waited()
        }
        #expect(warnings == [.firstFailure("refused"), nil, nil, nil])
    }

    @Test("after listening each loss is warned about but not the failed attempts that follow") func afterListeningEachLossIsWarnedAboutButNotTheFailedAttemptsThatFollow() {
        var machine = Self.machine()
        _ = machine.start()
        _ = Self.listen(&machine)
        var warnings: [Machine.Warning?] = []
        for loss in ["first", "second"] {
            if case .wait(_, let warning) = machine.lost(loss, at: .now) { warnings.append(warning) }
            _ = machine.waited()
            if case .wait(_, let warning) = machine.connectFailed("refused") { warnings.append(warning) }
            _ = machine.waited()
            _ = Self.listen(&machine)
        }
        #expect(warnings == [.lost("first"), nil, .lost("second"), nil])
    }

    @Test("shutdown during a backoff finishes without another attempt") func shutdownDuringABackoffFinishesWithoutAnotherAttempt() {
        var machine = Self.machine()
        _ = machine.start()
        _ = machine.connectFailed("refused")
        #expect(machine.shutdownRequested() == .finish)
        // The pause that shutdown cut short still ends; it brings no new attempt.
        #expect(machine.waited() == .finish)
    }

    @Test("shutdown during a connect finishes without listening or delivering reconnected") func shutdownDuringAConnectFinishesWithoutListeningOrDeliveringReconnected() {
        var machine = Self.machine()
        #expect(machine.start() == .connect)
        #expect(machine.connected() == .listen)
        #expect(machine.shutdownRequested() == .finish)
        #expect(machine.listened(at: .now) == .finish)
    }

    @Test("shutdown before the first attempt or while listening finishes") func shutdownBeforeTheFirstAttemptOrWhileListeningFinishes() {
        var idle = Self.machine()
        #expect(idle.shutdownRequested() == .finish)
        #expect(idle.start() == .finish)

        var listening = Self.machine()
        _ = listening.start()
        _ = Self.listen(&listening)
        #expect(listening.shutdownRequested() == .finish)
        #expect(listening.lost("closed", at: .now) == .finish)
        #expect(listening.shutdownRequested() == .finish)
    }
}
