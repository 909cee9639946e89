import CremaClock
import CremaCore
public import CremaService
public import CremaSettings
import Foundation
public import Hummingbird
public import Logging
public import NIOCore
public import NIOPosix
public import Prometheus
public import ServiceLifecycle

/// The HTTP side of a process: the router with its middleware over the parts `CremaProcess` (the composition root,
/// in CremaRuntime) built, and the services only the HTTP side needs (the stream hub, the customer token keys).
public enum CremaApplication {
    /// What the router needs; built once per process (or per test).
    public struct Dependencies: Sendable {
        /// The database as the operational routes report it (readiness, the pool gauge).
        public var health: DatabaseHealth
        public var service: OrderService
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
        /// Webhook endpoints, as the API registers and lists them.
        public var webhooks: WebhookService
        /// Stores' boards on APNs broadcast channels (docs/broadcast.md).
        public var broadcasts: BroadcastService
        /// Every API key's and customer's request allowance (docs/limits.md), at the rates of `service.limits`.
        public var rateLimiter = RequestRateLimiter()
        /// Generated API keys as last read (a few seconds), shared by authentication and the routes that revoke them.
        public var apiKeyCache = APIKeyCache()
        /// The process's own services (`CremaProcess.services`, in its start order); `build` runs them before the
        /// HTTP side's, so they stop after it.
        public var processServices: [any Service] = []

        /// The parts come from `CremaProcess` (its database's health, order service, administration and webhooks).
        public init(
            health: DatabaseHealth, service: OrderService, admin: AdminService, webhooks: WebhookService, broadcasts: BroadcastService,
            keys: APIKeys, registry: PrometheusCollectorRegistry, streamHub: StreamHub? = nil
        ) {
            self.streamHub = streamHub ?? StreamHub(service: service, logger: Logger(label: "crema.stream"))
            self.health = health
            self.service = service
            self.keys = keys
            self.registry = registry
            self.admin = admin
            self.webhooks = webhooks
            self.broadcasts = broadcasts
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
                generated: dependencies.admin.apiKeyVerifier(cache: dependencies.apiKeyCache, clock: dependencies.service.clock),
                customers: customers))
        router.add(
            middleware: RateLimitMiddleware(
                limiter: dependencies.rateLimiter, limits: dependencies.service.limits, clock: dependencies.service.clock))
        OperationsRoutes(health: dependencies.health, registry: dependencies.registry).register(on: router)
        StoreRoutes(service: dependencies.service).register(on: router)
        OrderRoutes(service: dependencies.service).register(on: router)
        TokenRoutes(service: dependencies.service).register(on: router)
        CustomerRoutes(service: dependencies.service).register(on: router)
        RelevanceRoutes(service: dependencies.service).register(on: router)
        ErasureRoutes(service: dependencies.service).register(on: router)
        WebhookRoutes(webhooks: dependencies.webhooks).register(on: router)
        StreamRoutes(
            service: dependencies.service, hub: dependencies.streamHub, limits: dependencies.service.limits,
            heartbeat: dependencies.streamHeartbeat
        ).register(on: router)
        BoardRoutes().register(on: router)
        BroadcastRoutes(broadcasts: dependencies.broadcasts, service: dependencies.service).register(on: router)
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
            configured: dependencies.customerTokens, settings: dependencies.admin.customerTokenSettingsSource,
            masterKey: dependencies.admin.masterKey, logger: Logger(label: "crema.customers"),
            clock: dependencies.customerTokens?.clock ?? dependencies.service.clock)
    }

    /// The HTTP application plus the services that live as long as it does: the process's first
    /// (`processServices`), then the stream hub and the customer token keys, and the server last. `onListening` gets the bound port once the server accepts connections (the real one when
    /// `port` is 0); `limits` bound what each connection may take (read and idle timeouts, the connection cap);
    /// `eventLoopGroup` runs the server's connections (tests give it one loop, to know the order of events).
    public static func build(
        _ dependencies: Dependencies, host: String, port: Int, logger: Logger, limits: ConnectionLimits = .init(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) -> CremaHTTPApplication {
        var dependencies = dependencies
        // Made here rather than in `router`, so that it also runs as a service: its reloads are its own, never a request's.
        let customers = dependencies.customerTokenDirectory ?? customerTokenDirectory(dependencies)
        dependencies.customerTokenDirectory = customers
        let httpRouter = router(dependencies)
        let routes = RouteTable()
        routes.record(httpRouter.routes)
        let pipeline = ConnectionPipeline(
            limits: limits, routes: routes, gate: ConnectionGate(limit: limits.maxConnections),
            metrics: ConnectionMetrics(registry: dependencies.registry), logger: logger)
        return CremaHTTPApplication(
            responder: httpRouter.buildResponder(), logger: logger, services: dependencies.processServices + [dependencies.streamHub, customers], host: host,
            port: port, pipeline: pipeline, eventLoopGroup: eventLoopGroup, clock: dependencies.service.clock, onListening: onListening)
    }
}
