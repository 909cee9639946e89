import AsyncHTTPClient
import CremaAPI
import CremaClock
import CremaCore
import CremaService
import CremaStore
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// Sends one webhook delivery: checks the receiver's address again (DNS may have changed since registration), signs
/// the body at send time, posts it within the request timeout, and says what the answer means for the delivery.
struct WebhookSender: Sendable {
    let service: WebhookService
    let clients: WebhookClients
    let policy: WebhookPolicy
    /// Signs and schedules retries on the dispatcher's clock; the attempt's deadline is an I/O deadline on real
    /// monotonic time (it bounds `getaddrinfo` and is AsyncHTTPClient's own timeout), not a wait of Crema's.
    let clock: CremaClock
    let random: @Sendable () -> Double
    let logger: Logger

    /// What happened to one attempt, before the retry policy turns a failure into `retry` or `dead`.
    enum Answer: Equatable {
        case delivered(status: Int)
        case gone(status: Int)
        case failed(status: Int?, error: String, retryAfter: Double?)
    }

    func send(_ delivery: ClaimedWebhook) async -> WebhookOutcome {
        outcome(of: await attempt(delivery), attempts: delivery.attempts)
    }

    /// A failed attempt is tried again after the policy's backoff (never sooner than a `Retry-After`), or is dead
    /// once the attempts are spent.
    func outcome(of answer: Answer, attempts: Int) -> WebhookOutcome {
        switch answer {
        case .delivered(let status): return .sent(status: status)
        case .gone(let status): return .gone(status: status)
        case .failed(let status, let error, let retryAfter):
            guard let delay = policy.retry.delay(afterAttempt: attempts, retryAfter: retryAfter, random: random()) else {
                return .dead(status: status, error: "\(error) (gave up after \(attempts) attempts)")
            }
            return .retry(at: clock.now.addingTimeInterval(delay), status: status, error: error)
        }
    }

    func attempt(_ delivery: ClaimedWebhook) async -> Answer {
        let url: WebhookURL
        do throws(WebhookURL.Refusal) {
            url = try WebhookURL(delivery.url)
        } catch {
            return .failed(status: nil, error: "the URL \(error)", retryAfter: nil)
        }
        // One deadline for the whole attempt, DNS included: a receiver whose name server never answers holds a sending
        // slot no longer than one that never answers itself (the lease outlasts it: `WebhookPolicy.lease`).
        let deadline = ContinuousClock.now + .milliseconds(Int64(policy.requestTimeout * 1000))
        let address: String
        do {
            guard let addresses = try await Self.within(deadline, { try await service.checkedAddresses(of: url) }) else {
                return .failed(status: nil, error: "no answer within \(Int(policy.requestTimeout)) s (DNS)", retryAfter: nil)
            }
            guard let first = addresses.first else { return .failed(status: nil, error: "no address", retryAfter: nil) }
            address = IPAddressText.text(first)
        } catch ServiceError.webhookAddressRefused(let host, let reason) {
            // The sentence the API answers a registration with.
            return .failed(status: nil, error: APIError.webhookAddressRefused(host: host, reason: reason).message, retryAfter: nil)
        } catch {
            return .failed(status: nil, error: "the host could not be resolved", retryAfter: nil)
        }
        let secret: String
        do {
            secret = try service.secret(of: delivery.tenant, endpoint: delivery.endpointID, sealed: delivery.sealedSecret)
        } catch {
            return .failed(status: nil, error: "the endpoint's secret cannot be opened with this CREMA_MASTER_KEY", retryAfter: nil)
        }
        let body = Data(delivery.body.utf8)
        var request = HTTPClientRequest(url: url.description)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Crema-Webhooks/1")
        request.headers.add(name: "Crema-Event-Id", value: delivery.eventID.uuidString.lowercased())
        request.headers.add(name: "Crema-Event-Type", value: delivery.eventType)
        request.headers.add(name: "Crema-Delivery-Attempt", value: "\(delivery.attempts)")
        request.headers.add(
            name: "Crema-Signature", value: WebhookSecret.signature(secret: secret, timestamp: Int(clock.now.timeIntervalSince1970), body: body))
        request.body = .bytes(ByteBuffer(bytes: body))
        let client = await clients.client(host: url.host, address: address)
        do {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return .failed(status: nil, error: "no answer within \(Int(policy.requestTimeout)) s", retryAfter: nil) }
            let response = try await client.execute(request, timeout: TimeAmount(left), logger: logger)
            // Read (and drop) a bounded body so the connection can carry the next delivery.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            let status = Int(response.status.code)
            switch status {
            case 200..<300: return .delivered(status: status)
            case 410: return .gone(status: status)
            default:
                let retryAfter = response.headers.first(name: "Retry-After").flatMap(Double.init)
                return .failed(status: status, error: "the receiver answered \(status)", retryAfter: retryAfter)
            }
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            return .failed(status: nil, error: "no answer within \(Int(policy.requestTimeout)) s", retryAfter: nil)
        } catch {
            return .failed(status: nil, error: "the request failed: \(error)", retryAfter: nil)
        }
    }

    /// `body`'s value, or nil once `deadline` passes first. The work is not awaited past the deadline (a blocked
    /// `getaddrinfo` cannot be interrupted, only no longer waited for): it runs on as an unstructured task and its late
    /// answer is dropped.
    static func within<T: Sendable>(_ deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
        let race = DeadlineRace<T>()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T?, any Error>) in
            race.start(continuation, deadline: deadline, body)
        }
    }
}

/// The two sides of `WebhookSender.within`: whichever of the work and the deadline ends first answers, once.
private final class DeadlineRace<T: Sendable>: Sendable {
    private let waiting = Mutex<CheckedContinuation<T?, any Error>?>(nil)
    private let timer = Mutex<Task<Void, Never>?>(nil)

    func start(
        _ continuation: CheckedContinuation<T?, any Error>, deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () async throws -> T
    ) {
        waiting.withLock { $0 = continuation }
        let timer = Task {
            // Real monotonic time, not the injected clock: this bounds blocking I/O (a `getaddrinfo` that never
            // answers) and shares its deadline with AsyncHTTPClient's timeout, which runs on real time too.
            try? await Task.sleep(until: deadline, clock: .continuous)
            self.finish(.success(nil))
        }
        self.timer.withLock { $0 = timer }
        Task {
            do {
                self.finish(.success(try await body()))
            } catch {
                self.finish(.failure(error))
            }
            self.timer.withLock { $0 }?.cancel()
        }
    }

    private func finish(_ result: Result<T?, any Error>) {
        waiting.withLock { waiting in
            defer { waiting = nil }
            return waiting
        }?.resume(with: result)
    }
}
