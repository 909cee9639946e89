public import CremaPostgres

/// What every repository shares: the pool, and one way of turning database failures into `StoreError`.
public protocol Repository: Sendable {
    var pool: PostgresPool { get }
}

extension Repository {
    /// Runs database work, translating failures into `StoreError`.
    func database<T: Sendable>(_ body: () async throws -> sending T) async throws(StoreError) -> T {
        try await StoreError.translating(body)
    }
}

extension StoreError {
    /// Runs database work, translating failures into `StoreError` (a `StoreError` thrown inside passes through).
    static func translating<T: Sendable>(_ body: () async throws -> sending T) async throws(StoreError) -> T {
        do {
            return try await body()
        } catch let error as StoreError {
            throw error
        } catch let error as PostgresError {
            throw .database(error)
        } catch {
            throw .database(PostgresError(.server, detail: "\(error)"))
        }
    }
}
