import CLibPQ
import Foundation

// Opening and resetting a libpq connection block: these run off the cooperative pool only (on a dispatch queue, or
// the listener's own thread).
extension PostgresConnection {
    /// No statement runs longer, and no lock is waited for longer, than this: a stuck query frees its slot.
    /// Migrations lift the statement limit for their own transaction.
    static let statementTimeoutSeconds = 30
    static let lockTimeoutSeconds = 10

    /// A handle passed to the blocking reset on another thread, while no one else uses it.
    struct UnsafeHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Opens a libpq connection (blocking: call it off the cooperative pool) with Crema's connection
    /// defaults. Keywords before `dbname` are defaults that the conninfo's own values override. The connect
    /// timeout default yields to PGCONNECT_TIMEOUT; keepalives notice a peer that vanished. The result may
    /// be NULL (out of memory) or a handle whose `PQstatus` is bad; the caller frees it.
    static func connectHandle(_ conninfo: String, applicationName: String = "crema") -> OpaquePointer? {
        var keywords = ["fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count"]
        var values = [applicationName, "1", "30", "10", "3"]
        if getenv("PGCONNECT_TIMEOUT") == nil {
            keywords.append("connect_timeout")
            values.append("5")
        }
        keywords.append("dbname")
        values.append(conninfo)
        return PostgresCStrings.withTerminated(keywords) { k in PostgresCStrings.withTerminated(values) { v in PQconnectdbParams(k, v, 1) } }
    }

    /// Opens a connection and sets its session up (blocking).
    static func openHandle(_ conninfo: String) -> Result<OpaquePointer, PostgresError> {
        let handle = connectHandle(conninfo)
        guard let handle else { return .failure(PostgresError(.connectionFailed, detail: "out of memory")) }
        guard PQstatus(handle) == CONNECTION_OK else {
            let failure = PostgresConnectFailure(handle: handle, conninfo: conninfo)
            PQfinish(handle)
            return .failure(PostgresError(.connectionFailed, detail: failure.reason, connect: failure))
        }
        if let failure = configureSession(handle) {
            PQfinish(handle)
            return .failure(failure)
        }
        return .success(handle)
    }

    /// `PQreset` and the session set-up (blocking): nil when the session is set up again, else why not.
    static func reset(_ handle: UnsafeHandle) -> PostgresError? {
        let handle = handle.pointer
        PQsetnonblocking(handle, 0)
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else { return PostgresError(.connectionFailed, detail: message(handle)) }
        return configureSession(handle)
    }

    /// Fixes the session settings that text decoding relies on, and the time limits above (blocking, at open).
    private static func configureSession(_ handle: OpaquePointer) -> PostgresError? {
        let result = PQexec(
            handle,
            "SET TimeZone TO 'UTC'; SET DateStyle TO 'ISO, YMD'; SET extra_float_digits TO 3; SET client_min_messages TO warning; "
                + "SET statement_timeout TO '\(statementTimeoutSeconds)s'; SET lock_timeout TO '\(lockTimeoutSeconds)s'; "
                + "SET idle_in_transaction_session_timeout TO '60s'")
        guard let result else { return PostgresError(.connectionFailed, detail: message(handle)) }
        defer { PQclear(result) }
        return PostgresResult.succeeded(result) ? nil : PostgresResult.error(result, connectionOK: PQstatus(handle) == CONNECTION_OK)
    }

    static func message(_ handle: OpaquePointer) -> String {
        PQerrorMessage(handle).map { String(cString: $0) }?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }
}
