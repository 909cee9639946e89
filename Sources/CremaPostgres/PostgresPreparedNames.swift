/// Which statements one connection has prepared, and under which names: a kept ``PostgresStatement`` by its identity,
/// any other statement by its text. Pure, so its rules (a limit per connection, one-offs run unnamed, every name
/// forgotten when the server says the names are gone or stale, or when the session is reset) are tested without a
/// server; ``PostgresConnectionStateMachine`` holds it.
struct PostgresPreparedNames {
    /// How many distinct statements are kept prepared; later ones run unnamed.
    let limit: Int
    /// Statements longer than this run unnamed (they are one-offs: migrations, generated batches).
    let maxLength: Int
    /// The server's names for the statements it accepted as prepared on this session.
    private(set) var names: [PostgresPreparedKey: String] = [:]
    /// Never reset, so a name is never given twice on one connection, not even across a reset.
    private(set) var serial = 0

    init(limit: Int, maxLength: Int) {
        self.limit = limit
        self.maxLength = maxLength
    }

    /// The name `key`'s statement is prepared under on this session, if the server accepted it.
    func name(for key: PostgresPreparedKey) -> String? { names[key] }

    /// A fresh name to prepare a statement of `length` UTF-8 bytes under, or nil when it runs unnamed: there is no
    /// room left, or it is a one-off. Statements being prepared in the flight now going out do not count yet.
    mutating func newName(forLength length: Int) -> String? {
        guard names.count < limit, length <= maxLength else { return nil }
        serial += 1
        return "crema_\(serial)"
    }

    /// A flight ended: remember what the server prepared in it, or forget every name when the flight's error says
    /// they are gone (26000, after a `DISCARD`) or stale (0A000, a schema change under a `SELECT *`).
    mutating func flightEnded(prepared: [(key: PostgresPreparedKey, name: String)], error: PostgresError?) {
        if let state = error?.sqlState, state == "26000" || state == "0A000" {
            names = [:]
            return
        }
        for (key, name) in prepared { names[key] = name }
    }

    /// The session was reset: the server has forgotten every name.
    mutating func forgetAll() { names = [:] }
}
