/// `/health/live`'s body: the process answers.
public struct Liveness: Codable, Sendable {
    public var status: String

    public init(status: String) { self.status = status }
}

/// `/health/ready`'s body; `migrations` is always present, both lists empty when the database could not be read
/// (`database` then says `unreachable`, or `unavailable` for another failure).
public struct Readiness: Codable, Sendable {
    public var status: String
    public var database: String
    public var migrations: Migrations

    /// Which schema migrations the database has, and which it still needs.
    public struct Migrations: Codable, Sendable {
        public var applied: [Int]
        public var pending: [Int]

        public init(applied: [Int], pending: [Int]) {
            self.applied = applied
            self.pending = pending
        }
    }

    public init(status: String, database: String, migrations: Migrations) {
        self.status = status
        self.database = database
        self.migrations = migrations
    }
}
