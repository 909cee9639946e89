import CremaAPI
import CremaAPNsProtocol
import CremaTestSupport
import Foundation
import Testing

/// The scanner that tells a caller where a body stopped being JSON: silent on JSON, exact on the rest.
@Suite struct JSONSyntaxScannerTests {
    @Test("JSON texts have no error", arguments: [
        "{}", "[]", " { } ", "0", "-0.5e+10", "1E3", "\"\"", #""\u00e9\n\"""#, "true", "false", "null",
        #"{"a":[1,{"b":null}],"c":"café ☕"}"#, "[\n\t1 ,\r\n 2 ]",
    ])
    func jsonTextsHaveNoError(text: String) {
        #expect(JSONSyntaxScanner.firstError(in: Array(text.utf8)) == nil, "\(text)")
    }

    @Test(
        "a text that is not JSON is answered with where it stopped and what was expected",
        arguments: [
            ("", 0, 1, 1, "a JSON value"),
            (#"{"store_id": "#, 13, 1, 14, "a JSON value"),
            ("{\n  \"store_id\": \"x\",\n  \"pos_ref\" \"T\"\n}", 33, 3, 13, "':'"),
            (#"{"a":1,}"#, 7, 1, 8, "a member name in double quotes"),
            (#"{"a":1 "b":2}"#, 7, 1, 8, "',' or '}'"),
            ("[1,2", 4, 1, 5, "',' or ']'"),
            (#"{"a":tru}"#, 8, 1, 9, "'true'"),
            (#"{"a":01}"#, 6, 1, 7, "',' or '}'"),
            (#"{"a":1.}"#, 7, 1, 8, "a digit after '.'"),
            (#"{"a":-}"#, 6, 1, 7, "a digit"),
            (#"{"a":"x"#, 7, 1, 8, "'\"' to end the string"),
            (#"{"a":"\x"}"#, 7, 1, 8, #"an escape (\" \\ \/ \b \f \n \r \t \uXXXX)"#),
            (#"{"a":"\u12g4"}"#, 10, 1, 11, #"four hex digits after \u"#),
            ("{\"a\":\"\t\"}", 6, 1, 7, #"a control character written as an escape (\n, \t, \u00XX)"#),
            (#"{"é":1}x"#, 8, 1, 8, "the end of the body"),
            ("{'a':1}", 1, 1, 2, "a member name in double quotes"),
        ] as [(String, Int, Int, Int, String)])
    func aTextThatIsNotJSONIsAnsweredWithWhereItStoppedAndWhatWasExpected(
        text: String, offset: Int, line: Int, column: Int, expected: String
    ) {
        let error = JSONSyntaxScanner.firstError(in: Array(text.utf8))
        #expect(error == JSONSyntaxError(offset: offset, line: line, column: column, expected: expected), "\(text)")
    }

    @Test("bytes that are not UTF-8 are named before a later syntax error") func bytesThatAreNotUTF8AreNamedBeforeALaterSyntaxError() {
        let bytes: [UInt8] = Array(#"{"a":""#.utf8) + [0xC3, 0x28] + Array(#"",}"#.utf8)
        #expect(JSONSyntaxScanner.firstError(in: bytes) == JSONSyntaxError(offset: 6, line: 1, column: 7, expected: "UTF-8 text"))
    }

    @Test("nesting past the bound is a position, not a crash") func nestingPastTheBoundIsAPositionNotACrash() {
        let depth = JSONSyntaxScanner.maximumDepth
        let deep = Array(repeating: UInt8(ascii: "["), count: 100_000)
        #expect(JSONSyntaxScanner.firstError(in: deep)?.offset == depth)
        let atTheBound = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(JSONSyntaxScanner.firstError(in: Array(atTheBound.utf8)) == nil)
    }

    /// Every document JSONEncoder writes is JSON to the scanner, and every proper prefix of one whose root is an object
    /// stops exactly where it was cut, or at the lead byte of a scalar the cut split: the scanner reads all it is given
    /// before it finds the text incomplete.
    @Test("generated documents are JSON and each cut is found where it was made") func generatedDocumentsAreJSONAndEachCutIsFoundWhereItWasMade() throws {
        var random = SeededGenerator(seed: 0x4A53_4F4E)
        for _ in 0..<300 {
            let document = JSONValue.object(["root": Self.value(depth: 0, using: &random)])
            let bytes = Array(try JSONEncoder().encode(document))
            #expect(JSONSyntaxScanner.firstError(in: bytes) == nil, "\(String(decoding: bytes, as: UTF8.self))")
            let cut = Int.random(in: 0..<bytes.count, using: &random)
            // A cut inside a scalar leaves its lead byte as the first bad byte.
            var stop = cut
            while stop > 0, bytes[stop] & 0xC0 == 0x80 { stop -= 1 }
            let error = JSONSyntaxScanner.firstError(in: bytes[..<cut])
            #expect(error?.offset == stop, "\(String(decoding: bytes[..<cut], as: UTF8.self)): \(String(describing: error))")
        }
    }

    static func value(depth: Int, using random: inout SeededGenerator) -> JSONValue {
        let scalars = Array("abc xyz\"\\/\n\t{}[]:,0é")  // é: columns count scalars, cuts may fall inside it
        func text() -> String { String((0..<Int.random(in: 0...6, using: &random)).map { _ in scalars.randomElement(using: &random)! }) }
        switch Int.random(in: 0..<(depth < 4 ? 7 : 5), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .number(Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 100)
        case 3, 4: return .string(text())
        case 5: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in value(depth: depth + 1, using: &random) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) { members[text()] = value(depth: depth + 1, using: &random) }
            return .object(members)
        }
    }
}
