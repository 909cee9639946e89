import CremaAPI
import CremaCore
import Prometheus

/// Requests refused by a load limit (docs/limits.md), by the limit's name. No tenant label: the series is public
/// on `/metrics`, and which tenants exist is not.
struct LimitMetrics: Sendable {
    private let refused: [LimitName: Counter]

    init(registry: PrometheusCollectorRegistry) {
        let descriptor = MetricNameDescriptor(
            namespace: "crema", subsystem: "limits", metricName: "refusals", unitName: "total",
            helpText: "Requests refused by a load limit: 409 limit_reached, or 429 rate_limited (limit=rate).")
        refused = Dictionary(uniqueKeysWithValues: LimitName.allCases.map { ($0, registry.makeCounter(descriptor: descriptor, labels: [("limit", $0.rawValue)])) })
    }

    /// Counts `error` if it is a limit's refusal.
    func count(_ error: APIError) {
        switch error {
        case .limitReached(let name, _): refused[name]?.increment()
        case .rateLimited: refused[.rate]?.increment()
        default: break
        }
    }
}
