import Foundation
import Hummingbird
import Prometheus

/// Counts requests and records their latency by route template, method and status, into the
/// application's own Prometheus registry (no global metrics bootstrap, so tests stay isolated).
struct RequestMetricsMiddleware: RouterMiddleware {
    typealias Context = CremaRequestContext
    let registry: PrometheusCollectorRegistry

    nonisolated(unsafe) static let requests = MetricNameDescriptor(
        namespace: "crema", subsystem: "http", metricName: "requests", unitName: "total",
        helpText: "HTTP requests by route template, method and status.")
    nonisolated(unsafe) static let duration = MetricNameDescriptor(
        namespace: "crema", subsystem: "http", metricName: "request_duration", unitName: "seconds",
        helpText: "HTTP request latency by route template, method and status.")
    static let buckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .seconds(2.5), .seconds(5),
    ]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        // The route template, never the concrete path: ids would explode the label space.
        let route = context.endpointPath ?? "unmatched"
        let labels = [("route", route), ("method", request.method.rawValue), ("status", String(response.status.code))]
        registry.makeCounter(descriptor: Self.requests, labels: labels).increment()
        registry.makeDurationHistogram(descriptor: Self.duration, labels: labels, buckets: Self.buckets)
            .record(ContinuousClock.now - start)
        return response
    }
}
