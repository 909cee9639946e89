import CremaPostgres
import Foundation
import Testing

@Suite("a uuid's lowercase text") struct UUIDLowercaseTextTests {
    @Test("it is Foundation's text lowercased, for edge and random ids")
    func itIsFoundationsTextLowercased() throws {
        let edges = [
            "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "0123ABCD-4567-89EF-FEDC-BA9876543210",
        ].compactMap(UUID.init(uuidString:))
        #expect(edges.count == 3)
        for id in edges + (0..<500).map({ _ in UUID() }) {
            #expect(id.lowercasedText == id.uuidString.lowercased())
            #expect(UUID(uuidString: id.lowercasedText) == id)
        }
    }

    @Test("the canonical text parses back in either case, and anything else is refused")
    func theCanonicalTextParsesBack() {
        for id in (0..<500).map({ _ in UUID() }) {
            #expect(UUID(canonicalText: id.lowercasedText) == id)
            #expect(UUID(canonicalText: id.uuidString) == id)
        }
        for bad in ["", "0123abcd-4567-89ef-fedc-ba987654321", "0123abcd-4567-89ef-fedc-ba98765432100", "0123abcd-4567-89ef-fedc_ba9876543210",
                    "0123abcg-4567-89ef-fedc-ba9876543210", "0123abcd4567-89ef-fedc-ba9876543210-", "{0123abcd-4567-89ef-fedc-ba98765432}"] {
            #expect(UUID(canonicalText: bad) == nil, "\(bad)")
        }
    }
}
