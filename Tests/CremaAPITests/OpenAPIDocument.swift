import CremaAPNsProtocol
import Foundation
import Yams

/// The server's `/openapi.yaml`, read from the source tree, with just enough `$ref`/`allOf` resolution to list
/// a schema's properties.
struct OpenAPIDocument {
    let root: [String: Any]

    static let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/CremaServer/Resources/openapi.yaml")

    static func load() throws -> OpenAPIDocument {
        let text = try String(contentsOf: url, encoding: .utf8)
        guard let root = try Yams.load(yaml: text) as? [String: Any] else { throw Failure("openapi.yaml is not a mapping") }
        return OpenAPIDocument(root: root)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    func schema(_ name: String) throws -> [String: Any] {
        let schemas = (root["components"] as? [String: Any])?["schemas"] as? [String: Any]
        guard let schema = schemas?[name] as? [String: Any] else { throw Failure("no schema \(name) in openapi.yaml") }
        return schema
    }

    /// A schema with `$ref` followed and `allOf` merged.
    func resolved(_ schema: [String: Any]) throws -> [String: Any] {
        if let ref = schema["$ref"] as? String {
            return try resolved(try self.schema(String(ref.split(separator: "/").last!)))
        }
        guard let parts = schema["allOf"] as? [[String: Any]] else { return schema }
        var properties: [String: Any] = [:]
        var required: [String] = []
        for part in try parts.map(resolved) {
            properties.merge(part["properties"] as? [String: Any] ?? [:]) { $1 }
            required += part["required"] as? [String] ?? []
        }
        return ["type": "object", "properties": properties, "required": required]
    }

    /// The property names of a schema (after resolution), and the required ones.
    func keys(of name: String) throws -> (properties: Set<String>, required: Set<String>) {
        try keys(resolved(schema(name)))
    }

    func keys(_ schema: [String: Any]) throws -> (properties: Set<String>, required: Set<String>) {
        let schema = try resolved(schema)
        return (Set((schema["properties"] as? [String: Any] ?? [:]).keys), Set(schema["required"] as? [String] ?? []))
    }

    /// The union of the properties of a `oneOf` schema's alternatives.
    func oneOfKeys(_ name: String) throws -> Set<String> {
        guard let alternatives = try schema(name)["oneOf"] as? [[String: Any]] else { throw Failure("\(name) has no oneOf") }
        return try alternatives.reduce(into: Set<String>()) { $0.formUnion(try keys($1).properties) }
    }

    /// The schema of a property of a schema.
    func property(_ name: String, of schemaName: String) throws -> [String: Any] {
        let properties = try resolved(schema(schemaName))["properties"] as? [String: Any]
        guard let property = properties?[name] as? [String: Any] else { throw Failure("\(schemaName) has no property \(name)") }
        return try resolved(property)
    }
}
