import CLibPQ

/// The caller of the flight in the air and the results handed to it so far: the part of a flight that is libpq's
/// pointers and a suspended task, kept by ``PostgresConnection`` beside its machine's pure ``PostgresFlight``.
struct PostgresFlightCaller {
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

    /// One result per asked-for statement, owned until handed to the caller (who frees them).
    private var answers: [OpaquePointer?]
    private let continuation: CheckedContinuation<Outcome, Never>

    init(answers: Int, continuation: CheckedContinuation<Outcome, Never>) {
        self.answers = Array(repeating: nil, count: answers)
        self.continuation = continuation
    }

    /// Keeps a result as answer `answer`, in place of an earlier one (a script's statements share answer 0).
    mutating func keep(_ result: OpaquePointer, as answer: Int) {
        if let earlier = answers[answer] { PQclear(earlier) }
        answers[answer] = result
    }

    /// The outcome to resume the caller with: its answers, or `failure` (the answers are freed then).
    func finish(failing failure: PostgresError?) -> Ending {
        if let failure {
            for answer in answers { if let answer { PQclear(answer) } }
            return Ending(continuation: continuation, outcome: .failure(failure))
        }
        return Ending(continuation: continuation, outcome: .success(Answers(results: answers)))
    }
}
