/// What a connection knows a prepared statement by: a kept ``PostgresStatement``'s identity (no text hashed), or
/// the text of a statement built per call.
enum PostgresPreparedKey: Hashable {
    case statement(Int)
    case text(String)
}
