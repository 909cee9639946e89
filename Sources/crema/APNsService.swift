import CremaAPNs
import CremaAPNsSimulator
import ServiceLifecycle

/// Keeps the APNs client, and the built-in simulator behind it, open for as long as the service group runs, then
/// closes them. Listed before the services that send through them, it stops after them.
struct APNsService: Service {
    let client: APNsClient?
    let simulator: APNsSimulator?

    func run() async throws {
        // Returns on graceful shutdown, or throws when the group is cancelled: closing is the same either way.
        try? await gracefulShutdown()
        try? await client?.shutdown()
        try await simulator?.shutdown()
    }
}
