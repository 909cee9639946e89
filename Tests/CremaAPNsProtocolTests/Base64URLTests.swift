import CremaAPNsProtocol
import Foundation
import Testing

/// Base64url without padding, against RFC 4648's vectors and Foundation's base64 for every byte value.
@Suite struct Base64URLTests {
    @Test("the RFC vectors encode without padding and decode back") func theRFCVectorsEncodeWithoutPaddingAndDecodeBack() {
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Data(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Data(plain.utf8))
        }
    }

    @Test("every byte value and length round trips through the URL alphabet") func everyByteValueAndLengthRoundTripsThroughTheURLAlphabet() {
        // 0xfb 0xff encodes to "+/" in plain base64: the two characters base64url replaces.
        let bytes = (0...255).map { UInt8($0) } + [0xfb, 0xff, 0xbf]
        for length in 0...bytes.count {
            let data = Data(bytes.prefix(length))
            let encoded = Base64URL.encode(data)
            #expect(encoded.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            #expect(encoded.count == (length * 8 + 5) / 6)
            #expect(Base64URL.decode(encoded) == data)
        }
    }

    @Test("the two characters plain base 64 would use are replaced") func theTwoCharactersPlainBase64WouldUseAreReplaced() {
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.encode([0xfb, 0xff, 0xbf]) == "-_-_")
    }

    @Test("text outside the alphabet or of an impossible length is refused", arguments: ["Zg==", "Zm+v", "Zm/v", "Zm9v YmFy", "Zm9vé", "Z", "Zm9vY"])
    func textOutsideTheAlphabetOrOfAnImpossibleLengthIsRefused(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}
