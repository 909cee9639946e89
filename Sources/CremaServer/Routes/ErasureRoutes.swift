import CremaAPI
import CremaClock
import CremaCore
import CremaService
import Foundation
import Hummingbird
import Logging

/// `DELETE /v1/customers/{ref}` (role `pos` or `admin`): erases one customer of the caller's tenant everywhere at once
/// (docs/data-lifecycle.md). A tenant's keys act on their tenant; the bootstrap admin key on the tenant `default`.
struct ErasureRoutes {
    let service: OrderService

    func register(on router: Router<CremaRequestContext>) {
        router.delete("/v1/customers/{ref}") { request, context in try await self.erase(request, context) }
    }

    func erase(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let tenant = try OrderService.erasureTenant(of: try context.presentedKey())
        let ref = try context.pathParameter("ref")
        do throws(OrderError) {
            try OrderValidation.customerRef(ref)
        } catch {
            throw APIError.order(error)
        }
        guard let counts = try await service.erase(customerRef: ref, tenant: tenant) else {
            throw APIError.customerNotFound
        }
        // Counts only: the ref is exactly what was erased.
        context.logger.info(
            "customer erased",
            metadata: [
                "orders": "\(counts.orders)", "events": "\(counts.events)", "deliveries": "\(counts.deliveries)",
                "tokens": "\(counts.tokens)", "idempotency_keys": "\(counts.idempotencyKeys)",
            ])
        return Response(status: .noContent)
    }
}
