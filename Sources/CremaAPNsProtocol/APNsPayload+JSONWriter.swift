extension APNsPayload.Alert {
    /// As `JSONEncoder` with `.sortedKeys` writes it (`body`, `sound`, `title`; absent optionals left out), written
    /// directly: an alert is inside most bodies Crema writes per event.
    public func encode(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("body", ifPresent: body)
        writer.member("sound", ifPresent: sound)
        writer.member("title", title)
        writer.endObject()
    }
}

extension APNsPayload.Notification {
    /// The whole body as `APNsPayload.encode` writes it, keys in code-point order of `APS.CodingKeys` (`alert`,
    /// `interruption-level`, `sound`, `thread-id`), absent optionals left out; write it with `APNsPayload.write`.
    public func encode(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("aps")
        aps.encode(to: &writer)
        writer.endObject()
    }
}

extension APNsPayload.Notification.APS {
    /// The `aps` object alone, keys in code-point order (`alert`, `interruption-level`, `mutable-content`, `sound`,
    /// `thread-id`), for bodies that add keys of their own beside it.
    public func encode(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("alert")
        alert.encode(to: &writer)
        writer.member("interruption-level", ifPresent: interruptionLevel?.rawValue)
        if let mutableContent {
            writer.key("mutable-content")
            writer.number(mutableContent)
        }
        writer.member("sound", ifPresent: sound)
        writer.member("thread-id", ifPresent: threadID)
        writer.endObject()
    }
}
