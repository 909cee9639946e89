/// A strict RFC 8259 reader whose only answer is the first place a text stops being JSON.
///
/// It runs after `JSONDecoder` has refused a body, to tell the caller where (`JSONSyntaxError`); it builds no
/// values, so it is small enough to hold to the grammar by tests. Nesting is bounded (as a request's size is), so a
/// body of ten thousand `[` costs a refusal, not the stack.
public struct JSONSyntaxScanner {
    /// Deeper than any request Crema accepts; past it the answer is a position, not a crash.
    public static let maximumDepth = 512

    private let bytes: [UInt8]
    private var index = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The first error in `bytes`, or nil when they are one JSON text (surrounded by whitespace at most) in UTF-8.
    public static func firstError(in bytes: some Sequence<UInt8>) -> JSONSyntaxError? {
        var scanner = JSONSyntaxScanner(Array(bytes))
        let syntax = scanner.document()
        let encoding = firstInvalidUTF8(scanner.bytes).map { Failure(offset: $0, expected: "UTF-8 text") }
        let first = [syntax, encoding].compactMap { $0 }.min { $0.offset < $1.offset }
        return first.map { scanner.position(of: $0) }
    }

    private struct Failure: Error {
        var offset: Int
        var expected: String
    }

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func document() -> Failure? {
        do throws(Failure) {
            skipWhitespace()
            try value(depth: 0)
            skipWhitespace()
            if index < bytes.count { throw Failure(offset: index, expected: "the end of the body") }
            return nil
        } catch {
            return error
        }
    }

    private mutating func value(depth: Int) throws(Failure) {
        guard let byte = peek else { throw Failure(offset: index, expected: "a JSON value") }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < Self.maximumDepth else {
                throw Failure(offset: index, expected: "at most \(Self.maximumDepth) levels of nesting")
            }
            try container(closedBy: byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]"), depth: depth + 1)
        case UInt8(ascii: "\""): try string()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: throw Failure(offset: index, expected: "a JSON value")
        }
    }

    /// An object (`}`) or an array (`]`), its opening byte at `index`.
    private mutating func container(closedBy close: UInt8, depth: Int) throws(Failure) {
        let isObject = close == UInt8(ascii: "}")
        let closing = isObject ? "'}'" : "']'"
        index += 1
        skipWhitespace()
        if peek == close {
            index += 1
            return
        }
        while true {
            if isObject {
                guard peek == UInt8(ascii: "\"") else {
                    throw Failure(offset: index, expected: "a member name in double quotes")
                }
                try string()
                skipWhitespace()
                guard peek == UInt8(ascii: ":") else { throw Failure(offset: index, expected: "':'") }
                index += 1
                skipWhitespace()
            }
            try value(depth: depth)
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
            case close:
                index += 1
                return
            default: throw Failure(offset: index, expected: "',' or \(closing)")
            }
        }
    }

    private mutating func string() throws(Failure) {
        index += 1
        while let byte = peek {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"):
                index += 1
                try escape()
            case 0x00...0x1F: throw Failure(offset: index, expected: "a control character written as an escape (\\n, \\t, \\u00XX)")
            default: index += 1
            }
        }
        throw Failure(offset: index, expected: "'\"' to end the string")
    }

    /// After a backslash.
    private mutating func escape() throws(Failure) {
        switch peek {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 1
        case UInt8(ascii: "u"):
            index += 1
            for _ in 0..<4 {
                guard peek?.isHexDigit == true else { throw Failure(offset: index, expected: "four hex digits after \\u") }
                index += 1
            }
        default: throw Failure(offset: index, expected: "an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
        }
    }

    private mutating func number() throws(Failure) {
        if peek == UInt8(ascii: "-") { index += 1 }
        guard let first = peek, first.isDigit else { throw Failure(offset: index, expected: "a digit") }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek == UInt8(ascii: ".") {
            index += 1
            guard peek?.isDigit == true else { throw Failure(offset: index, expected: "a digit after '.'") }
            skipDigits()
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard peek?.isDigit == true else { throw Failure(offset: index, expected: "a digit in the exponent") }
            skipDigits()
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let expected = word.withUTF8Buffer { Array($0) }
        for byte in expected {
            guard peek == byte else { throw Failure(offset: index, expected: "'\(word)'") }
            index += 1
        }
    }

    private mutating func skipDigits() {
        while peek?.isDigit == true { index += 1 }
    }

    private mutating func skipWhitespace() {
        while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
    }

    /// Line and column of a byte offset: lines end at LF, columns count scalars (UTF-8 lead bytes), both from 1.
    private func position(of failure: Failure) -> JSONSyntaxError {
        var line = 1
        var column = 1
        for byte in bytes[..<min(failure.offset, bytes.count)] {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return JSONSyntaxError(offset: failure.offset, line: line, column: column, expected: failure.expected)
    }

    private static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .error: return offset
            case .emptyInput: return nil
            }
        }
    }
}

extension UInt8 {
    fileprivate var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    fileprivate var isHexDigit: Bool {
        isDigit || (self >= UInt8(ascii: "a") && self <= UInt8(ascii: "f")) || (self >= UInt8(ascii: "A") && self <= UInt8(ascii: "F"))
    }
}
