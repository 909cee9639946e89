/// What a statement's SQL is written into, so that each statement is written once, in one function generic over it:
/// a ``PostgresQuery`` (the text with numbered placeholders, and the values) when its text is needed, which for a
/// ``PostgresStatementShape`` is once per shape; ``PostgresBinds`` (the values alone, in the same order) at every
/// other call. Both see the same literals and interpolations, so the values always match the placeholders.
public protocol PostgresSQL: ExpressibleByStringInterpolation, Sendable
where StringLiteralType == String, StringInterpolation: PostgresSQLInterpolation, StringInterpolation.Fragment == Self {
    /// `parts` one after another with `separator` between them.
    init(joining parts: some Sequence<Self>, separator: StaticString)
}

/// The interpolations a statement's SQL may use: a value (always a `$n` parameter, never text), a compile-time
/// constant fragment, and another piece of SQL of the same kind (a CTE, say).
public protocol PostgresSQLInterpolation: StringInterpolationProtocol where StringLiteralType == String {
    /// The kind of SQL that embeds: the type this interpolation builds.
    associatedtype Fragment

    mutating func appendInterpolation(_ value: some PostgresEncodable)
    mutating func appendInterpolation(_ value: (some PostgresEncodable)?)
    mutating func appendInterpolation(unescaped fragment: StaticString)
    mutating func appendInterpolation(_ fragment: Fragment)
}
