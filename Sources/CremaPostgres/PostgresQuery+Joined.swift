extension PostgresQuery {
    /// `parts` one after another with `separator` between them, their placeholders renumbered in turn. Linear in the
    /// text: each part is copied once (embedding the growing list in a new query at each step copied it all again, so
    /// a list of n rows cost n² bytes of copying).
    public init(joining parts: some Sequence<PostgresQuery>, separator: StaticString) {
        var joined = StringInterpolation(literalCapacity: 0, interpolationCount: 0)
        var first = true
        for part in parts {
            if !first { joined.appendInterpolation(unescaped: separator) }
            joined.appendInterpolation(part)
            first = false
        }
        self.init(stringInterpolation: joined)
    }
}
