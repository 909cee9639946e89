import CremaCore
import CremaPostgres
import CremaServer
import CremaTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// Every status the router's middleware chain can answer on a route is documented for that route in `/openapi.yaml`.
/// Walks the router itself, not a list: every route it registers is sent requests through the real chain
/// (observability, errors, authentication, rate limit, then the route) under each condition a middleware or a route's
/// preamble answers to: no credential, a refused one, each role's key, a customer token, a generated key while the
/// database is down, a body past the upload limit, and a caller past its rate. Whatever the router answers must be a
/// status the document lists for that method and path, so a route added under the rate limiter (or any middleware)
/// fails here until its statuses are written down, whatever the fuzzer happens to reach. The database is unreachable
/// throughout: every route that reads it answers 503 rather than its data, which is what these probes look for.
@Suite struct OpenAPIStatusTests {
    /// A value each path parameter accepts; a route with a parameter missing here fails the test.
    static let samples: [String: String] = [
        "store": "market-st", "id": "7d3f0c52-1a9e-4c8e-9c39-5b1d2b8f6a10", "tenant": "default", "bundle_id": "cafe.crema.test",
        "key_id": "ABC123DEFG", "delivery": "1", "ref": "c-9", "kind": "alert", "token": String(repeating: "ab", count: 32),
    ]

