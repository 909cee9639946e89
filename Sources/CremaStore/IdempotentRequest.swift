/// The identity of a POST for idempotency: who sent it, with which key, to which path, with which body.
public struct IdempotentRequest: Sendable {
    /// The caller's role; keys are scoped to it.
    public var scope: String
    public var key: String
    public var path: String
    /// The request body in canonical JSON (the decoded request re-encoded with sorted keys), so
    /// formatting and key order do not make two equal requests differ.
    public var body: String

    public init(scope: String, key: String, path: String, body: String) {
        self.scope = scope
        self.key = key
        self.path = path
        self.body = body
    }
}

/// What a command answers: the HTTP status and JSON body, either new or the stored first answer.
public struct CommandResponse: Sendable, Equatable {
    public var status: Int
    public var body: String
    /// True when this is the stored answer to an earlier request with the same key.
    public var replayed: Bool

    public init(status: Int, body: String, replayed: Bool) {
        self.status = status
        self.body = body
        self.replayed = replayed
    }
}
