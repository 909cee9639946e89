import CremaCore
import CremaStore
import Prometheus

/// The dispatcher's Prometheus series: pushes by type and outcome, retries, outbox depth and the age of the
/// oldest due push, and the time from an event's commit to its APNs request.
struct DispatcherMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    static let pushes = "crema_apns_pushes_total"
    static let retries = "crema_apns_retries_total"
    static let pending = "crema_outbox_pending"
    static let inflight = "crema_outbox_inflight"
    static let oldest = "crema_outbox_oldest_pending_seconds"
    static let latency = "crema_delivery_commit_to_send_seconds"
    static let buckets: [Duration] = [
        .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5), .seconds(30), .seconds(300),
    ]

    func record(_ result: DeliveryResult) {
        let outcome: String
        switch result.outcome {
        case .sent: outcome = "sent"
        case .retry: outcome = "retry"
        case .dead: outcome = "dead"
        case .tokenRetired: outcome = "token_retired"
        case .skipped: outcome = "skipped"
        }
        registry.makeCounter(
            name: Self.pushes, labels: [("push_type", result.delivery.pushType.rawValue), ("outcome", outcome)]
        ).increment()
        if case .retry = result.outcome { registry.makeCounter(name: Self.retries).increment() }
    }

    func recordLatency(_ duration: Duration, pushType: APNsPushType) {
        registry.makeDurationHistogram(name: Self.latency, labels: [("push_type", pushType.rawValue)], buckets: Self.buckets)
            .record(duration)
    }

    func depth(pending: Int, inflight: Int, oldest: Double) {
        registry.makeGauge(name: Self.pending).set(Double(pending))
        registry.makeGauge(name: Self.inflight).set(Double(inflight))
        registry.makeGauge(name: Self.oldest).set(oldest)
    }
}