    /// `METHOD /path` → the statuses the document lists under the operation's `responses`: paths sit at two spaces,
    /// methods at four, `responses:` at six and statuses at eight.
    static func documentedStatuses() throws -> [String: Set<Int>] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources/CremaServer/Resources/openapi.yaml")
        let text = try String(contentsOf: url.standardizedFileURL, encoding: .utf8)
        var statuses: [String: Set<Int>] = [:]
        var inPaths = false
        var path: String?
        var operation: String?
        var inResponses = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let indent = line.prefix { $0 == " " }.count
            if indent == 0, !line.isEmpty { inPaths = line == "paths:" }
            guard inPaths, !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            let key = String(line.dropFirst(indent).prefix { $0 != ":" })
            switch indent {
            case 2 where key.hasPrefix("/"):
                path = key
                operation = nil
            case 4:
                operation = path.map { "\(key.uppercased()) \($0)" }
                inResponses = false
            case 6:
                inResponses = key == "responses"
            case 8 where inResponses:
                if let operation, let status = Int(key.trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))) {
                    statuses[operation, default: []].insert(status)
                }
            default:
                break
            }
        }
        return statuses
    }

    /// The request line of a route, its parameters filled in.
    static func uri(for path: String) throws -> String {
        var filled: [String] = []
        for segment in path.split(separator: "/") {
            guard segment.hasPrefix("{") else {
                filled.append(String(segment))
                continue
            }
            let name = String(segment.dropFirst().dropLast())
            filled.append(try #require(samples[name], "no sample value for the path parameter {\(name)} of \(path)"))
        }
        return "/" + filled.joined(separator: "/") + "?store=market-st"
    }

    /// Each credential a probe presents: none, a refused bearer, each role's key, a customer token, and a generated key
    /// (which only the database can check: down, it is a 503 on any route).
    static func credentials() async throws -> [String?] {
        let customer = try await CustomerTokenFixtures.hs256()
        return [nil, "Bearer not-a-key", "Bearer \(APIHarness.adminKey)", "Bearer \(customer)", "Bearer crema_0123456789abcdef_\(String(repeating: "A", count: 43))"]
            + Role.allCases.compactMap { APIHarness.keys[$0].map { "Bearer \($0)" } }
    }

    /// A router over an unreachable database, with the harness's keys and customer tokens and `rate` for every caller;
    /// its rate limiter's clock stands still, so an allowance spent is never refilled.
    static func router(rate: RateSetting) async throws -> (Router<CremaRequestContext>, PostgresPool) {
        let pool = PostgresPool(.init(conninfo: "host=127.0.0.1 port=1 connect_timeout=1", acquireTimeout: .seconds(1)))
        var limits = TenantLimits.defaults
        limits.rate = rate
        let clock = TestClock(CustomerTokenFixtures.now)
        var dependencies = APIHarness.dependencies(try APIHarness.process(pool: pool, clock: clock.crema, limits: limits))
        dependencies.customerTokens = try await CustomerTokenFixtures.verifier(CustomerTokenFixtures.harnessKeys)
        return (CremaApplication.router(dependencies), pool)
    }

    /// One request through `client`; its status, noted in `observed` under `route` with how it was had.
    static func probe(
        _ client: some TestClientProtocol, _ route: String, uri: String, method: HTTPRequest.Method, credential: String?, body: ByteBuffer?,
        what: String, into observed: inout [String: [Int: String]]
    ) async throws -> Int {
        var headers: HTTPFields = [.contentType: "application/json", HTTPField.Name("Idempotency-Key")!: UUID().uuidString]
        if let credential { headers[.authorization] = credential }
        let status = try await client.executeRequest(uri: uri, method: method, headers: headers, body: body).status.code
        if observed[route]?[status] == nil { observed[route, default: [:]][status] = "\(what), \(credential.map { String($0.prefix(24)) } ?? "no credential")" }
        return status
    }

    @Test("every status the router's middleware and route preambles answer is documented for its route, 429 included")
    func everyStatusTheRouterAnswersIsDocumented() async throws {
        let documented = try Self.documentedStatuses()
        let credentials = try await Self.credentials()
        let oversized = ByteBuffer(string: #"{"name":""# + String(repeating: "a", count: 70 * 1024) + #""}"#)

        // Without a rate limit: what each credential gets, with a small body and with one past the upload limit.
        let (open, openPool) = try await Self.router(rate: .off)
        let routes = open.routes.map { (method: $0.method, path: $0.path.description) }
        #expect(routes.count >= 50)
        var observed = try await Application(router: open).test(.router) { client in
            var observed: [String: [Int: String]] = [:]
            for route in routes {
                let name = "\(route.method.rawValue) \(route.path)"
                let uri = try Self.uri(for: route.path)
                for credential in credentials {
                    let small = [.post, .put].contains(route.method) ? ByteBuffer(string: "{}") : nil
                    _ = try await Self.probe(
                        client, name, uri: uri, method: route.method, credential: credential, body: small, what: "a small body", into: &observed)
                    _ = try await Self.probe(
                        client, name, uri: uri, method: route.method, credential: credential, body: oversized, what: "a body past the limit",
                        into: &observed)
                }
            }
            return observed
        }
        await openPool.close()

        // Every caller's allowance is one request, never refilled: once each credential has spent it, whatever it asks
        // of a route the rate limiter stands in front of is refused.
        let (limited, limitedPool) = try await Self.router(rate: .limited(try #require(RequestRate(perSecond: 1, burst: 1))))
        let (limitedObserved, refused) = try await Application(router: limited).test(.router) { client in
            var observed: [String: [Int: String]] = [:]
            var refused = 0
            for credential in credentials {
                _ = try await client.executeRequest(
                    uri: "/v1/orders?store=market-st", method: .get, headers: credential.map { [.authorization: $0] } ?? [:], body: nil)
            }
            for route in routes {
                let name = "\(route.method.rawValue) \(route.path)"
                let uri = try Self.uri(for: route.path)
                for credential in credentials {
                    let small = [.post, .put].contains(route.method) ? ByteBuffer(string: "{}") : nil
                    let status = try await Self.probe(
                        client, name, uri: uri, method: route.method, credential: credential, body: small, what: "past its rate", into: &observed)
                    if status == 429 { refused += 1 }
                }
            }
            return (observed, refused)
        }
        await limitedPool.close()
        // The limiter is in front of the routes: the walk above saw it refuse, and the checks below hold every route to it.
        #expect(refused >= routes.count)
        observed.merge(limitedObserved) { $0.merging($1) { first, _ in first } }

        for route in routes {
            let name = "\(route.method.rawValue) \(route.path)"
            let listed = documented[name] ?? []
            for (status, how) in (observed[name] ?? [:]).sorted(by: { $0.key < $1.key }) where !listed.contains(status) {
                Issue.record("\(name) answers \(status) (\(how)), which /openapi.yaml does not list for it (it lists \(listed.sorted()))")
            }
        }
    }
}
