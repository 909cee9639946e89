extension JSONValue {
    /// As `JSONEncoder` with `.sortedKeys` writes it (keys in code-point order; whole numbers below 10^15 as integers,
    /// as `encode(to:)` chooses), written directly: an event's data is stored with every event.
    public func encode(to writer: inout JSONWriter) throws(JSONWriterError) {
        switch self {
        case .null: writer.null()
        case .bool(let value): writer.bool(value)
        case .number(let value):
            if value.rounded() == value, abs(value) < 1e15 { writer.number(Int(value)) } else { try writer.number(value) }
        case .string(let value): writer.string(value)
        case .array(let values):
            writer.beginArray()
            for value in values { try value.encode(to: &writer) }
            writer.endArray()
        case .object(let members):
            writer.beginObject()
            for (key, value) in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                writer.key(escaping: key)
                try value.encode(to: &writer)
            }
            writer.endObject()
        }
    }
}
