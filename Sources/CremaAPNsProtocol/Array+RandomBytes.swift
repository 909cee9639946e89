extension Array where Element == UInt8 {
    /// `count` bytes from the system's secure generator (`getrandom` on Linux): the one source of every key, ticket
    /// and secret Crema makes, beside `hexEncoded`, so that no module picks a weaker generator by accident.
    public static func random(count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
