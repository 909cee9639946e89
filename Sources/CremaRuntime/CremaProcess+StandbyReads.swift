import CremaPostgres
import CremaStore
import Logging
import Prometheus

extension CremaProcess {
    /// The process's standby reads, counted on `/metrics` by where each went; nil without a standby pool.
    static func standbyReads(_ setup: Setup) -> StandbyReads? {
        guard let standby = setup.standbyPool else { return nil }
        let descriptor = MetricNameDescriptor(
            namespace: "crema", subsystem: "db", metricName: "standby_reads", unitName: "total",
            helpText: "Reads that CREMA_DATABASE_READ_URL may serve, by where they were served (standby, or the primary and why).")
        let counters = Dictionary(
            uniqueKeysWithValues: StandbyReads.Outcome.allCases.map {
                ($0, setup.registry.makeCounter(descriptor: descriptor, labels: [("served_by", $0.rawValue)]))
            })
        let waits = setup.registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "crema", subsystem: "db", metricName: "standby_replay_waits", unitName: "total",
                helpText: "Standby reads that had to wait (up to 20 ms) for the standby to replay the primary's position."))
        let logger = setup.logger
        return StandbyReads(primary: setup.pool, standby: standby, observeWait: { waits.increment() }) { outcome in
            counters[outcome]?.increment()
            if outcome == .primaryStandbyFailed { logger.debug("a standby read went to the primary: the standby failed it") }
        }
    }
}
