extension Sequence where Element == UInt8 {
    /// Lowercase hex, two digits a byte: how APNs writes device tokens and how Crema writes digests, key ids and
    /// signatures. One way for every module, and without `String(format:)`, which costs an allocation a byte.
    public var hexEncoded: String {
        var digits: [UInt8] = []
        digits.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            digits.append(hexDigits[Int(byte >> 4)])
            digits.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: digits, as: UTF8.self)
    }
}

private let hexDigits = Array("0123456789abcdef".utf8)
