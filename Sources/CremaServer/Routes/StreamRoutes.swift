import CremaAPNsProtocol
import CremaAPI
import CremaClock
import CremaCore
import CremaService
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The dashboard stream (docs/design.md §9, role `dashboard`): `GET /v1/stream?store=` as Server-Sent Events, and
/// `POST /v1/stream/tickets` for browsers, whose `EventSource` cannot send an `Authorization` header.
///
/// Each event is one order change: `id:` is the stream cursor of the order's latest event, `event: order`,
/// `data:` the order (the `Order` schema plus its stored `projection`). A stream resumes after the cursor in
/// `Last-Event-ID` (or `?last_event_id=`, for a page that reconnects with a new ticket); without one it starts
/// at the store's current head (a client reads `GET /v1/stores/{store}/board` first).
struct StreamRoutes {
    let service: OrderService
    let hub: StreamHub
    /// Where each tenant's `streams_per_key` comes from (docs/limits.md).
    let limits: TenantLimitsDirectory
    /// A comment line is sent when nothing else was written for this long, so proxies keep the stream open.
    let heartbeat: Duration
    static let ticketLifetime: TimeInterval = 60

    func register(on router: Router<CremaRequestContext>) {
        router.get("/v1/stream") { request, context in try await self.stream(request, context) }
        router.post("/v1/stream/tickets") { request, context in try await self.issueTicket(request, context) }
    }


    func issueTicket(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let principal = try context.presentedKey()
        let scope = try OrderService.streamScope(of: principal)
        let body = try WireCoding.decode(StreamTicketRequest.self, from: try await request.bodyData(context: context))
        guard StoreID.isValid(body.storeID) else {
            throw APIError.invalidField(field: "store_id", reason: "must be 1–63 lowercase letters, digits or dashes")
        }
        let ticket = StreamTicket(tenant: scope.tenant, secret: [UInt8].random(count: 32).hexEncoded)
        let expiresAt = try await service.issueStreamTicket(
            ticket, store: body.storeID, in: scope, holder: principal.holder, lifetime: Self.ticketLifetime)
        return try JSONResponse.make(
            .created, StreamTicketResponse(ticket: ticket.description, storeID: body.storeID, expiresAt: expiresAt),
            headers: [.cacheControl: "no-store"])
    }

    func stream(_ request: Request, _ context: CremaRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        guard let storeID = query["store"].map(String.init), StoreID.isValid(storeID) else {
            throw APIError.invalidField(field: "store", reason: "must be 1–63 lowercase letters, digits or dashes")
        }
        let scope: TenantScope
        let holder: String
        if context.principal == nil, let presented = query["ticket"].map(String.init) {
            // A ticket stands in for the dashboard key, for one store of one tenant, once.
            guard let ticket = StreamTicket(presented), let redeemed = try await service.redeemStreamTicket(ticket, store: storeID) else {
                throw APIError.streamTicketInvalid
            }
            scope = TenantScope(tenant: redeemed.tenant, stores: [storeID])
            holder = redeemed.holder ?? "tickets:\(redeemed.tenant)"
        } else {
            let principal = try context.presentedKey()
            scope = try OrderService.streamScope(of: principal)
            holder = principal.holder
        }
        // A key at its limit is refused before any database work: a flood of refused streams costs no read.
        let limit = try await limits.limits(for: scope.tenant).streamsPerKey
        guard hub.streams(heldBy: holder) < limit else { throw APIError.limitReached(.streamsPerKey, limit: limit) }
        let resumeFrom = request.headers[HTTPField.Name("Last-Event-ID")!] ?? query["last_event_id"].map(String.init)
        let start: Int64
        if let resumeFrom {
            guard let value = Int64(resumeFrom), value >= 0 else {
                throw APIError.invalidField(field: "Last-Event-ID", reason: "must be an event id from this stream")
            }
            _ = try await service.streamHead(store: storeID, in: scope)  // 404 for a store outside the scope
            start = value
        } else {
            start = try await service.streamHead(store: storeID, in: scope)
        }
        let tenant = scope.tenant
        guard let subscription = hub.subscribe(tenant: tenant, store: storeID, holder: holder, limit: limit, after: start) else {
            throw APIError.limitReached(.streamsPerKey, limit: limit)
        }
        let (id, wakeUps) = subscription
        let service = self.service
        let hub = self.hub
        let heartbeat = self.heartbeat
        let logger = context.logger
        let body = ResponseBody { writer in
            defer { hub.unsubscribe(id) }
            // The HTTP server's graceful shutdown reaches request tasks too: ending the wake-ups ends the stream,
            // so the server can drain (it stops before the hub, services stopping in reverse order).
            try await withGracefulShutdownHandler {
                try await Self.pump(
                    &writer, service: service, hub: hub, tenant: tenant, storeID: storeID, from: start, wakeUps: wakeUps, heartbeat: heartbeat
                ) { cursor in hub.advance(id, to: cursor) }
            } onGracefulShutdown: {
                hub.unsubscribe(id)
            }
            logger.debug("stream ended", metadata: ["store_id": "\(storeID)"])
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store", HTTPField.Name("X-Accel-Buffering")!: "no"],
            body: body)
    }

    /// Writes, on every wake-up, the store's changes after the cursor (page by page), or a keepalive comment
    /// when nothing was written for `heartbeat`. Returns when the wake-ups end. A page is read and encoded once for
    /// every stream of the store at the same cursor woken by the same change (`StreamHub.page`).
    static func pump(
        _ writer: inout any ResponseBodyWriter, service: OrderService, hub: StreamHub, tenant: String, storeID: String, from start: Int64,
        wakeUps: AsyncStream<Void>, heartbeat: Duration, advanced: (Int64) -> Void = { _ in }
    ) async throws {
        let store = StoreKey(tenant: tenant, store: storeID)
        var cursor = start
        // The process's one clock (the hub's): a test moves it on instead of waiting for a keepalive.
        let clock = hub.clock
        let quiet = heartbeat.timeInterval
        // Opens the stream at once (and tells EventSource how long to wait before reconnecting).
        try await writer.write(ByteBuffer(string: "retry: 2000\n: connected\n\n"))
        var lastWrite = clock.now
        for await _ in wakeUps {
            var page: StreamPage
            repeat {
                let after = cursor
                page = try await hub.page(store, after: after) {
                    let read = try await service.streamChanges(store: storeID, tenant: tenant, after: after)
                    var text = ""
                    for change in read { text += try event(change) }
                    return StreamPage(events: text, last: read.last?.cursor, count: read.count)
                }
                guard let last = page.last else { break }
                try await writer.write(ByteBuffer(string: page.events))
                cursor = last
                advanced(cursor)
                lastWrite = clock.now
            } while page.count == OrderService.streamPageSize
            if clock.now.timeIntervalSince(lastWrite) >= quiet {
                try await writer.write(ByteBuffer(string: ": keepalive\n\n"))
                lastWrite = clock.now
            }
        }
    }

    /// One SSE event: the JSON is single-line (the encoder never pretty-prints), so one `data:` line suffices.
    static func event(_ change: StreamChange) throws -> String {
        let json = String(decoding: try WireCoding.encoder.encode(OrderResponse(change.order, projection: .some(change.projection))), as: UTF8.self)
        return "id: \(change.cursor)\nevent: order\ndata: \(json)\n\n"
    }
}
