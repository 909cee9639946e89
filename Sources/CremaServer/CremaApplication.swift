import CremaClock
import CremaCore
import CremaDelivery
public import CremaPostgres
public import CremaService
import CremaStore
import Foundation
public import Hummingbird
public import Logging
public import NIOCore
public import NIOPosix
public import Prometheus
public import ServiceLifecycle

/// The composition root, used by `crema serve` and by the tests alike: one pool, the order service over it,
/// the router with its middleware, and the background services, wired in dependency order.
public enum CremaApplication {
    /// What the router needs; built once per process (or per test).
    public struct Dependencies: Sendable {
        public var pool: PostgresPool
        public var service: OrderService
        public var migrator: Migrator
        public var keys: APIKeys
        public var registry: PrometheusCollectorRegistry
        /// Wakes the dashboard streams; `build` runs it as a service, after the database's change feed.
        public var streamHub: StreamHub
        /// How long a quiet stream waits before sending a `: keepalive` comment.
        public var streamHeartbeat: Duration = .seconds(15)
        /// Verifies customer tokens for the `/v1/me` routes; nil refuses every customer token.
        public var customerTokens: CustomerTokenVerifier?
        /// Tenants, apps, APNs keys and API keys; its master key (nil by default) seals `.p8` keys.
        public var admin: AdminService
        /// Every tenant's customer token verifiers; `build`/`router` make one from `customerTokens` and the database
        /// unless a test sets its own.
        public var customerTokenDirectory: CustomerTokenDirectory?
        /// Called after an administrator changed an APNs key, so this instance's dispatcher reloads at once
        /// (other instances reload on their own minute tick).
        public var apnsKeysChanged: @Sendable () async -> Void = {}
        /// Webhook endpoints; by default without a master key (registration refused) and refusing private addresses.
        public var webhooks: WebhookService
        /// Every API key's and customer's request allowance (docs/limits.md), at the rates of `service.limits`.
        public var rateLimiter = RequestRateLimiter()
        /// Generated API keys as last read (a few seconds), shared by authentication and the routes that revoke them.
        public var apiKeyCache = APIKeyCache()

        public init(
            pool: PostgresPool, service: OrderService, migrator: Migrator, keys: APIKeys, registry: PrometheusCollectorRegistry = .init(),
            streamHub: StreamHub? = nil
        ) {
            self.streamHub = streamHub
                ?? StreamHub(changes: service.database.changes, stream: service.database.stream, clock: service.clock, logger: Logger(label: "crema.stream"))
            self.pool = pool
            self.service = service
            self.migrator = migrator
            self.keys = keys
            self.registry = registry
            self.admin = AdminService(database: service.database, masterKey: nil, clock: service.clock)
            self.webhooks = WebhookService.resolvingDNS(
                database: service.database, limits: service.limits, masterKey: nil, allowsPrivateAddresses: false, clock: service.clock)
        }
    }

    /// Every route with its middleware: metrics and access log outermost (they see the final status), then
    /// errors, then auth.
    public static func router(_ dependencies: Dependencies) -> Router<CremaRequestContext> {
        let router = Router(context: CremaRequestContext.self)
        let routes = RouteTable()
        router.add(middleware: RequestObservabilityMiddleware(registry: dependencies.registry))
        router.add(
            middleware: ErrorMiddleware(routes: routes, limitMetrics: LimitMetrics(registry: dependencies.registry), clock: dependencies.service.clock))
        let customers = dependencies.customerTokenDirectory ?? customerTokenDirectory(dependencies)
        router.add(
            middleware: AuthenticationMiddleware(
                keys: dependencies.keys,
                generated: APIKeyVerifier(keys: dependencies.service.database.apiKeys, cache: dependencies.apiKeyCache, clock: dependencies.service.clock),
                customers: customers))
        router.add(
            middleware: RateLimitMiddleware(
                limiter: dependencies.rateLimiter, limits: dependencies.service.limits, clock: dependencies.service.clock))
        OperationsRoutes(pool: dependencies.pool, migrator: dependencies.migrator, registry: dependencies.registry).register(on: router)
        StoreRoutes(service: dependencies.service).register(on: router)
        OrderRoutes(service: dependencies.service).register(on: router)
        TokenRoutes(service: dependencies.service).register(on: router)
        CustomerRoutes(service: dependencies.service).register(on: router)
        ErasureRoutes(service: dependencies.service).register(on: router)
        WebhookRoutes(webhooks: dependencies.webhooks).register(on: router)
        StreamRoutes(
            changes: dependencies.service.database.stream, hub: dependencies.streamHub, limits: dependencies.service.limits,
            heartbeat: dependencies.streamHeartbeat
        ).register(on: router)
        BoardRoutes().register(on: router)
        AdminRoutes(
            admin: dependencies.admin, apnsKeysChanged: dependencies.apnsKeysChanged, customerTokensChanged: { await customers.reload() },
            limits: dependencies.service.limits, apiKeyCache: dependencies.apiKeyCache
        ).register(on: router)
        routes.record(router.routes)
        return router
    }

