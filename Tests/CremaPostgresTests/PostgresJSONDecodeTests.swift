import CremaPostgres
import Foundation
import Testing

/// An empty array is answered without a decoder; everything else, and an empty array where no collection is asked
/// for, still goes through `JSONDecoder` with its errors.
@Suite struct PostgresJSONDecodeTests {
    struct Item: Codable, Equatable { var name: String }

    @Test("an empty array decodes into any collection and nothing else") func anEmptyArrayDecodesIntoAnyCollectionAndNothingElse() throws {
        let empty = PostgresJSON(text: "[]")
        #expect(try empty.decode([Item].self) == [])
        #expect(try empty.decode([String].self) == [])
        #expect(throws: DecodingError.self) { try empty.decode(Item.self) }
        #expect(throws: DecodingError.self) { try empty.decode([String: Item].self) }
        #expect(try PostgresJSON(text: "[ ]").decode([Item].self) == [])
        #expect(try PostgresJSON(text: #"[{"name": "Oat latte"}]"#).decode([Item].self) == [Item(name: "Oat latte")])
        #expect(throws: DecodingError.self) { try PostgresJSON(text: #"[{"nom": 1}]"#).decode([Item].self) }
    }
}
