import CLibPQ

/// The statements of one round trip and the results they are owed, matched in order as libpq hands them over.
///
/// A pipelined flight ends with the `PGRES_PIPELINE_SYNC` of its sync; each statement's results end with a NULL.
/// A simple (multi-statement, non-pipelined) flight ends with the NULL after its last result. The first failure is
/// the flight's error; statements after it in the same pipeline are skipped by the server (`PIPELINE_ABORTED`).
struct PostgresFlight {
    /// What one sent libpq command is.
    enum Step {
        /// A statement whose rows go to `answers[index]`; nil for one whose rows nobody asked for (`BEGIN`).
        case statement(answer: Int?)
        /// A `Parse` of the statement `key` names, under `name`; remembered once the server accepted it.
        case prepare(name: String, key: PostgresPreparedKey)
    }

    /// The results a flight hands to its caller, who alone reads and frees them: owned, so safe to send.
    struct Answers: @unchecked Sendable {
        let results: [OpaquePointer?]
    }

    typealias Outcome = Result<Answers, PostgresError>

    /// A finished flight's caller and what to resume it with: handed out under the connection's lock, resumed
    /// outside it.
    struct Ending: Sendable {
        let continuation: CheckedContinuation<Outcome, Never>
        let outcome: Outcome

        func resume() { continuation.resume(returning: outcome) }
    }

    enum Mode {
        case pipeline
        case simple
    }

    let mode: Mode
    private(set) var steps: [Step] = []
    private var current = 0
    private var currentHasResult = false
    /// One result per asked-for statement, owned until handed to the caller (who frees them).
    private(set) var answers: [OpaquePointer?]
    private(set) var error: PostgresError?
    /// Statements the server accepted as prepared during this flight.
    private(set) var prepared: [(key: PostgresPreparedKey, name: String)] = []
    let continuation: CheckedContinuation<Outcome, Never>

    init(mode: Mode, answers: Int, continuation: CheckedContinuation<Outcome, Never>) {
        self.mode = mode
        self.answers = Array(repeating: nil, count: answers)
        self.continuation = continuation
    }

    mutating func add(_ step: Step) { steps.append(step) }

    /// The name the statement `key` names is being prepared under earlier in this flight, so a second use runs by it.
    func preparing(_ key: PostgresPreparedKey) -> String? {
        for step in steps {
            if case .prepare(let name, let prepared) = step, prepared == key { return name }
        }
        return nil
    }

    /// Takes one value of `PQgetResult` (a result or NULL); returns true when the flight is complete.
    mutating func take(_ result: OpaquePointer?, connectionOK: Bool) -> Bool {
        guard let result else {
            // NULL ends a statement's results; a stray NULL (none owed) changes nothing.
            guard currentHasResult else { return false }
            currentHasResult = false
            current += 1
            return mode == .simple
        }
        let status = PQresultStatus(result)
        if status == PGRES_PIPELINE_SYNC {
            PQclear(result)
            return true
        }
        currentHasResult = true
        defer { if !keep(result) { PQclear(result) } }
        if status == PGRES_PIPELINE_ABORTED { return false }
        if !PostgresResult.succeeded(result) {
            if error == nil { error = PostgresResult.error(result, connectionOK: connectionOK) }
            return false
        }
        if current < steps.count, case .prepare(let name, let key) = steps[current] { prepared.append((key, name)) }
        return false
    }

    /// Keeps a successful result of an asked-for statement for the caller; every other result is freed at once.
    private mutating func keep(_ result: OpaquePointer) -> Bool {
        guard error == nil, current < steps.count, case .statement(let answer?) = steps[current], PostgresResult.succeeded(result)
        else { return false }
        if let earlier = answers[answer] { PQclear(earlier) }
        answers[answer] = result
        return true
    }

    /// Records a failure that is not the server's (the connection broke).
    mutating func fail(_ failure: PostgresError) {
        if error == nil { error = failure }
    }

    /// The outcome to resume the caller with; the results are the caller's to free (freed here on failure).
    func finish() -> Ending {
        if let error {
            for answer in answers { if let answer { PQclear(answer) } }
            return Ending(continuation: continuation, outcome: .failure(error))
        }
        return Ending(continuation: continuation, outcome: .success(Answers(results: answers)))
    }
}