    /// Every tenant's customer token verifiers, from `customerTokens` and the database.
    static func customerTokenDirectory(_ dependencies: Dependencies) -> CustomerTokenDirectory {
        CustomerTokenDirectory(
            configured: dependencies.customerTokens, settings: dependencies.service.database.customerTokenSettings,
            masterKey: dependencies.admin.masterKey, logger: Logger(label: "crema.customers"),
            clock: dependencies.customerTokens?.clock ?? dependencies.service.clock)
    }

    /// The HTTP application plus the services that live as long as it does (the database's change feed, the stream
    /// hub, and `services`). `onListening` gets the bound port once the server accepts connections (the real one when
    /// `port` is 0); `limits` bound what each connection may take (read and idle timeouts, the connection cap);
    /// `eventLoopGroup` runs the server's connections (tests give it one loop, to know the order of events).
    public static func build(
        _ dependencies: Dependencies, host: String, port: Int, logger: Logger, limits: ConnectionLimits = .init(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        services: [any Service] = [], onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) -> CremaHTTPApplication {
        var dependencies = dependencies
        // Made here rather than in `router`, so that it also runs as a service: its reloads are its own, never a request's.
        let customers = dependencies.customerTokenDirectory ?? customerTokenDirectory(dependencies)
        dependencies.customerTokenDirectory = customers
        let httpRouter = router(dependencies)
        let routes = RouteTable()
        routes.record(httpRouter.routes)
        // Graceful shutdown stops services in reverse order: the pool closer, listed first, outlives the rest, and the
        // change feed outlives its subscribers (the stream hub, a dispatcher in `services`) to announce the last changes.
        var background: [any Service] = [
            PoolCloser(pool: dependencies.pool), IdempotencyJanitor(idempotency: dependencies.service.database.idempotency, clock: dependencies.service.clock, logger: logger),
        ]
        if let changes = dependencies.service.database.changes { background.append(changes) }
        let pipeline = ConnectionPipeline(
            limits: limits, routes: routes, gate: ConnectionGate(limit: limits.maxConnections),
            metrics: ConnectionMetrics(registry: dependencies.registry), logger: logger)
        return CremaHTTPApplication(
            responder: httpRouter.buildResponder(), logger: logger, services: background + [dependencies.streamHub, customers] + services, host: host,
            port: port, pipeline: pipeline, eventLoopGroup: eventLoopGroup, clock: dependencies.service.clock, onListening: onListening)
    }
}

/// Deletes Idempotency-Keys older than the 24-hour window, every ten minutes. Correctness does not depend
/// on it (an expired key is reclaimed on use); it keeps the table small.
struct IdempotencyJanitor: Service, CustomStringConvertible {
    let idempotency: IdempotencyRepository
    let clock: CremaClock
    let logger: Logger
    var description: String { "IdempotencyJanitor" }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let count = try await idempotency.pruneExpired()
                    if count > 0 { logger.info("pruned expired idempotency keys", metadata: ["count": "\(count)"]) }
                } catch {
                    if Task.isCancelled { break }  // stopping: the prune met a closing pool, not a fault
                    logger.warning("could not prune idempotency keys", metadata: ["error": "\(error)"])
                }
                try? await clock.sleep(for: .seconds(600))
            }
        }
    }
}

/// Closes the database pool once the HTTP server has drained (services stop in reverse order).
struct PoolCloser: Service, CustomStringConvertible {
    let pool: PostgresPool
    var description: String { "PoolCloser" }

    func run() async throws {
        try? await gracefulShutdown()
        await pool.close()
    }
}
