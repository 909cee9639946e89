public import CremaAPNsProtocol
public import CremaActivityModels

extension OrderActivityAttributes.ContentState {
    /// The state as `JSONEncoder` with `.sortedKeys` and Foundation's default strategies writes it (dates as seconds
    /// since 2001, absent optionals left out), written directly: the projection is stored with every order change.
    /// Keys in code-point order; `ContentStateJSONWriterTests` holds the bytes to the encoder's.
    public func encode(to writer: inout JSONWriter) throws(JSONWriterError) {
        writer.beginObject()
        writer.member("baristaName", ifPresent: baristaName)
        writer.key("compactLeading")
        writer.beginObject()
        writer.member("text", compactLeading.text)
        writer.endObject()
        writer.key("compactTrailing")
        writer.beginObject()
        if let countdownEnd = compactTrailing.countdownEnd {
            writer.key("countdownEnd")
            try writer.number(secondsSince2001: countdownEnd)
        }
        writer.member("text", compactTrailing.text)
        writer.endObject()
        writer.key("eta")
        try writer.number(secondsSince2001: eta)
        writer.key("lockScreen")
        lockScreen.encode(to: &writer)
        writer.key("minimal")
        writer.beginObject()
        writer.member("text", ifPresent: minimal.text)
        writer.endObject()
        writer.member("pickupPoint", ifPresent: pickupPoint)
        writer.key("progress")
        try writer.number(progress)
        writer.member("receipt", ifPresent: receipt)
        writer.key("small")
        writer.beginObject()
        writer.member("status", small.status)
        writer.member("title", small.title)
        writer.endObject()
        writer.member("status", status.rawValue)
        writer.key("step")
        writer.number(step)
        writer.key("stepCount")
        writer.number(stepCount)
        writer.member("symbolName", symbolName)
        writer.endObject()
    }
}

extension OrderActivityAttributes.ContentState.LockScreen {
    func encode(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("detail", ifPresent: detail)
        writer.member("etaAbsolute", ifPresent: etaAbsolute)
        writer.member("etaRelative", ifPresent: etaRelative)
        writer.member("subtitle", subtitle)
        writer.member("title", title)
        writer.endObject()
    }
}
