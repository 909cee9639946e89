@testable import CremaServer
import Testing

/// The scanner decides, byte by byte and across reads, when the HTTP decoder must see a connection's first bytes.
@Suite struct RequestHeadScannerTests {
    @Test("a head is judged the same wherever its reads split it", arguments: [
        ("GET / HTTP/1.1\r\nHost: crema\r\n\r\n", RequestHeadScanner.Verdict.ended),
        ("GET / HTTP/1.1\r\n\r\n", .ended),
        ("GET / HTTP/1.1\nHost: crema\n\n", .ended),  // bare LFs: the decoder refuses them, so it sees them at once
        ("GET / HTTP/1.1\r\nHost: crema\r\n\r\nPOST", .ended),
        ("\r\n\r\nGET / HTTP/1.1\r\n\r\n", .ended),
        ("GET / HTTP/1.1\r\nHost: crema\r\n", .incomplete),
        ("GET / HTTP/1.1\r\nX-List: a,\r\n\tb\r\n", .incomplete),  // a folded line starts with a tab, not an end
        ("\r\n\r\n\n\n", .incomplete),  // empty lines before a request line are skipped by the decoder
        ("", .incomplete),
        ("\u{16}\u{3}\u{1}", .refused),  // a TLS hello
        ("{\"store_id\":", .refused),
        ("get / HTTP/1.1\r\n", .refused),
        ("GET / HTTP/1.1\r\nHost: cr\u{0}ema", .refused),
        ("GET / HTTP/1.1\r\nHost: cr\u{7F}ema", .refused),
    ])
    func aHeadIsJudgedTheSameWhereverItsReadsSplitIt(_ head: String, _ verdict: RequestHeadScanner.Verdict) {
        let bytes = Array(head.utf8)
        for split in 0...bytes.count {
            var scanner = RequestHeadScanner()
            var result = scanner.scan(bytes[..<split])
            if result == .incomplete { result = scanner.scan(bytes[split...]) }
            #expect(result == verdict, "split at \(split)")
        }
    }

    @Test("a head trickled one byte at a time ends at its last byte") func aHeadTrickledOneByteAtATimeEndsAtItsLastByte() {
        let bytes = Array("GET / HTTP/1.1\r\nHost: crema\r\n\r\n".utf8)
        var scanner = RequestHeadScanner()
        for (offset, byte) in bytes.enumerated() {
            #expect(scanner.scan([byte]) == (offset == bytes.count - 1 ? .ended : .incomplete))
        }
    }
}
