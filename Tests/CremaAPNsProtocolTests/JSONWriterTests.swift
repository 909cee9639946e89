import CremaAPNsProtocol
import Foundation
import Testing

/// The writer's bytes against `JSONEncoder`'s for the same values and options: every scalar a string can need escaped,
/// whole and fractional numbers across the ranges where `description` changes form, identifiers, and the commas of
/// nested containers.
@Suite struct JSONWriterTests {
    /// `JSONEncoder` as the stored projection (default escaping) or the API (`.withoutEscapingSlashes`) uses it.
    static func encoder(escapingSlashes: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = escapingSlashes ? [.sortedKeys] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func written(escapingSlashes: Bool, _ write: (inout JSONWriter) throws -> Void) rethrows -> [UInt8] {
        var writer = JSONWriter(escapingSlashes: escapingSlashes)
        try write(&writer)
        return writer.bytes
    }

    /// Every ASCII scalar alone and inside text, then text beyond ASCII (two-, three- and four-byte UTF-8, line and
    /// paragraph separators, a BOM, combining marks, a ZWJ sequence), with the runs between escapes of every length.
    static let strings: [String] = {
        var strings = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
        strings += (0..<0x80).map { "a\(UnicodeScalar(UInt8($0)))bc" }
        strings += [
            "", "Oat latte", "Tour Café", "1/2 shot / extra", "\\/", "\"quoted\"", "line\nbreak\r\n\ttab", "\u{7F}",
            "é", "日本語のテキスト", "あと5分", "😀☕️👨‍👩‍👧‍👦", "\u{2028}\u{2029}\u{FEFF}", "e\u{301}", "\u{0}\u{1F}\u{10}/",
            String(repeating: "ab/\"\\\u{1}é", count: 40),
        ]
        var all = (0..<0x80).map { UnicodeScalar(UInt8($0)) }.map(Character.init)
        all += ["é", "日", "😀"]
        strings.append(String(all))
        return strings
    }()

    @Test("strings are escaped as the encoder escapes them, with and without escaped slashes")
    func stringsAreEscapedAsTheEncoderEscapesThem() throws {
        for escapingSlashes in [true, false] {
            let encoder = Self.encoder(escapingSlashes: escapingSlashes)
            for string in Self.strings {
                let written = Self.written(escapingSlashes: escapingSlashes) { $0.string(string) }
                #expect(written == Array(try encoder.encode(string)), "\(string.debugDescription), escaping slashes: \(escapingSlashes)")
            }
        }
    }

    /// Whole numbers on both sides of 10^15 and 2^53, fractions, the extremes, negative zero, and a sweep of bit patterns.
    static let doubles: [Double] = {
        var doubles: [Double] = [
            0, -0.0, 1, -1, 0.5, 0.6, 0.1, 1.0 / 3, 2.0 / 3, 1e-5, 1e-7, 123.456, 816_693_100, 816_693_100.123, 816_693_100.5,
            999_999_999_999_999, 1e15, 1e15 + 1, 1e16, 9_007_199_254_740_992, (9_007_199_254_740_992 as Double).nextUp, 1e21, 1e22, 1e300,
            -1e15, -999_999_999_999_999, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude,
            .leastNormalMagnitude, .ulpOfOne, Double(Int32.max), Double(Int64.max), Double(Int64.min),
        ]
        doubles += (0...1000).map { Double($0) / 1000 }
        doubles += (0...200).map { 816_000_000 + Double($0) * 37.001 }
        // A fixed walk over bit patterns (a linear congruential sequence), finite values only.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        while doubles.count < 6000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let value = Double(bitPattern: state)
            if value.isFinite { doubles.append(value) }
        }
        return doubles
    }()

    @Test("doubles are written as the encoder writes them, whole ones without a fraction")
    func doublesAreWrittenAsTheEncoderWritesThem() throws {
        let encoder = Self.encoder(escapingSlashes: true)
        for value in Self.doubles {
            let written = try Self.written(escapingSlashes: true) { try $0.number(value) }
            #expect(written == Array(try encoder.encode(value)), "\(value)")
        }
    }

