/// The statements of one round trip and the results they are owed, matched in order as libpq hands them over.
/// Pure: each value of `PQgetResult` comes in as its kind (``Result``), and ``take(_:)`` says what to do with it (hand
/// it to the caller, free it) and when the flight is complete; the results themselves stay with the connection's
/// ``PostgresFlightCaller``.
///
/// A pipelined flight ends with the `PGRES_PIPELINE_SYNC` of its sync; each statement's results end with a NULL.
/// A simple (multi-statement, non-pipelined) flight ends with the NULL after its last result. The first failure is
/// the flight's error; statements after it in the same pipeline are skipped by the server (`PIPELINE_ABORTED`).
struct PostgresFlight {
    /// What one sent libpq command is.
    enum Step: Equatable {
        /// A statement whose rows go to answer `answer`; nil for one whose rows nobody asked for (`BEGIN`).
        case statement(answer: Int?)
        /// A `Parse` of the statement `key` names, under `name`; remembered once the server accepted it.
        case prepare(name: String, key: PostgresPreparedKey)
    }

    enum Mode {
        case pipeline
        case simple
    }

    /// What one value of `PQgetResult` is.
    enum Result: Equatable {
        /// NULL: the current statement's results are over.
        case end
        /// `PGRES_PIPELINE_SYNC`: the pipeline's sync was reached.
        case sync
        /// `PGRES_PIPELINE_ABORTED`: skipped after an earlier failure.
        case aborted
        /// A command, rows or an empty statement.
        case succeeded
        case failed(PostgresError)
    }

    /// What the connection does with that value.
    enum Taken: Equatable {
        /// Hand the result to the caller as answer `answer` (in place of an earlier one for the same answer).
        case keep(answer: Int)
        /// Free the result, if it is one; the flight goes on.
        case discard
        /// Free the result, if it is one; the flight is complete.
        case complete
    }

    let mode: Mode
    private(set) var steps: [Step] = []
    private var current = 0
    private var currentHasResult = false
    private(set) var error: PostgresError?
    /// Statements the server accepted as prepared during this flight.
    private(set) var prepared: [(key: PostgresPreparedKey, name: String)] = []

    init(mode: Mode) {
        self.mode = mode
    }

    mutating func add(_ step: Step) { steps.append(step) }

    /// The name the statement `key` names is being prepared under earlier in this flight, so a second use runs by it.
    func preparing(_ key: PostgresPreparedKey) -> String? {
        for step in steps {
            if case .prepare(let name, let prepared) = step, prepared == key { return name }
        }
        return nil
    }

    /// Takes one value of `PQgetResult`.
    mutating func take(_ result: Result) -> Taken {
        switch result {
        case .end:
            // NULL ends a statement's results; a stray NULL (none owed) changes nothing.
            guard currentHasResult else { return .discard }
            currentHasResult = false
            current += 1
            return mode == .simple ? .complete : .discard
        case .sync:
            return .complete
        case .aborted:
            currentHasResult = true
            return .discard
        case .failed(let failure):
            currentHasResult = true
            if error == nil { error = failure }
            return .discard
        case .succeeded:
            currentHasResult = true
            guard current < steps.count else { return .discard }
            switch steps[current] {
            case .prepare(let name, let key):
                prepared.append((key, name))
                return .discard
            case .statement(let answer?) where error == nil:
                return .keep(answer: answer)
            case .statement:
                return .discard
            }
        }
    }

    /// Records a failure that is not the server's (the connection broke, or was closed); the first failure stays.
    mutating func fail(_ failure: PostgresError) {
        if error == nil { error = failure }
    }
}
