public import Logging

/// Crema's log lines: `StreamLogHandler`'s format, but a logger's metadata is formatted when a line is written, not
/// each time a key is set. `StreamLogHandler` re-formats all of a logger's metadata on every set, and each request sets
/// four keys: that was 2.4 % of crema serve's samples under ingest, at a log level that wrote no line at all.
public struct DeferredMetadataLogHandler: LogHandler {
    private var stream: StreamLogHandler
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    /// - Parameter stream: where lines go, in its format; its own metadata and provider are not used.
    public init(_ stream: StreamLogHandler, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.stream = stream
        self.stream.metadata = [:]
        self.stream.metadataProvider = nil
        self.metadataProvider = metadataProvider
    }

    public var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The logger's metadata, then the provider's, then the statement's, each overriding the one before (the
    /// precedence `StreamLogHandler` gives them), handed to the stream as the statement's own.
    public func log(event: LogEvent) {
        var event = event
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty {
            merged.merge(provided) { _, provided in provided }
        }
        if let explicit = event.metadata, !explicit.isEmpty {
            merged.merge(explicit) { _, explicit in explicit }
        }
        event.metadata = merged
        stream.log(event: event)
    }
}
