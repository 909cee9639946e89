public import CremaClock
public import CremaPostgres
public import Foundation

/// An app's APNs signing key as stored: sealed bytes or a file path, never the `.p8` in clear.
public struct StoredAPNsKey: Sendable, Hashable {
    /// How the `.p8` is kept.
    public enum Material: Sendable, Hashable {
        /// AES-256-GCM under `CREMA_MASTER_KEY` (nonce, ciphertext and tag together).
        case sealed([UInt8])
        /// A path on the dispatcher's machine.
        case file(String)
    }

    /// Whether the key signs: `active` ones do (the newest not rejected), `inactive` wait, `retired` never again.
    public enum State: String, Sendable, Hashable, CaseIterable {
        case active, inactive, retired
    }

    public var tenant: String
    public var bundleID: String
    public var keyID: String
    public var teamID: String
    public var material: Material
    public var fingerprint: String
    public var state: State
    public var createdAt: Date
    public var activatedAt: Date?
    public var retiredAt: Date?
    /// When APNs answered InvalidProviderToken for this key, and what it said.
    public var rejectedAt: Date?
    public var rejectedReason: String?
}

/// Apps' APNs keys: added, activated and retired by administrators, read by every dispatcher's keyring.
public struct APNsKeyRepository: Repository {
    public let pool: PostgresPool

    /// The process's one clock: every time these statements write or compare is its time, bound as a parameter.
    public let clock: CremaClock

    public init(pool: PostgresPool, clock: CremaClock) {
        self.pool = pool
        self.clock = clock
    }

    private static let columns: StaticString = """
        k.tenant_id, k.bundle_id, k.key_id, a.team_id, encode(k.sealed_p8, 'base64') AS sealed, k.p8_path, k.fingerprint,
        k.state, k.created_at, k.activated_at, k.retired_at, k.rejected_at, k.rejected_reason
        """

    /// Adds a key to an app (or replaces a key with the same id, which clears an earlier rejection); `active`
    /// makes it the app's signing key at once.
    public func add(
        tenant: String, bundleID: String, keyID: String, material: StoredAPNsKey.Material, fingerprint: String, active: Bool
    ) async throws(StoreError) -> (key: StoredAPNsKey, created: Bool) {
        var sealed: String?
        var path: String?
        switch material {
        case .sealed(let bytes): sealed = Data(bytes).base64EncodedString()
        case .file(let file): path = file
        }
        let state = active ? StoredAPNsKey.State.active : .inactive
        return try await database {
            try await pool.withTransaction { connection in
                guard try await !connection.query("SELECT 1 FROM apps WHERE tenant_id = \(tenant) AND bundle_id = \(bundleID)").isEmpty else {
                    throw StoreError.unknownApp(bundleID)
                }
                let now = clock.now
                let rows = try await connection.query(
                    """
                    INSERT INTO apns_keys (tenant_id, bundle_id, key_id, sealed_p8, p8_path, fingerprint, state, activated_at, created_at)
                    VALUES (\(tenant), \(bundleID), \(keyID), decode(\(sealed), 'base64'), \(path), \(fingerprint), \(state.rawValue),
                            CASE WHEN \(active) THEN \(now)::timestamptz END, \(now))
                    ON CONFLICT (tenant_id, bundle_id, key_id) DO UPDATE
                        SET sealed_p8 = EXCLUDED.sealed_p8, p8_path = EXCLUDED.p8_path, fingerprint = EXCLUDED.fingerprint,
                            state = EXCLUDED.state, activated_at = EXCLUDED.activated_at, retired_at = NULL,
                            rejected_at = NULL, rejected_reason = NULL
                    RETURNING (xmax = 0) AS created
                    """)
                let created = try rows[0].decode("created", as: Bool.self)
                let key = try await Self.key(tenant: tenant, bundleID: bundleID, keyID: keyID, on: connection)
                return (key!, created)
            }
        }
    }

