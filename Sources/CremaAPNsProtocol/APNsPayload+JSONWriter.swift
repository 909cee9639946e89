extension APNsPayload.Alert {
    /// As `JSONEncoder` with `.sortedKeys` writes it (`body`, `sound`, `title`; absent optionals left out), written
    /// directly: an alert is inside most bodies Crema writes per event.
    public func encode(to writer: inout JSONWriter) {
        writer.beginObject()
        if let body {
            writer.key("body")
            writer.string(body)
        }
        if let sound {
            writer.key("sound")
            writer.string(sound)
        }
        writer.key("title")
        writer.string(title)
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
        if let interruptionLevel = aps.interruptionLevel {
            writer.key("interruption-level")
            writer.string(interruptionLevel.rawValue)
        }
        if let sound = aps.sound {
            writer.key("sound")
            writer.string(sound)
        }
        if let threadID = aps.threadID {
            writer.key("thread-id")
            writer.string(threadID)
        }
        writer.endObject()
        writer.endObject()
    }
}
