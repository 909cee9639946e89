/// A piece of wording with at most one part that may be cut: the part that came from outside (a name, a
/// store), so that a long name is shortened and the language's own words around it stay whole.
struct Phrase: Sendable, Hashable {
    var head: String
    var variable: String?
    var tail: String

    /// The least a cut variable may keep, in columns, before the next, shorter wording is preferred.
    static let minimumVariableColumns = 6

    init(_ text: String) {
        head = text
        variable = nil
        tail = ""
    }

    init(_ head: String, _ variable: String, _ tail: String = "") {
        self.head = head
        self.variable = variable
        self.tail = tail
    }

    var full: String { head + (variable ?? "") + tail }

    /// The first candidate that fits `budget` whole, or with its variable cut to no less than
    /// `minimumVariableColumns`; when none does, the last candidate cut as a whole. A candidate whose variable is
    /// empty (a name removed by erasure or retention) is passed over, so "Enjoy, !" is never shown.
    static func fit(_ candidates: [Phrase], budget: Int) -> String {
        for phrase in candidates where phrase.variable?.isEmpty != true {
            let fixed = DisplayWidth.columns(of: phrase.head) + DisplayWidth.columns(of: phrase.tail)
            guard let variable = phrase.variable else {
                if fixed <= budget { return phrase.head + phrase.tail }
                continue
            }
            let width = DisplayWidth.columns(of: variable)
            if fixed + width <= budget { return phrase.full }
            let room = budget - fixed
            if room >= min(width, minimumVariableColumns) {
                return phrase.head + DisplayWidth.truncate(variable, toColumns: room) + phrase.tail
            }
        }
        return DisplayWidth.truncate(candidates.last?.full ?? "", toColumns: budget)
    }
}
