import CremaPostgres
import Foundation
import Testing

/// An empty array into an `Array` is answered without a decoder; everything else, an empty array into a `String` or
/// `Data` (collections too) included, still goes through `JSONDecoder` with its answers and errors.
@Suite struct PostgresJSONDecodeTests {
    struct Item: Codable, Equatable { var name: String }

    @Test("an empty array decodes into arrays without a decoder and into nothing the decoder refuses") func anEmptyArrayDecodesIntoArraysWithoutADecoderAndIntoNothingTheDecoderRefuses() throws {
        let empty = PostgresJSON(text: "[]")
        #expect(try empty.decode([Item].self) == [])
        #expect(try empty.decode([String].self) == [])
        #expect(throws: DecodingError.self) { try empty.decode(Item.self) }
        #expect(throws: DecodingError.self) { try empty.decode([String: Item].self) }
        #expect(throws: DecodingError.self) { try empty.decode(String.self) }
        #expect(throws: DecodingError.self) { try empty.decode(Data.self) }
        #expect(try empty.decode(Set<String>.self).isEmpty)
        #expect(try PostgresJSON(text: "[ ]").decode([Item].self) == [])
        #expect(try PostgresJSON(text: #"[{"name": "Oat latte"}]"#).decode([Item].self) == [Item(name: "Oat latte")])
        #expect(throws: DecodingError.self) { try PostgresJSON(text: #"[{"nom": 1}]"#).decode([Item].self) }
    }
}
