/// Where a request body stops being JSON, and what was expected there.
///
/// Foundation's decoder says only that the data "was not valid JSON" (its own position text is not a stable
/// interface), and a till developer staring at a 2 KB body needs the line and column. This is found by
/// `JSONSyntaxScanner` after the decoder has refused the body, so valid requests never pay for it.
public struct JSONSyntaxError: Sendable, Hashable {
    /// Bytes before the offending one (0-based): what a program indexes with.
    public var offset: Int
    /// 1-based line and column, columns counted in Unicode scalars: what an editor shows.
    public var line: Int
    public var column: Int
    /// What the grammar allowed at that point, as a phrase ("',' or '}'", "a JSON value").
    public var expected: String

    public init(offset: Int, line: Int, column: Int, expected: String) {
        self.offset = offset
        self.line = line
        self.column = column
        self.expected = expected
    }

    /// "expected ',' or '}' at line 2, column 7 (byte 21)"
    public var sentence: String { "expected \(expected) at line \(line), column \(column) (byte \(offset))" }
}
