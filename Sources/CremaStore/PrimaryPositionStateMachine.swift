/// Who asks the primary for its WAL position, and who waits for whose answer: a read may use an answer only if the
/// asking began after the read did, so reads that start while one is being asked wait for the next, which one of
/// them asks for all of them. Under concurrent reads the primary answers one statement per round instead of one per
/// read. Pure: `PrimaryPosition` performs what it returns.
struct PrimaryPositionStateMachine: Sendable {
    /// Whether a position is being asked for now.
    private(set) var asking = false
    /// The reads the position being asked for answers (they started before the asking did).
    private var answering: [Int] = []
    /// The reads that started while it was being asked for: the next asking is theirs.
    private var waiting: [Int] = []

    enum RequestAction: Equatable {
        /// Ask the primary now, for this read and whoever joins `answering`.
        case ask
        /// Wait: resumed with a position, or told to ask.
        case wait
    }

    /// What to do once the primary answered the asking `asker` did.
    struct Answered: Equatable {
        /// Reads to resume with the answer (the asker has it already).
        var resume: [Int]
        /// A waiting read to tell to ask next, for itself and the others that waited.
        var askNext: Int?
    }

    mutating func request(_ read: Int) -> RequestAction {
        guard asking else {
            asking = true
            answering = [read]
            return .ask
        }
        waiting.append(read)
        return .wait
    }

    mutating func answered(asker: Int) -> Answered {
        let resume = answering.filter { $0 != asker }
        guard let next = waiting.first else {
            asking = false
            answering = []
            return Answered(resume: resume, askNext: nil)
        }
        answering = waiting
        waiting = []
        return Answered(resume: resume, askNext: next)
    }
}
