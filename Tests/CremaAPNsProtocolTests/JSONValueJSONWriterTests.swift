import CremaAPNsProtocol
import Foundation
import Testing

/// Event data is written by `JSONValue.encode(to: inout JSONWriter)` and stored with every event; what it writes must
/// stay what `JSONEncoder` with the store's options (`.sortedKeys`, `.withoutEscapingSlashes`) wrote.
@Suite struct JSONValueJSONWriterTests {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Keys whose code-point order differs from a case-insensitive or numeric one, and keys that need escaping.
    static let keys: [String] = [
        "a", "A", "a10", "a9", "a_b", "aB", "eta", "pos_ref", "é", "e", "e\u{301}", "f", "日本", "😀", "", "x/y", "q\"", "\n",
        "\u{FFFF}", "\u{E000}", "\u{2028}", "\u{7F}",
    ]
    static let texts: [String] = ["", "Oat latte", "1/2 shot", "\"", "\\", "\u{1}", "抹茶ラテ", "e\u{301}", "\u{2028}"]
    static let numbers: [Double] = [
        0, -0.0, 1, -1, 2.5, 0.1, 1e15, 1e15 - 1, 1e15 + 0.5, -1e15, 1e16, 9_007_199_254_740_992, .leastNonzeroMagnitude, 1e300, 123_456.789, 1e-7, 99,
    ]

    /// A value of up to `depth` levels of containers, drawn from a fixed seed so every run sees the same cases.
    static func value(depth: Int, _ random: inout some RandomNumberGenerator) -> JSONValue {
        switch Int.random(in: 0...(depth > 0 ? 5 : 3), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .number(numbers.randomElement(using: &random)!)
        case 3: return .string(texts.randomElement(using: &random)!)
        case 4: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in value(depth: depth - 1, &random) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                members[keys.randomElement(using: &random)!] = value(depth: depth - 1, &random)
            }
            return .object(members)
        }
    }

    /// The 64-bit linear congruential step the other property tests use, inlined: this target has no test support.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 11 ^ state
        }
    }

    @Test("any value is written as the encoder writes it") func anyValueIsWrittenAsTheEncoderWritesIt() throws {
        var random = Seeded(state: 35)
        var containers = 0
        for _ in 0..<2_000 {
            let value = Self.value(depth: 3, &random)
            if case .object(let members) = value, members.count > 1 { containers += 1 }
            var writer = JSONWriter(escapingSlashes: false)
            try value.encode(to: &writer)
            #expect(writer.bytes == Array(try Self.encoder.encode(value)), "\(value)")
        }
        #expect(containers > 100, "the cases include objects whose keys need sorting")
    }

    @Test("a number JSON cannot carry is refused as the encoder refuses it") func aNumberJSONCannotCarryIsRefusedAsTheEncoderRefusesIt() {
        for number in [Double.nan, .infinity, -.infinity] {
            let value = JSONValue.object(["eta": .number(number)])
            var writer = JSONWriter(escapingSlashes: false)
            #expect(throws: JSONWriterError.self) { try value.encode(to: &writer) }
            #expect(throws: (any Error).self) { try Self.encoder.encode(value) }
        }
    }
}
