/// What the wording of one order may mention, already cleaned of stray whitespace.
struct PhraseContext: Sendable, Hashable {
    var number: Int
    var store: String
    var customer: String
    var barista: String?
    var pickup: String?
    var eta: ETAReading
    var firstItem: String
    var firstSize: String?
    var firstQuantity: Int
    /// Units ordered beyond the first line ("+ 2 more").
    var moreCount: Int
}
