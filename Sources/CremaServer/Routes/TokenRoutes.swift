import CremaService
import CremaAPI
import CremaCore
import Foundation
import Hummingbird
import Logging

/// The iOS app's token routes (docs/design.md §9, role `app`): an order's Live Activity token, and a customer's alert,
/// widget and push-to-start tokens. Tokens are checked, stored lowercase and never logged or echoed whole.
struct TokenRoutes {
    let service: OrderService

    static let activityPath: RouterPath = "/v1/orders/{id}/live-activity-token"
    static let customerPath: RouterPath = "/v1/customers/{ref}/tokens/{kind}/{token}"

    func register(on router: Router<CremaRequestContext>) {
        router.put(Self.activityPath) { request, context in try await self.putActivity(request, context) }
        router.delete(Self.activityPath) { request, context in try await self.deleteActivity(request, context) }
        router.put(Self.customerPath) { request, context in try await self.putCustomer(request, context) }
        router.delete(Self.customerPath) { request, context in try await self.deleteCustomer(request, context) }
    }

    func putActivity(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try OrderService.tokenScope(of: try context.presentedKey())
        let id = try OrderRoutes.orderID(context)
        let body = try WireCoding.decode(ActivityTokenRequest.self, from: try await request.bodyData(context: context))
        let token = try Self.validated(body.token, field: "token")
        let registered = try await service.putActivityToken(
            orderID: id, in: scope, token: token, environment: body.environment, bundleID: body.bundleID,
            frequentUpdates: body.frequentUpdates ?? true)
        context.logger.info(
            "live activity token registered",
            metadata: [
                "order_id": "\(id)", "token": "\(registered.redactedToken)", "created": "\(registered.created)",
                "frequent_updates": "\(body.frequentUpdates ?? true)",
            ])
        return try JSONResponse.make(registered.created ? .created : .ok, TokenResponse(registered, orderID: id, customerRef: nil))
    }

    func deleteActivity(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try OrderService.tokenScope(of: try context.presentedKey())
        guard try await service.deleteActivityToken(orderID: try OrderRoutes.orderID(context), in: scope) else { throw APIError.unknownToken }
        return Response(status: .noContent)
    }

    func putCustomer(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try OrderService.tokenScope(of: try context.presentedKey())
        let (ref, kind, token) = try Self.customerParameters(context)
        let body = try WireCoding.decode(CustomerTokenRequest.self, from: try await request.bodyData(context: context))
        let replaces = try body.replaces.map { try Self.validated($0, field: "replaces") }
        let registered = try await service.putCustomerToken(
            customerRef: ref, tenant: scope.tenant, kind: kind, token: token, environment: body.environment,
            bundleID: body.bundleID, replaces: replaces)
        context.logger.info(
            "customer token registered",
            metadata: ["kind": "\(kind.rawValue)", "token": "\(registered.redactedToken)", "created": "\(registered.created)"])
        return try JSONResponse.make(registered.created ? .created : .ok, TokenResponse(registered, orderID: nil, customerRef: ref))
    }

    func deleteCustomer(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let scope = try OrderService.tokenScope(of: try context.presentedKey())
        let (ref, kind, token) = try Self.customerParameters(context)
        guard try await service.deleteCustomerToken(customerRef: ref, tenant: scope.tenant, kind: kind, token: token) else { throw APIError.unknownToken }
        return Response(status: .noContent)
    }

    /// `{ref}`, `{kind}` (alert | widget | push-to-start) and `{token}` from the path, checked.
    static func customerParameters(_ context: CremaRequestContext) throws -> (String, PushTargetKind, String) {
        let ref = try context.pathParameter("ref")
        do throws(OrderError) {
            try OrderValidation.customerRef(ref)
        } catch {
            throw APIError.order(error)
        }
        let (kind, token) = try kindAndToken(context)
        return (ref, kind, token)
    }

    /// `{kind}` (alert | widget | push-to-start) and `{token}` from the path, decoded and checked; shared with the
    /// customer's own `/v1/me/tokens/{kind}/{token}`.
    static func kindAndToken(_ context: CremaRequestContext) throws -> (PushTargetKind, String) {
        let kind: PushTargetKind
        switch try context.pathParameter("kind") {
        case "alert": kind = .alert
        case "widget": kind = .widget
        case "push-to-start": kind = .pushToStart
        default: throw APIError.invalidField(field: "kind", reason: "must be alert, widget or push-to-start")
        }
        return (kind, try validated(try context.pathParameter("token"), field: "token"))
    }

    static func validated(_ token: String, field: String) throws(APIError) -> String {
        do throws(OrderError) {
            return try PushTokenValidation.normalized(token, field: field)
        } catch {
            throw .order(error)
        }
    }
}

extension TokenResponse {
    /// The answer to a registration: the token's kind and environment, and only its first characters.
    init(_ registered: RegisteredToken, orderID: UUID?, customerRef: String?) {
        self.init(
            kind: registered.ref.kind.rawValue, orderID: orderID, customerRef: customerRef, environment: registered.environment,
            redactedToken: registered.redactedToken, created: registered.created)
    }
}