    /// Makes a key the app's signing key again (clearing a rejection) or retires it for good. Nil: no such key.
    public func setState(
        _ state: StoredAPNsKey.State, tenant: String, bundleID: String, keyID: String
    ) async throws(StoreError) -> StoredAPNsKey? {
        try await database {
            try await pool.withTransaction { connection in
                let rows = try await connection.query(
                    """
                    UPDATE apns_keys SET state = \(state.rawValue),
                           activated_at = CASE WHEN \(state.rawValue) = 'active' THEN \(clock.now)::timestamptz ELSE activated_at END,
                           retired_at = CASE WHEN \(state.rawValue) = 'retired' THEN \(clock.now)::timestamptz END,
                           rejected_at = CASE WHEN \(state.rawValue) = 'active' THEN NULL ELSE rejected_at END,
                           rejected_reason = CASE WHEN \(state.rawValue) = 'active' THEN NULL ELSE rejected_reason END
                    WHERE tenant_id = \(tenant) AND bundle_id = \(bundleID) AND key_id = \(keyID)
                    RETURNING 1
                    """)
                guard !rows.isEmpty else { return nil }
                return try await Self.key(tenant: tenant, bundleID: bundleID, keyID: keyID, on: connection)
            }
        }
    }

    /// Marks a key APNs refused: it signs nothing more until an administrator activates it (or another) again.
    /// Only the material that was refused (`fingerprint`): a key uploaded again under the same id meanwhile stays.
    public func reject(tenant: String, bundleID: String, keyID: String, fingerprint: String, reason: String) async throws(StoreError) {
        try await database {
            try await pool.withConnection { connection in
                _ = try await connection.query(
                    """
                    UPDATE apns_keys SET rejected_at = \(clock.now), rejected_reason = \(reason)
                    WHERE tenant_id = \(tenant) AND bundle_id = \(bundleID) AND key_id = \(keyID) AND fingerprint = \(fingerprint)
                      AND rejected_at IS NULL
                    """)
            }
        }
    }

    /// A tenant's keys, every app, newest first within each app.
    public func keys(tenant: String) async throws(StoreError) -> [StoredAPNsKey] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT \(unescaped: Self.columns) FROM apns_keys k JOIN apps a USING (tenant_id, bundle_id)
                    WHERE k.tenant_id = \(tenant) ORDER BY k.bundle_id, k.created_at DESC, k.key_id
                    """
                ).map(Self.key(from:))
            }
        }
    }

    /// The key that signs for each app now: the most recently activated active key APNs has not rejected. An app is
    /// its tenant and bundle id: two tenants with the same bundle id each get their own key.
    public func signingKeys() async throws(StoreError) -> [StoredAPNsKey] {
        try await database {
            try await pool.withConnection { connection in
                try await connection.query(
                    """
                    SELECT DISTINCT ON (k.tenant_id, k.bundle_id) \(unescaped: Self.columns)
                    FROM apns_keys k JOIN apps a USING (tenant_id, bundle_id)
                    WHERE k.state = 'active' AND k.rejected_at IS NULL
                    ORDER BY k.tenant_id, k.bundle_id, k.activated_at DESC NULLS LAST, k.created_at DESC
                    """
                ).map(Self.key(from:))
            }
        }
    }

    static func key(tenant: String, bundleID: String, keyID: String, on connection: PostgresConnection) async throws -> StoredAPNsKey? {
        try await connection.query(
            """
            SELECT \(unescaped: columns) FROM apns_keys k JOIN apps a USING (tenant_id, bundle_id)
            WHERE k.tenant_id = \(tenant) AND k.bundle_id = \(bundleID) AND k.key_id = \(keyID)
            """
        ).first.map(key(from:))
    }

    static func key(from row: PostgresRow) throws -> StoredAPNsKey {
        let material: StoredAPNsKey.Material
        if let sealed = try row.decode("sealed", as: String?.self) {
            // PostgreSQL's base64 output breaks lines every 76 characters.
            guard let bytes = Data(base64Encoded: sealed.filter { !$0.isNewline }) else {
                throw PostgresError(.decoding, detail: "sealed_p8 is not base64")
            }
            material = .sealed(Array(bytes))
        } else {
            material = .file(try row.decode("p8_path"))
        }
        guard let state = StoredAPNsKey.State(rawValue: try row.decode("state")) else {
            throw PostgresError(.decoding, detail: "unknown APNs key state")
        }
        return StoredAPNsKey(
            tenant: try row.decode("tenant_id"), bundleID: try row.decode("bundle_id"), keyID: try row.decode("key_id"),
            teamID: try row.decode("team_id"), material: material, fingerprint: try row.decode("fingerprint"), state: state,
            createdAt: try row.decode("created_at"), activatedAt: try row.decode("activated_at", as: Date?.self),
            retiredAt: try row.decode("retired_at", as: Date?.self), rejectedAt: try row.decode("rejected_at", as: Date?.self),
            rejectedReason: try row.decode("rejected_reason", as: String?.self))
    }
}
