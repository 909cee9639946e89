/// The primary's WAL position as `StandbyReads` needs it: never taken before the read began, shared by the reads that
/// began while one was being taken. The actor only performs what `PrimaryPositionStateMachine` decides. `Position` is
/// what the primary answers (for `StandbyReads`, its insert position and timeline).
actor PrimaryPosition<Position: Sendable> {
    /// What a waiting read is resumed with.
    private enum Turn: Sendable {
        case position(Position)
        case ask
    }

    private var machine = PrimaryPositionStateMachine()
    private var waiters: [Int: CheckedContinuation<Turn, any Error>] = [:]
    private var nextRead = 0

    /// How many reads are waiting for a position now (not counting the one asking).
    var waitingReads: Int { waiters.count }

    /// A position taken after this call began; `fetch` asks the primary for it (run by one of the reads waiting).
    func current(_ fetch: @escaping @Sendable () async throws -> Position) async throws -> Position {
        nextRead += 1
        let read = nextRead
        switch machine.request(read) {
        case .ask:
            return try await ask(read, fetch)
        case .wait:
            let turn = try await withCheckedThrowingContinuation { waiters[read] = $0 }
            switch turn {
            case .position(let position): return position
            case .ask: return try await ask(read, fetch)
            }
        }
    }

    private func ask(_ read: Int, _ fetch: @escaping @Sendable () async throws -> Position) async throws -> Position {
        // Reentrant: reads that start while this awaits are told to wait for the next asking. The asking runs in a task
        // of its own: the answer is the whole round's, so the asker's cancellation (its client left) must not fail it.
        let result: Result<Position, any Error>
        do {
            result = .success(try await Task { try await fetch() }.value)
        } catch {
            result = .failure(error)
        }
        let answered = machine.answered(asker: read)
        for other in answered.resume { waiters.removeValue(forKey: other)?.resume(with: result.map(Turn.position)) }
        if let next = answered.askNext { waiters.removeValue(forKey: next)?.resume(returning: .ask) }
        return try result.get()
    }
}
