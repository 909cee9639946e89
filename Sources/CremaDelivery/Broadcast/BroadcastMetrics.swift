import Prometheus

/// The broadcaster's Prometheus series: broadcasts by outcome, and channels re-created because APNs forgot them.
struct BroadcastMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    nonisolated(unsafe) static let broadcasts = MetricNameDescriptor(
        metricName: "crema_broadcasts_total", unitName: "", helpText: "Store board broadcasts by outcome (sent, retry, channel_gone, refused).")
    nonisolated(unsafe) static let recreations = MetricNameDescriptor(
        metricName: "crema_broadcast_channels_recreated_total", unitName: "", helpText: "Broadcast channels re-created because APNs forgot them.")

    nonisolated(unsafe) static let starts = MetricNameDescriptor(
        metricName: "crema_board_starts_total", unitName: "", helpText: "Push-to-starts of a store's board onto its channel, by outcome (sent, retry, retired).")

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    func broadcast(outcome: String) {
        registry.makeCounter(descriptor: Self.broadcasts, labels: [("outcome", outcome)]).increment()
    }

    func start(outcome: String) {
        registry.makeCounter(descriptor: Self.starts, labels: [("outcome", outcome)]).increment()
    }

    func recreated() {
        registry.makeCounter(descriptor: Self.recreations).increment()
    }
}
