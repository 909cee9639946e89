import CremaAPI
import CremaClock
import CremaCore
import CremaService
import Foundation
import Hummingbird

/// Holds each API key and each customer to its tenant's request rate (docs/limits.md), after authentication: only a
/// verified caller is counted, so nobody can spend another's allowance by naming it. An unauthenticated request is
/// refused by its route anyway, at the price of no database work. While the tenant's limits cannot be read, the
/// operator's defaults apply.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = CremaRequestContext
    let limiter: RequestRateLimiter
    let limits: TenantLimitsDirectory
    let clock: CremaClock

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let caller: (id: String, tenant: String?)
        if let principal = context.principal {
            caller = (principal.holder, principal.tenant)
        } else if let customer = context.customer {
            caller = ("customer:\(customer.tenant)/\(customer.ref)", customer.tenant)
        } else {
            return try await next(request, context)
        }
        var setting = limits.defaults.rate
        if let tenant = caller.tenant, let tenantLimits = try? await limits.limits(for: tenant) { setting = tenantLimits.rate }
        guard case .limited(let rate) = setting else { return try await next(request, context) }
        if case .refused(let seconds) = limiter.take(caller.id, rate: rate, now: clock.now) { throw APIError.rateLimited(retryAfter: seconds) }
        return try await next(request, context)
    }
}
