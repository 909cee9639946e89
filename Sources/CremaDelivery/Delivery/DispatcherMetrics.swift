import CremaAPNsProtocol
import CremaCore
import CremaService
import CremaStore
import Prometheus

/// The dispatcher's Prometheus series: pushes by type and outcome, retries, outbox depth and the age of the
/// oldest due push, and the time from an event's commit to its APNs request.
struct DispatcherMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    nonisolated(unsafe) static let pushes = MetricNameDescriptor(
        metricName: "crema_apns_pushes_total", unitName: "", helpText: "APNs requests by push type and outcome.")
    /// Shown on `/metrics` to the bootstrap admin key only (CremaServer's `TenantSeries`): which tenants exist is not public.
    nonisolated(unsafe) static let tenantPushes = MetricNameDescriptor(
        metricName: TenantSeries.pushes, unitName: "", helpText: "APNs requests by tenant, push type and outcome (bootstrap admin key only).")
    nonisolated(unsafe) static let retries = MetricNameDescriptor(
        metricName: "crema_apns_retries_total", unitName: "", helpText: "APNs answers that put a push back to wait for another attempt.")
    nonisolated(unsafe) static let pending = MetricNameDescriptor(
        metricName: "crema_outbox_pending", unitName: "", helpText: "Outbox rows waiting to be sent.")
    nonisolated(unsafe) static let inflight = MetricNameDescriptor(
        metricName: "crema_outbox_inflight", unitName: "", helpText: "Outbox rows claimed by a dispatcher and not yet recorded.")
    nonisolated(unsafe) static let oldest = MetricNameDescriptor(
        metricName: "crema_outbox_oldest_pending_seconds", unitName: "", helpText: "Age of the oldest due push.")
    nonisolated(unsafe) static let unsignable = MetricNameDescriptor(
        metricName: "crema_outbox_unsignable_pending", unitName: "",
        helpText: "Due pushes of apps this instance has no APNs key for: they wait for an instance that has one.")
    nonisolated(unsafe) static let latency = MetricNameDescriptor(
        metricName: "crema_delivery_commit_to_send_seconds", unitName: "", helpText: "Time from an event's commit to its APNs request.")
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
        case .heldForKey: outcome = "held_for_key"
        }
        registry.makeCounter(
            descriptor: Self.pushes, labels: [("push_type", result.delivery.pushType.rawValue), ("outcome", outcome)]
        ).increment()
        // Tenants are few (brands, not customers), so the label's cardinality stays bounded.
        registry.makeCounter(
            descriptor: Self.tenantPushes,
            labels: [("tenant", result.delivery.tenantID), ("push_type", result.delivery.pushType.rawValue), ("outcome", outcome)]
        ).increment()
        if case .retry = result.outcome { registry.makeCounter(descriptor: Self.retries).increment() }
    }

    func recordLatency(_ duration: Duration, pushType: APNsPushType) {
        // Planned and sent are read from two clocks (two hosts, or the plan's time rounded to microseconds by the
        // database), so a send can seem a hair earlier than its plan. Recorded as zero: a negative Duration traps
        // swift-prometheus when it renders /metrics.
        registry.makeDurationHistogram(descriptor: Self.latency, labels: [("push_type", pushType.rawValue)], buckets: Self.buckets)
            .record(max(duration, .zero))
    }

    func depth(_ depth: OutboxDepth) {
        registry.makeGauge(descriptor: Self.pending).set(Double(depth.pending))
        registry.makeGauge(descriptor: Self.inflight).set(Double(depth.inflight))
        registry.makeGauge(descriptor: Self.oldest).set(depth.oldestPendingAge)
        registry.makeGauge(descriptor: Self.unsignable).set(Double(depth.unsignable))
    }
}
