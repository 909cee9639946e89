/// A localized alert, already cut to its budgets: the same words serve an activity's alerting update and a
/// plain notification, so the customer reads one message whichever way it arrives.
public struct AlertText: Sendable, Hashable, Codable {
    public var title: String
    public var body: String

    public init(title: String, body: String) {
        self.title = title
        self.body = body
    }
}
