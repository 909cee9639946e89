public import CremaAPNs
public import CremaAPNsSimulator
public import ServiceLifecycle

/// Keeps the APNs client, and the built-in simulator behind it, open for as long as the service group runs, then
/// closes them. Listed before the services that send through them, it stops after them.
public struct APNsService: Service {
    let client: APNsClient?
    let simulator: APNsSimulator?

    public init(client: APNsClient?, simulator: APNsSimulator?) {
        self.client = client
        self.simulator = simulator
    }

    public func run() async throws {
        // Returns on graceful shutdown, or throws when the group is cancelled: closing is the same either way.
        try? await gracefulShutdown()
        try await close()
    }

    /// Closes them without running: a process that failed before its services started.
    public func close() async throws {
        try? await client?.shutdown()
        try await simulator?.shutdown()
    }
}
