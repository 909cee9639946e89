/// Reading into a `JSONValue` without a switch at every step: the simulator's payload rules, `barista`'s
/// tolerant reading of the API, and tests all walk JSON this way.
extension JSONValue {
    /// The member `key` of an object; nil for a missing key or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// A number that is a whole `Int`; nil otherwise.
    public var intValue: Int? {
        if case .number(let number) = self { return Int(exactly: number) }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    public var isObject: Bool {
        if case .object = self { return true }
        return false
    }

    /// True for numbers only: `true` decodes as `.bool`, never as 1.
    public var isNumber: Bool {
        if case .number = self { return true }
        return false
    }
}
