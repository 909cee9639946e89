public import Foundation

/// The part of an open order the pickup board shows: no name, no items, nothing personal.
public struct BoardOrder: Sendable, Hashable {
    public var number: Int
    public var state: OrderState
    public var eta: Date
    /// The customer's BCP 47 tag, counted (not shown) to pick the board's language.
    public var locale: String
    public var placedAt: Date

    public init(number: Int, state: OrderState, eta: Date, locale: String, placedAt: Date) {
        self.number = number
        self.state = state
        self.eta = eta
        self.locale = locale
        self.placedAt = placedAt
    }
}
