import CremaClock
import CremaCore
import CremaPostgres
@testable import CremaServer
import CremaService
import CremaStore
import CremaTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import InMemoryLogging
import Logging
import Synchronization
import Testing

/// A database outage is told in a few lines, not one per failed request.
@Suite struct RepeatedFailureLogTests {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)

    @Test("the first failure is logged and the rest of its interval only counted") func theFirstFailureIsLoggedAndTheRestOfItsIntervalOnlyCounted() {
        var log = RepeatedFailureLog(interval: 10)
        #expect(log.occurred(at: Self.start) == .started(unloggedBefore: 0))
        #expect(log.occurred(at: Self.start) == .omit)
        #expect(log.occurred(at: Self.start + 5) == .omit)
        #expect(log.occurred(at: Self.start + 9.999) == .omit)
        #expect(log.occurred(at: Self.start + 10) == .continuing(omitted: 3))
        // Failures 9 s apart are one outage: a line every other failure.
        #expect(log.occurred(at: Self.start + 19) == .omit)
        #expect(log.occurred(at: Self.start + 28) == .continuing(omitted: 1))
        #expect(log.occurred(at: Self.start + 30) == .omit)
    }

    @Test("a failure after a quiet interval starts a new outage and counts what the last one left out") func aFailureAfterAQuietIntervalStartsANewOutageAndCountsWhatTheLastOneLeftOut() {
        var log = RepeatedFailureLog(interval: 10)
        #expect(log.occurred(at: Self.start) == .started(unloggedBefore: 0))
        #expect(log.occurred(at: Self.start + 1) == .omit)
        #expect(log.occurred(at: Self.start + 2) == .omit)
        #expect(log.occurred(at: Self.start + 12) == .started(unloggedBefore: 2))
        #expect(log.occurred(at: Self.start + 3600) == .started(unloggedBefore: 0))
        #expect(log.occurred(at: Self.start + 3601) == .omit)
    }

    @Test("a clock that went backwards does not silence the failure") func aClockThatWentBackwardsDoesNotSilenceTheFailure() {
        var log = RepeatedFailureLog(interval: 10)
        #expect(log.occurred(at: Self.start) == .started(unloggedBefore: 0))
        #expect(log.occurred(at: Self.start - 1) == .started(unloggedBefore: 0))
        #expect(log.occurred(at: Self.start) == .omit)
    }

    @Test("an unreachable database is logged once per interval whatever the number of requests") func anUnreachableDatabaseIsLoggedOncePerIntervalWhateverTheNumberOfRequests() async throws {
        let handler = InMemoryLogHandler()
        let logger = Logger(label: "test") { _ in handler }
        // Fixed at the real time (the order body's ETA is in the real future), and moved by the test alone.
        let clock = Mutex(Date())
        let pool = PostgresPool(.init(conninfo: "host=127.0.0.1 port=1 connect_timeout=2 user=x dbname=x", acquireTimeout: .seconds(1)))
        let dependencies = APIHarness.dependencies(try APIHarness.process(
            pool: pool, clock: .reading { clock.withLock { $0 } }))
        let app = CremaApplication.build(dependencies, host: "127.0.0.1", port: 0, logger: logger)
        try await app.test(.router) { client in
            let api = APIClient(client: client)
            for _ in 0..<5 {
                let response = try await api.post("/v1/orders", as: .pos, APIClient.orderBody())
                #expect(response.status == .serviceUnavailable)
            }
            // Six seconds on, one more (still within the interval); twelve seconds on, the outage's second line.
            for _ in 0..<2 {
                clock.withLock { $0 += ErrorMiddleware.databaseLogInterval * 0.6 }
                let later = try await api.post("/v1/orders", as: .pos, APIClient.orderBody())
                #expect(later.status == .serviceUnavailable)
            }
        }
        await pool.close()
        let lines = handler.entries.filter { $0.level == .warning && "\($0.message)".contains("unavailable") }
        #expect(lines.count == 2)
        #expect(lines.first?.metadata["requests_since_last_line"] == nil)
        #expect(lines.last?.metadata["requests_since_last_line"] == "5")
    }
}
