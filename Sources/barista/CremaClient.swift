import CremaAPI
import CremaAPNsProtocol
import AsyncHTTPClient
import CremaCore
import Foundation
import NIOCore
import NIOHTTP1

/// Crema's HTTP API as `barista` uses it: bearer auth with the barista key, JSON in and out, and one
/// place where transport failures and error answers become ``BaristaError``s or ``APIFailure``s.
struct CremaClient: Sendable {
    let server: String
    let key: String
    let http: HTTPClient

    /// Runs `body` with a client and shuts the client down afterwards, whatever happens.
    static func with<T: Sendable>(
        server: String, key: String, _ body: (CremaClient) async throws -> T
    ) async throws -> T {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = .init(connect: .seconds(3), read: .seconds(15))
        // A refused port is an answer: say so at once instead of retrying the connection until the connect timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.redirectConfiguration = .disallow
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let client = CremaClient(server: server, key: key, http: http)
        do {
            let value = try await body(client)
            try? await http.shutdown()
            return value
        } catch {
            try? await http.shutdown()
            throw error
        }
    }

    // MARK: - Reading

    func get<T: Decodable>(_ path: String, as type: T.Type = T.self) async throws -> T {
        try decode(T.self, from: try await send(.GET, path))
    }

    func order(id: String) async throws -> OrderResponse {
        try await get("/v1/orders/\(escape(id))")
    }

    func board(store: String) async throws -> BoardResponse {
        try await get("/v1/stores/\(escape(store))/board")
    }

    func preview(id: String) async throws -> OrderPreview {
        try await get("/v1/orders/\(escape(id))/preview")
    }

    /// The order's delivery log, or nil while this server has no such route (it answers 404 `not_found`).
    func deliveries(id: String) async throws -> DeliveriesResponse? {
        do {
            let value: DeliveriesResponse = try await get("/v1/orders/\(escape(id))/deliveries")
            return value
        } catch let failure as APIFailure where failure.httpStatus == 404 && failure.code == "not_found" {
            return nil
        } catch let failure as APIFailure where failure.httpStatus == 405 {
            return nil
        }
    }

    /// One page of a store's orders, oldest first.
    func orders(store: String, limit: Int, cursor: String?) async throws -> OrderPageResponse {
        var path = "/v1/orders?store=\(escape(store))&limit=\(limit)"
        if let cursor { path += "&cursor=\(escape(cursor))" }
        return try await get(path)
    }

    // MARK: - Changing

    /// Posts one event. The same `Idempotency-Key` is reused for the retries inside this call, so an answer
    /// lost on the way back (connection dropped, 503) can never make the event apply twice.
    func postEvent(orderID: String, body: some Encodable & Sendable, idempotencyKey: String) async throws -> OrderResponse {
        let data = try WireCoding.encoder.encode(body)
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try decode(OrderResponse.self, from: try await send(.POST, "/v1/orders/\(escape(orderID))/events", body: data,
                    headers: ["Idempotency-Key": idempotencyKey]))
            } catch let error as BaristaError where error.status == .unavailable && !error.nothingSent && attempt < 3 {
                try await Task.sleep(for: .milliseconds(500 * attempt))
            } catch let failure as APIFailure where failure.httpStatus == 503 && attempt < 3 {
                try await Task.sleep(for: .milliseconds(500 * attempt))
            }
        }
    }

    // MARK: - Transport

    /// Sends a request; a 2xx answer returns its body, an error answer throws ``APIFailure``, and no answer
    /// at all throws a ``BaristaError`` with ``ExitStatus/unavailable``.
    func send(_ method: HTTPMethod, _ path: String, body: Data? = nil, headers: [String: String] = [:]) async throws -> Data {
        var request = HTTPClientRequest(url: server + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "barista")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await http.execute(request, timeout: .seconds(20))
            bytes = try await response.body.collect(upTo: 8 << 20)
        } catch {
            let reason = Self.reason(error)
            var failure = BaristaError(
                .unavailable, "Cannot reach Crema at \(server) (\(reason)): check --server or CREMA_SERVER, and that crema serve is running.")
            failure.nothingSent = reason == Self.refused
            throw failure
        }
        let data = Data(bytes.readableBytesView)
        let status = Int(response.status.code)
        if (200..<300).contains(status) { return data }
        if let answer = try? WireCoding.decoder.decode(APIErrorDocument.self, from: data) {
            throw APIFailure(httpStatus: status, code: answer.error.code, message: answer.error.message, details: answer.error.details ?? .null)
        }
        throw BaristaError(.failure, "\(server) answered HTTP \(status) without a Crema error body: is --server a Crema server?")
    }

    private func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        do {
            return try WireCoding.decoder.decode(T.self, from: data)
        } catch {
            throw BaristaError(.failure, "Cannot read Crema's answer (\(error)): is barista older than the server? Update barista.")
        }
    }

    private func escape(_ component: String) -> String {
        component.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?&=#+"))) ?? component
    }

    private static let refused = "connection refused"

    /// A short reason for a transport failure ("connection refused", "timed out").
    private static func reason(_ error: any Error) -> String {
        let text = String(describing: error)
        if text.localizedCaseInsensitiveContains("refused") { return refused }
        if text.localizedCaseInsensitiveContains("timeout") || text.localizedCaseInsensitiveContains("timed out") { return "timed out" }
        if text.localizedCaseInsensitiveContains("resolve") || text.localizedCaseInsensitiveContains("lookup") { return "unknown host" }
        return text.count > 80 ? String(text.prefix(80)) + "…" : text
    }
}
