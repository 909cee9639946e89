import CremaStore
import Prometheus

/// The webhook dispatcher's Prometheus series: attempts by outcome, and the outbox's depth, so an operator sees a
/// receiver failing (retries, dead) or the dispatcher falling behind (oldest pending).
struct WebhookMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    nonisolated(unsafe) static let attempts = MetricNameDescriptor(
        metricName: "crema_webhook_attempts_total", unitName: "", helpText: "Webhook requests by outcome: sent, retry, dead, gone.")
    nonisolated(unsafe) static let pending = MetricNameDescriptor(
        metricName: "crema_webhook_pending", unitName: "", helpText: "Webhook deliveries due now and not yet claimed.")
    nonisolated(unsafe) static let inflight = MetricNameDescriptor(
        metricName: "crema_webhook_inflight", unitName: "", helpText: "Webhook deliveries claimed and not yet recorded.")
    nonisolated(unsafe) static let dead = MetricNameDescriptor(
        metricName: "crema_webhook_dead", unitName: "", helpText: "Dead webhook deliveries, waiting for a replay.")
    nonisolated(unsafe) static let oldest = MetricNameDescriptor(
        metricName: "crema_webhook_oldest_pending_seconds", unitName: "", helpText: "How long the oldest due webhook delivery has waited.")

    func attempt(_ outcome: WebhookOutcome) {
        let label: String
        switch outcome {
        case .sent: label = "sent"
        case .retry: label = "retry"
        case .dead: label = "dead"
        case .gone: label = "gone"
        }
        registry.makeCounter(descriptor: Self.attempts, labels: [("outcome", label)]).increment()
    }

    func depth(pending: Int, inflight: Int, dead: Int, oldest: Double) {
        registry.makeGauge(descriptor: Self.pending).set(Double(pending))
        registry.makeGauge(descriptor: Self.inflight).set(Double(inflight))
        registry.makeGauge(descriptor: Self.dead).set(Double(dead))
        registry.makeGauge(descriptor: Self.oldest).set(oldest)
    }
}
