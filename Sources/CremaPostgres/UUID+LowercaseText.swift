public import Foundation

extension UUID {
    /// Parses the canonical text (`8-4-4-4-12` hex digits, either case) without `sscanf`, which `UUID(uuidString:)`
    /// goes through (second to `snprintf` in the same profile); nil for anything else.
    public init?(canonicalText text: String) {
        var text = text
        text.makeContiguousUTF8()  // a no-op for a native string
        let parsed: uuid_t?? = text.utf8.withContiguousStorageIfAvailable { chars -> uuid_t? in
            guard chars.count == 36, chars[8] == UInt8(ascii: "-"), chars[13] == UInt8(ascii: "-"), chars[18] == UInt8(ascii: "-"),
                chars[23] == UInt8(ascii: "-")
            else { return nil }
            func nibble(_ c: UInt8) -> UInt8? {
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
                default: nil
                }
            }
            var id: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let complete = withUnsafeMutableBytes(of: &id) { bytes -> Bool in
                var at = 0
                for index in 0..<16 {
                    if at == 8 || at == 13 || at == 18 || at == 23 { at += 1 }
                    guard let high = nibble(chars[at]), let low = nibble(chars[at + 1]) else { return false }
                    bytes[index] = high << 4 | low
                    at += 2
                }
                return true
            }
            return complete ? id : nil
        }
        guard let parsed = parsed ?? nil else { return nil }
        self.init(uuid: parsed)
    }

    /// The canonical lowercase text (`8-4-4-4-12` hex digits), as PostgreSQL writes a `uuid`. Written digit by digit:
    /// `uuidString` formats through `snprintf` and `lowercased()` copies it again, which the ingest profile showed at
    /// about 3 % of crema's instructions per event (docs/benchmarks.md, issue #35).
    public var lowercasedText: String {
        let digits: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { buffer in
                digits.withUTF8Buffer { hex in
                    var at = 0
                    for (index, byte) in bytes.enumerated() {
                        if index == 4 || index == 6 || index == 8 || index == 10 {
                            buffer[at] = UInt8(ascii: "-")
                            at += 1
                        }
                        buffer[at] = hex[Int(byte >> 4)]
                        buffer[at + 1] = hex[Int(byte & 0x0f)]
                        at += 2
                    }
                }
                return 36
            }
        }
    }
}
