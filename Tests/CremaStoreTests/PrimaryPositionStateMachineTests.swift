@testable import CremaStore
import CremaTestSupport
import Synchronization
import Testing

/// Sharing the primary's WAL position among reads without ever giving a read a position taken before it began.
@Suite("Primary position sharing")
struct PrimaryPositionStateMachineTests {
    /// How many askings of the primary have begun.
    final class Askings: Sendable {
        private let count = Mutex(0)
        var begun: Int { count.withLock { $0 } }
        func begin() -> Int {
            count.withLock { value in
                value += 1
                return value
            }
        }
    }

    @Test("A read alone asks, and is answered alone")
    func aLoneReadAsks() {
        var machine = PrimaryPositionStateMachine()
        #expect(machine.request(1) == .ask)
        #expect(machine.answered(asker: 1) == .init(resume: [], askNext: nil))
        #expect(!machine.asking)
    }

    @Test("Reads that start while a position is asked for wait for the next asking, which one of them does for all")
    func latecomersShareTheNextAsking() {
        var machine = PrimaryPositionStateMachine()
        #expect(machine.request(1) == .ask)
        #expect(machine.request(2) == .wait)
        #expect(machine.request(3) == .wait)
        // The first answer is older than reads 2 and 3: nobody but the asker gets it, and read 2 asks next.
        #expect(machine.answered(asker: 1) == .init(resume: [], askNext: 2))
        #expect(machine.request(4) == .wait)
        #expect(machine.answered(asker: 2) == .init(resume: [3], askNext: 4))
        #expect(machine.answered(asker: 4) == .init(resume: [], askNext: nil))
        #expect(!machine.asking)
        #expect(machine.request(5) == .ask)
    }

    @Test("A read whose client left while it was to ask for its round does not fail the others in the round")
    func aCancelledAskerDoesNotFailItsRound() async throws {
        let position = PrimaryPosition<String>()
        let askings = Askings()
        // The first asking waits for this; later ones pass at once.
        let door = TestEvent()
        let fetch: @Sendable () async throws -> String = {
            let number = askings.begin()
            await door.wait()
            // An asking that inherited a cancelled reader's cancellation would end here.
            try Task.checkCancellation()
            return String(number)
        }
        let first = Task { try await position.current(fetch) }
        while askings.begun == 0 { await Task.yield() }
        // Two reads arrive while the first asks: the next asking is theirs, made by the one that came first.
        let leaving = Task { try await position.current(fetch) }
        while await position.waitingReads < 1 { await Task.yield() }
        let staying = Task { try await position.current(fetch) }
        while await position.waitingReads < 2 { await Task.yield() }
        leaving.cancel()
        door.signal()
        #expect(try await first.value == "1")
        #expect(try await staying.value == "2")
        _ = try? await leaving.value
    }

    @Test("Under concurrent reads every position was taken after its read began, and the primary is asked fewer times than there are reads")
    func concurrentReadsGetFreshSharedPositions() async throws {
        let position = PrimaryPosition<String>()
        // The stand-in for the primary numbers each asking when it begins: a read that began when k askings had begun
        // must get a number above k.
        let askings = Askings()
        let fetch: @Sendable () async throws -> String = {
            let number = askings.begin()
            for _ in 0..<20 { await Task.yield() }
            return String(number)
        }
        let results = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for _ in 0..<200 {
                group.addTask {
                    let before = askings.begun
                    let answer = try await position.current(fetch)
                    return (before, Int(answer)!)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 200)
        #expect(results.allSatisfy { before, answer in answer > before })
        #expect(askings.begun < 200)
    }
}
