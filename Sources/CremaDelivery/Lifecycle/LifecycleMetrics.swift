import CremaCore
import Prometheus

/// The lifecycle sweep's Prometheus series: how many orders ended by themselves (by reason) and how many lost their
/// personal data to retention, so an operator sees forgotten orders pile up or retention fall behind.
struct LifecycleMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    nonisolated(unsafe) static let expired = MetricNameDescriptor(
        metricName: "crema_orders_expired_total", unitName: "", helpText: "Orders Crema closed because they waited past their store's limit, by reason.")
    nonisolated(unsafe) static let scrubbed = MetricNameDescriptor(
        metricName: "crema_orders_personal_data_removed_total", unitName: "",
        helpText: "Ended orders whose personal data was removed after CREMA_RETENTION_DAYS.")

    nonisolated(unsafe) static let failures = MetricNameDescriptor(
        metricName: "crema_lifecycle_failures_total", unitName: "",
        helpText: "Lifecycle work that failed and will be tried again: an order that could not be closed, or a pass that could not run, by pass.")

    /// The two passes of the sweep, as the `pass` label.
    enum Pass: String {
        case expiry
        case retention
    }

    func failed(_ pass: Pass) {
        registry.makeCounter(descriptor: Self.failures, labels: [("pass", pass.rawValue)]).increment()
    }

    func expired(_ reason: ExpiryReason) {
        registry.makeCounter(descriptor: Self.expired, labels: [("reason", reason.rawValue)]).increment()
    }

    func scrubbed(_ count: Int) {
        registry.makeCounter(descriptor: Self.scrubbed).increment(by: Int64(count))
    }
}