    @Test("integers are written as the encoder writes them, the extremes included")
    func integersAreWrittenAsTheEncoderWritesThem() throws {
        let encoder = Self.encoder(escapingSlashes: true)
        var values = [0, 1, -1, 9, 10, -10, 99, 100, 42, 99_999, Int.max, Int.min, Int.max - 1, Int.min + 1]
        values += (0..<19).map { power in (0..<power).reduce(1) { value, _ in value * 10 } }
        values += values.filter { $0 != .min }.map { -$0 }
        for value in values {
            let written = Self.written(escapingSlashes: true) { $0.number(value) }
            #expect(written == Array(try encoder.encode(value)), "\(value)")
        }
    }

    @Test("dates are seconds since 2001 as Date's own coding writes them")
    func datesAreSecondsSince2001AsDatesOwnCodingWritesThem() throws {
        let encoder = Self.encoder(escapingSlashes: true)
        for seconds in [0, 1_795_000_000, 1_795_000_000.123, 1_795_000_000.5, -1, 978_307_200] as [TimeInterval] {
            let date = Date(timeIntervalSince1970: seconds)
            let written = try Self.written(escapingSlashes: true) { try $0.number(secondsSince2001: date) }
            #expect(written == Array(try encoder.encode(date)), "\(seconds)")
        }
    }

    @Test("identifiers are lowercase canonical text")
    func identifiersAreLowercaseCanonicalText() {
        let ids = [UUID(uuidString: "3F1C2A9E-8B7D-4C6E-9A5F-0D1E2F3A4B5C")!, UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
            + (0..<64).map { n in
                let b = (0..<16).map { UInt8(truncatingIfNeeded: n &* 37 &+ $0 &* 29) }
                return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
            }
        for id in ids {
            let written = Self.written(escapingSlashes: false) { $0.string(lowercased: id) }
            #expect(String(decoding: written, as: UTF8.self) == "\"\(id.uuidString.lowercased())\"")
        }
    }

    struct Nested: Encodable {
        var a: [Int]
        var b: [[String]]
        var c: [String: [String: String?]]
        var d: String?
    }

    @Test("nested objects and arrays get their commas where the encoder puts them")
    func nestedObjectsAndArraysGetTheirCommasWhereTheEncoderPutsThem() throws {
        let value = Nested(a: [1, 2, 3], b: [[], ["x"], ["y", "z"]], c: ["e": [:], "f": ["g": "h", "i": nil]], d: nil)
        let written = Self.written(escapingSlashes: true) { writer in
            writer.beginObject()
            writer.key("a")
            writer.beginArray()
            for number in value.a { writer.number(number) }
            writer.endArray()
            writer.key("b")
            writer.beginArray()
            for inner in value.b {
                writer.beginArray()
                for text in inner { writer.string(text) }
                writer.endArray()
            }
            writer.endArray()
            writer.key("c")
            writer.beginObject()
            writer.key("e")
            writer.beginObject()
            writer.endObject()
            writer.key("f")
            writer.beginObject()
            writer.key("g")
            writer.string("h")
            writer.key("i")
            writer.string(nil as String?)
            writer.endObject()
            writer.endObject()
            writer.endObject()
        }
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: try Self.encoder(escapingSlashes: true).encode(value), as: UTF8.self))
    }

    @Test("a spliced document takes its comma like any value")
    func aSplicedDocumentTakesItsCommaLikeAnyValue() {
        let written = Self.written(escapingSlashes: false) { writer in
            writer.beginArray()
            writer.json(Array(#"{"k":1}"#.utf8))
            writer.json(Array("[]".utf8))
            writer.null()
            writer.endArray()
        }
        #expect(String(decoding: written, as: UTF8.self) == #"[{"k":1},[],null]"#)
    }

    @Test("NaN and the infinities are refused, as the encoder refuses them")
    func nanAndTheInfinitiesAreRefused() {
        for value in [Double.nan, .infinity, -.infinity] {
            var writer = JSONWriter(escapingSlashes: true)
            #expect(throws: JSONWriterError.nonFiniteNumber) { try writer.number(value) }
            #expect((try? Self.encoder(escapingSlashes: true).encode(value)) == nil)
        }
    }
}
