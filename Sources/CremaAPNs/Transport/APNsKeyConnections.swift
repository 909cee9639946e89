import NIOCore
import Synchronization

/// One signing key's connections: one per APNs host it sends to (production and sandbox are two hosts), never
/// shared with another key, since a connection that changes provider tokens is refused or throttled by APNs.
final class APNsKeyConnections: Sendable {
    private let connector: APNsConnector
    private let state = Mutex(State())

    private struct State {
        var links: [APNsEndpoint: APNsHostLink] = [:]
        var closed = false
    }

    init(connector: APNsConnector) {
        self.connector = connector
    }

    /// The link to `endpoint`, made on first use.
    func link(to endpoint: APNsEndpoint) throws(APNsClientError) -> APNsHostLink {
        try state.withLock { state throws(APNsClientError) in
            guard !state.closed else { throw .shutDown }
            if let link = state.links[endpoint] { return link }
            let link = APNsHostLink(endpoint: endpoint, connector: connector)
            state.links[endpoint] = link
            return link
        }
    }

    /// Closes every connection; later sends fail with ``APNsClientError/shutDown``. The futures complete when
    /// the connections have closed.
    @discardableResult
    func close() -> [EventLoopFuture<Void>] {
        let links = state.withLock { state in
            state.closed = true
            defer { state.links = [:] }
            return Array(state.links.values)
        }
        return links.flatMap { $0.close() }
    }
}
