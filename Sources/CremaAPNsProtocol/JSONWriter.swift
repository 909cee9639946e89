public import Foundation

/// Writes JSON straight into UTF-8 bytes, for the documents written once per event (the answer to an order command,
/// the projection stored with the order, the change feed's announcement), where `JSONEncoder`'s generic boxing cost
/// more than the rest of the request's JSON together (docs/benchmarks.md, issue #35).
///
/// What it writes is byte for byte what `JSONEncoder` writes with the same options, so stored answers, projections and
/// clients see no change: strings escaped as Foundation escapes them (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other
/// controls as lowercase `\u00xx`, `/` as `\/` unless `escapingSlashes` is off, everything else as its UTF-8), numbers
/// as their `description` without a trailing `.0`. The caller writes keys in the encoder's sorted order (code-point
/// order); the types that use it hold their own order next to their `CodingKeys`, and tests compare with the encoder.
public struct JSONWriter: Sendable {
    /// The document so far.
    public private(set) var bytes: [UInt8]
    /// `JSONEncoder`'s default writes `/` as `\/`; `WireCoding` turns that off (`.withoutEscapingSlashes`).
    public let escapingSlashes: Bool
    /// A value or a closed container was just written, so the next key or element needs a comma first.
    private var afterValue = false

    public init(escapingSlashes: Bool, capacity: Int = 1024) {
        self.escapingSlashes = escapingSlashes
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The document as text (the bytes are UTF-8 by construction).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    // MARK: - Containers and keys

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        afterValue = false
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        afterValue = true
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        afterValue = false
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        afterValue = true
    }

    /// An object's key, which must need no escaping (the types' own ASCII names): written as it is.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    /// A key that may need escaping (a dictionary's, as in `JSONValue`), escaped as a string is. Named apart from
    /// `key(_:)` so that a literal key never resolves to it (a literal prefers `String` over `StaticString`).
    public mutating func key(escaping name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    // MARK: - Members

    /// A key and its text, `null` for nil, as `encode(_:forKey:)` writes an optional.
    public mutating func member(_ name: StaticString, _ value: String?) {
        key(name)
        string(value)
    }

    /// A key and its text, left out for nil, as the synthesized `encodeIfPresent` leaves an absent optional.
    public mutating func member(_ name: StaticString, ifPresent value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// A key and an identifier as lowercase canonical text.
    public mutating func member(_ name: StaticString, lowercased uuid: UUID) {
        key(name)
        string(lowercased: uuid)
    }

    // MARK: - Values

    /// `true` or `false`, as JSON and the encoder spell them.
    public mutating func bool(_ value: Bool) {
        separate()
        let text: StaticString = value ? "true" : "false"
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
        afterValue = true
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
        afterValue = true
    }

    public mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { appendEscaped($0) }
        bytes.append(UInt8(ascii: "\""))
        afterValue = true
    }

    /// `null` for nil, as `encode(_:forKey:)` writes an absent optional.
    public mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    public mutating func number(_ value: Int) {
        separate()
        appendDigits(value)
        afterValue = true
    }

    /// As `JSONEncoder` writes a `Double`: its `description` less a trailing `.0` (`1`, `0.6`, `1e+16`, `-0`). Whole
    /// numbers below 10^15 are written from their digits, which is the same text without making a `String`.
    public mutating func number(_ value: Double) throws(JSONWriterError) {
        guard value.isFinite else { throw .nonFiniteNumber }
        separate()
        if value == value.rounded(), abs(value) < 1e15, !(value == 0 && value.sign == .minus) {
            appendDigits(Int(value))
        } else {
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            text.withUTF8 { bytes.append(contentsOf: $0) }
        }
        afterValue = true
    }

    /// `Date`'s own `Codable` form, which ActivityKit reads: seconds since 2001-01-01.
    public mutating func number(secondsSince2001 date: Date) throws(JSONWriterError) {
        try number(date.timeIntervalSinceReferenceDate)
    }

    /// Lowercase canonical text, as the API writes identifiers.
    public mutating func string(lowercased uuid: UUID) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        withUnsafeBytes(of: uuid.uuid) { raw in
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            }
        }
        bytes.append(UInt8(ascii: "\""))
        afterValue = true
    }

    /// A value already written as JSON by another writer or an encoder with the same options, spliced in as it is.
    public mutating func json(_ document: some Sequence<UInt8>) {
        separate()
        bytes.append(contentsOf: document)
        afterValue = true
    }

    // MARK: - Bytes

    private mutating func separate() {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendDigits(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: buffer[(20 - count)...])
        }
    }

    /// Runs of bytes that need no escape are copied whole; the rest are written as Foundation writes them.
    private mutating func appendEscaped(_ text: UnsafeBufferPointer<UInt8>) {
        var start = 0
        for (index, byte) in text.enumerated() {
            let escape: UInt8
            switch byte {
            case UInt8(ascii: "\""): escape = UInt8(ascii: "\"")
            case UInt8(ascii: "\\"): escape = UInt8(ascii: "\\")
            case UInt8(ascii: "/"):
                guard escapingSlashes else { continue }
                escape = UInt8(ascii: "/")
            case 0x08: escape = UInt8(ascii: "b")
            case 0x09: escape = UInt8(ascii: "t")
            case 0x0A: escape = UInt8(ascii: "n")
            case 0x0C: escape = UInt8(ascii: "f")
            case 0x0D: escape = UInt8(ascii: "r")
            case 0x00..<0x20: escape = UInt8(ascii: "u")
            default: continue
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[start..<index]))
            bytes.append(UInt8(ascii: "\\"))
            bytes.append(escape)
            if escape == UInt8(ascii: "u") {
                bytes.append(contentsOf: [UInt8(ascii: "0"), UInt8(ascii: "0"), Self.hexDigits[Int(byte >> 4)], Self.hexDigits[Int(byte & 0x0F)]])
            }
            start = index + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[start...]))
    }
}
