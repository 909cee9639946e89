import Foundation
import Hummingbird
import Logging
import Prometheus

/// One measurement per request, used twice: the Prometheus counter and latency histogram (by route
/// template, method and status, in the application's own registry, so tests stay isolated) and one
/// structured access-log line with the request id. Never headers (keys) or bodies (customer names).
struct RequestObservabilityMiddleware: RouterMiddleware {
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
        let elapsed = ContinuousClock.now - start
        let status = String(response.status.code)
        let labels = [("route", route), ("method", request.method.rawValue), ("status", status)]
        registry.makeCounter(descriptor: Self.requests, labels: labels).increment()
        registry.makeDurationHistogram(descriptor: Self.duration, labels: labels, buckets: Self.buckets).record(elapsed)
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        context.logger.info(
            "request",
            metadata: [
                "http.method": "\(request.method.rawValue)", "http.route": "\(route)", "http.status": "\(status)",
                "http.duration_ms": "\(Int(milliseconds.rounded()))",
            ])
        return response
    }
}
