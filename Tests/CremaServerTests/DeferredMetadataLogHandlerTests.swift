import CremaServer
import Logging
import Synchronization
import Testing

/// Crema's handler formats metadata only when it writes a line; what it writes must be what `StreamLogHandler` writes.
@Suite struct DeferredMetadataLogHandlerTests {
    /// A stream that keeps what it is given.
    final class Lines: TextOutputStream, Sendable {
        private let lines = Mutex<[String]>([])
        func write(_ string: String) { lines.withLock { $0.append(string) } }
        /// Each line without its timestamp (the first word), which depends on the second it was written in.
        var withoutTimestamps: [String] { lines.withLock { $0 }.map { String($0.drop(while: { $0 != " " })) } }
    }

    /// The same statements through `logger`: metadata set key by key, from a provider and per statement, a key set by
    /// all three, a line below the level, and an error.
    static func exercise(_ logger: inout Logger) {
        logger.logLevel = .info
        logger.info("bare")
        logger[metadataKey: "crema.role"] = "pos"
        logger[metadataKey: "hb.request.id"] = "42"
        logger[metadataKey: "shared"] = "logger"
        logger.info("set")
        logger.warning("explicit", metadata: ["shared": "statement", "crema.tenant": "acme"])
        logger.debug("below the level")
        logger[metadataKey: "crema.role"] = nil
        logger.error("failed", error: Failure.boom, metadata: ["n": .array(["1", "2"])])
    }

    enum Failure: Error { case boom }

    @Test("lines are the ones stream log handler writes", arguments: [false, true])
    func linesAreTheOnesStreamLogHandlerWrites(withProvider: Bool) {
        let provider: Logger.MetadataProvider? = withProvider ? Logger.MetadataProvider { ["shared": "provider", "trace": "t-1"] } : nil
        let expected = Lines()
        let written = Lines()
        var plain = Logger(label: "crema") { label in StreamLogHandler(label: label, stream: expected, metadataProvider: provider) }
        var deferred = Logger(label: "crema") { label in
            DeferredMetadataLogHandler(StreamLogHandler(label: label, stream: written, metadataProvider: nil), metadataProvider: provider)
        }
        Self.exercise(&plain)
        Self.exercise(&deferred)

        #expect(written.withoutTimestamps.count == 4)
        #expect(written.withoutTimestamps == expected.withoutTimestamps)
    }
}
