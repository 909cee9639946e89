import CremaAPNsProtocol
@testable import CremaDelivery
import Prometheus
import Testing

struct DispatcherMetricsTests {
    @Test("a send that seems earlier than its plan is recorded as zero and metrics still render") func aSendThatSeemsEarlierThanItsPlanIsRecordedAsZeroAndMetricsStillRender() {
        let registry = PrometheusCollectorRegistry()
        let metrics = DispatcherMetrics(registry: registry)
        metrics.recordLatency(.microseconds(-1), pushType: .alert)
        let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        #expect(text.contains(#"crema_delivery_commit_to_send_seconds_count{push_type="alert"} 1"#), "\(text)")
        #expect(text.contains(#"crema_delivery_commit_to_send_seconds_sum{push_type="alert"} 0"#), "\(text)")
    }
}
