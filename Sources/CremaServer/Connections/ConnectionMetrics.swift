import Prometheus

/// The connection guard's Prometheus series: connections refused past the cap, connections closed by a
/// deadline (by phase: `request` for the read timeout, `idle` between requests), connections open now, and
/// how many of those have not yet sent a whole request head (stalled or slow clients, holding no task), and requests
/// whose client left before their answer.
struct ConnectionMetrics: Sendable {
    let refused: Counter
    let timedOutReading: Counter
    let timedOutIdle: Counter
    let open: Gauge
    let waitingForFirstRequest: Gauge
    let abandoned: Counter

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
        waitingForFirstRequest = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "crema", subsystem: "http", metricName: "connections_awaiting_first_request", unitName: "",
                helpText: "Open HTTP connections whose first request head has not arrived yet (no task serves them yet)."))
        abandoned = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "crema", subsystem: "http", metricName: "requests_abandoned", unitName: "total",
                helpText: "Requests whose client left before their answer ended; their work (and its statement) was cancelled."))
    }
}
