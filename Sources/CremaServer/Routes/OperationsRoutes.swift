import CremaAPI
import CremaCore
import CremaService
import Foundation
import Hummingbird
import NIOCore
import Prometheus

/// Unauthenticated operational routes: liveness, readiness, Prometheus metrics and the OpenAPI document.
struct OperationsRoutes {
    let health: DatabaseHealth
    let registry: PrometheusCollectorRegistry

    nonisolated(unsafe) static let poolGauge = MetricNameDescriptor(
        namespace: "crema", subsystem: "db_pool", metricName: "connections", unitName: "",
        helpText: "Database pool connections by state (open, leased, waiting, max).")

    func register(on router: Router<CremaRequestContext>) {
        router.get("/health/live") { _, _ in try JSONResponse.make(.ok, Liveness(status: "ok")) }
        router.get("/health/ready") { _, _ in try await self.ready() }
        router.get("/metrics") { _, context in await self.metrics(tenantSeries: context.principal.map { $0.role == .admin && $0.tenant == nil } ?? false) }
        router.get("/openapi.yaml") { _, _ in try Self.openAPI() }
    }

    func ready() async throws -> Response {
        let found = await health.readiness()
        let readiness = Readiness(
            status: found.isReady ? "ready" : "unavailable", database: found.database,
            migrations: .init(applied: found.applied, pending: found.pending))
        let ok = readiness.status == "ready"
        return try JSONResponse.make(
            ok ? .ok : .serviceUnavailable, readiness,
            headers: ok ? [:] : [.retryAfter: String(APIError.retryAfterSeconds)])
    }

    /// Every series; those naming tenants (`TenantSeries`) only with `tenantSeries`, for the bootstrap admin key.
    func metrics(tenantSeries: Bool) async -> Response {
        let usage = await health.poolUsage
        for (state, value) in [("open", usage.open), ("leased", usage.leased), ("waiting", usage.waiting), ("max", usage.max)] {
            registry.makeGauge(descriptor: Self.poolGauge, labels: [("state", state)]).set(Double(value))
        }
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(
                byteBuffer: tenantSeries
                    ? ByteBuffer(bytes: registry.emitToBuffer())
                    : ByteBuffer(string: TenantSeries.removed(from: String(decoding: registry.emitToBuffer(), as: UTF8.self)))))
    }

    static func openAPI() throws -> Response {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml", subdirectory: "Resources") else {
            throw APIError.internalError
        }
        return Response(
            status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: try Data(contentsOf: url))))
    }
}
