/// One line of an order as the POS sent it; kept verbatim so the cup and the screen agree.
public struct OrderItem: Sendable, Hashable, Codable {
    public var name: String
    public var size: String?
    public var quantity: Int
    public var modifiers: [String]

    public init(name: String, size: String? = nil, quantity: Int = 1, modifiers: [String] = []) {
        self.name = name
        self.size = size
        self.quantity = quantity
        self.modifiers = modifiers
    }
}
