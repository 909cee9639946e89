@testable import CremaDelivery
import Testing

@Suite struct WebhookDeadlineTests {
    @Test("work that outlasts its deadline is no longer waited for: a resolver that never answers costs one request timeout")
    func workPastTheDeadlineIsNotAwaited() async throws {
        let answer = try await WebhookSender.within(.now) {
            try await Task.sleep(for: .seconds(3_600))
            return 1
        }
        #expect(answer == nil)
    }

    @Test("work that ends before its deadline gives its value, or its error")
    func workBeforeTheDeadlineAnswers() async throws {
        #expect(try await WebhookSender.within(.now + .seconds(3_600)) { 7 } == 7)
        struct Refused: Error {}
        await #expect(throws: Refused.self) { _ = try await WebhookSender.within(.now + .seconds(3_600)) { () throws -> Int in throw Refused() } }
    }
}
