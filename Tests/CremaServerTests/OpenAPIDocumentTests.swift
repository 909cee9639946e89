import CremaAPNsProtocol
import CremaPostgres
import CremaServer
import Foundation
import Hummingbird
import Testing

/// The served OpenAPI document and the router must describe the same set of routes.
@Suite struct OpenAPIDocumentTests {
    /// `METHOD /path` for every operation in the document: paths sit at two spaces, methods at four.
    static func documentedRoutes() throws -> Set<String> {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Sources/CremaServer/Resources/openapi.yaml")
        let text = try String(contentsOf: url.standardizedFileURL, encoding: .utf8)
        var routes: Set<String> = []
        var inPaths = false
        var path: String?
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" "), !line.isEmpty { inPaths = line == "paths:" }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).prefix { $0 != ":" })
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), let path {
                let key = line.dropFirst(4).prefix { $0 != ":" }
                if methods.contains(String(key)) { routes.insert("\(key.uppercased()) \(path)") }
            }
        }
        return routes
    }

    @Test("every route the router serves is documented and vice versa") func everyRouteTheRouterServesIsDocumentedAndViceVersa() throws {
        let pool = PostgresPool(.init(conninfo: "host=127.0.0.1 port=1"))
        let router = CremaApplication.router(try APIHarness.dependencies(pool: pool))
        let served = Set(router.routes.map { "\($0.method.rawValue) \($0.path.description)" })
        let documented = try Self.documentedRoutes()
        #expect(served.subtracting(documented).isEmpty, "served but not documented")
        #expect(documented.subtracting(served).isEmpty, "documented but not served")
        #expect(served.count >= 10)
    }
}
