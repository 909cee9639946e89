import CLibPQ

/// Reading libpq results: rows in text format, and the server's error as a `PostgresError`.
enum PostgresResult {
    /// The rows of a successful result (empty for commands); frees nothing.
    static func rows(_ result: OpaquePointer) -> [PostgresRow] {
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { return [] }
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        let columns = PostgresColumns(names: (0..<columnCount).map { String(cString: PQfname(result, $0)) })
        var rows: [PostgresRow] = []
        rows.reserveCapacity(Int(rowCount))
        for r in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(Int(columnCount))
            for c in 0..<columnCount {
                values.append(PQgetisnull(result, r, c) == 1 ? nil : String(cString: PQgetvalue(result, r, c)))
            }
            rows.append(PostgresRow(columns: columns, values: values))
        }
        return rows
    }

    /// Whether the result is a success (a command, rows, or an empty statement).
    static func succeeded(_ result: OpaquePointer) -> Bool {
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return true
        default: return false
        }
    }

    /// What a value of `PQgetResult` is to a flight; a failure is taken as the server's (the caller checked the
    /// connection is good).
    static func kind(_ result: OpaquePointer?) -> PostgresFlight.Result {
        guard let result else { return .end }
        switch PQresultStatus(result) {
        case PGRES_PIPELINE_SYNC: return .sync
        case PGRES_PIPELINE_ABORTED: return .aborted
        default: return succeeded(result) ? .succeeded : .failed(error(result, connectionOK: true))
        }
    }

    /// Whether the server began a COPY, which this driver does not speak.
    static func isCopy(_ result: OpaquePointer) -> Bool {
        switch PQresultStatus(result) {
        case PGRES_COPY_IN, PGRES_COPY_OUT, PGRES_COPY_BOTH: return true
        default: return false
        }
    }

    /// The failure a result reports; `connectionOK` tells a broken connection from a refused statement.
    static func error(_ result: OpaquePointer, connectionOK: Bool) -> PostgresError {
        let sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        let detail = PQresultErrorMessage(result).map { String(cString: $0) } ?? ""
        if !connectionOK { return PostgresError(.connectionFailed, sqlState: sqlState, detail: detail) }
        if sqlState == PostgresError.SQLState.queryCanceled { return PostgresError(.canceled, sqlState: sqlState, detail: detail) }
        var error = PostgresError(.server, sqlState: sqlState, detail: detail)
        // PG_DIAG_CONSTRAINT_NAME ('n').
        error.constraint = PQresultErrorField(result, Int32(UInt8(ascii: "n"))).map { String(cString: $0) }
        return error
    }
}
