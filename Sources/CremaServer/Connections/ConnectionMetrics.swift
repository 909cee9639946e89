import Prometheus

/// The connection guard's Prometheus series: connections refused past the cap, connections closed by a
/// deadline (by phase: `request` for the read timeout, `idle` between requests), and connections open now.
struct ConnectionMetrics: Sendable {
    let refused: Counter
    let timedOutReading: Counter
    let timedOutIdle: Counter
    let open: Gauge

    init(registry: PrometheusCollectorRegistry) {
        refused = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "crema", subsystem: "http", metricName: "connections_refused", unitName: "total",
                helpText: "Connections answered 503 and closed because the server was at CREMA_HTTP_MAX_CONNECTIONS."))
        let timedOut = MetricNameDescriptor(
            namespace: "crema", subsystem: "http", metricName: "connections_timed_out", unitName: "total",
            helpText: "Connections closed by CREMA_HTTP_READ_TIMEOUT (phase=request) or CREMA_HTTP_IDLE_TIMEOUT (phase=idle).")
        timedOutReading = registry.makeCounter(descriptor: timedOut, labels: [("phase", "request")])
        timedOutIdle = registry.makeCounter(descriptor: timedOut, labels: [("phase", "idle")])
        open = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "crema", subsystem: "http", metricName: "connections_open", unitName: "",
                helpText: "HTTP connections open now (refused ones not included)."))
    }
}
