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
        writer.beginObject()
        writer.key("alert")
        aps.alert.encode(to: &writer)
        writer.member("interruption-level", ifPresent: aps.interruptionLevel?.rawValue)
        writer.member("sound", ifPresent: aps.sound)
        writer.member("thread-id", ifPresent: aps.threadID)
        writer.endObject()
        writer.endObject()
    }
}
