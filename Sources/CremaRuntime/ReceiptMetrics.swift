import CremaAPNsProtocol
import CremaCore
import CremaService
import CremaStore
import Prometheus

/// The receipts' Prometheus series: each delivery's first receipt counted once, by push type and surface, and the time
/// from APNs' acceptance to the receipt (docs/operations.md "Metrics").
struct ReceiptMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    nonisolated(unsafe) static let receipts = MetricNameDescriptor(
        metricName: "crema_push_receipts_total", unitName: "",
        helpText: "Pushes a phone said it received (surfaces notification, activity, app) or Crema inferred (activity_token, widget_fetch).")
    nonisolated(unsafe) static let seconds = MetricNameDescriptor(
        metricName: "crema_push_receipt_seconds", unitName: "", helpText: "Time from APNs' acceptance of a push to its receipt.")
    static let buckets: [Duration] = [
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30), .seconds(60),
        .seconds(300), .seconds(1800), .seconds(3600),
    ]

    func record(_ receipts: [RecordedReceipt]) {
        for receipt in receipts {
            registry.makeCounter(
                descriptor: Self.receipts, labels: [("push_type", receipt.pushType.rawValue), ("surface", receipt.surface.rawValue)]
            ).increment()
            guard let seconds = receipt.secondsAfterAcceptance else { continue }
            // A phone's clock may put the receipt a little before the acceptance was recorded: zero, never negative
            // (a negative Duration traps swift-prometheus when it renders /metrics).
            registry.makeDurationHistogram(descriptor: Self.seconds, labels: [("push_type", receipt.pushType.rawValue)], buckets: Self.buckets)
                .record(.milliseconds(Int64((max(0, seconds) * 1000).rounded())))
        }
    }
}
