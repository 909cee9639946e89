public import CremaAPNsProtocol
public import CremaActivityModels

extension OrderActivityAttributes.ContentState {
    /// The state as `JSONEncoder` with `.sortedKeys` and Foundation's default strategies writes it (dates as seconds
    /// since 2001, absent optionals left out), written directly: the projection is stored with every order change.
    /// Keys in code-point order; `ContentStateJSONWriterTests` holds the bytes to the encoder's.
    public func encode(to writer: inout JSONWriter) throws(JSONWriterError) {
        writer.beginObject()
        if let baristaName {
            writer.key("baristaName")
            writer.string(baristaName)
        }
        writer.key("compactLeading")
        writer.beginObject()
        writer.key("text")
        writer.string(compactLeading.text)
        writer.endObject()
        writer.key("compactTrailing")
        writer.beginObject()
        if let countdownEnd = compactTrailing.countdownEnd {
            writer.key("countdownEnd")
            try writer.number(secondsSince2001: countdownEnd)
        }
        writer.key("text")
        writer.string(compactTrailing.text)
        writer.endObject()
        writer.key("eta")
        try writer.number(secondsSince2001: eta)
        writer.key("lockScreen")
        lockScreen.encode(to: &writer)
        writer.key("minimal")
        writer.beginObject()
        if let text = minimal.text {
            writer.key("text")
            writer.string(text)
        }
        writer.endObject()
        if let pickupPoint {
            writer.key("pickupPoint")
            writer.string(pickupPoint)
        }
        writer.key("progress")
        try writer.number(progress)
        writer.key("small")
        writer.beginObject()
        writer.key("status")
        writer.string(small.status)
        writer.key("title")
        writer.string(small.title)
        writer.endObject()
        writer.key("status")
        writer.string(status.rawValue)
        writer.key("step")
        writer.number(step)
        writer.key("stepCount")
        writer.number(stepCount)
        writer.key("symbolName")
        writer.string(symbolName)
        writer.endObject()
    }
}

extension OrderActivityAttributes.ContentState.LockScreen {
    func encode(to writer: inout JSONWriter) {
        writer.beginObject()
        if let detail {
            writer.key("detail")
            writer.string(detail)
        }
        if let etaAbsolute {
            writer.key("etaAbsolute")
            writer.string(etaAbsolute)
        }
        if let etaRelative {
            writer.key("etaRelative")
            writer.string(etaRelative)
        }
        writer.key("subtitle")
        writer.string(subtitle)
        writer.key("title")
        writer.string(title)
        writer.endObject()
    }
}
