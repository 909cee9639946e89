public import Foundation

/// `POST /v1/stream/tickets`: the store a browser's `EventSource` wants to follow.
public struct StreamTicketRequest: Codable, Sendable {
    public var storeID: String
    enum CodingKeys: String, CodingKey { case storeID = "store_id" }

    public init(storeID: String) { self.storeID = storeID }
}

/// A single-use ticket that stands in for the dashboard key on `GET /v1/stream?…&ticket=`.
public struct StreamTicketResponse: Codable, Sendable {
    public var ticket: String
    public var storeID: String
    public var expiresAt: Date
    enum CodingKeys: String, CodingKey { case ticket, storeID = "store_id", expiresAt = "expires_at" }

    public init(ticket: String, storeID: String, expiresAt: Date) {
        self.ticket = ticket
        self.storeID = storeID
        self.expiresAt = expiresAt
    }
}
