extension UnsafeMutableBufferPointer<UInt8> {
    /// Writes `value` (not negative) as exactly `width` decimal digits from `offset`, zero-padded on the left; the
    /// timestamp writers fill a buffer of known length this way instead of building and padding strings.
    public func putDigits(_ value: Int, width: Int, at offset: Int) {
        var value = value
        for index in stride(from: offset + width - 1, through: offset, by: -1) {
            self[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value % 10)
            value /= 10
        }
    }
}
