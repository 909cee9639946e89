import CremaAPNsProtocol
import Foundation
import Testing

@Suite struct HexEncodingTests {
    @Test("bytes become two lowercase digits each, leading zeros kept")
    func bytesBecomeTwoLowercaseDigitsEach() {
        #expect([0x00, 0x0f, 0x10, 0xab, 0xff].hexEncoded == "000f10abff")
        #expect([UInt8]().hexEncoded == "")
    }

    @Test("every byte value is written as printf's %02x writes it")
    func everyByteValueMatchesPrintf() {
        for byte in UInt8.min...UInt8.max {
            #expect([byte].hexEncoded == String(format: "%02x", byte))
        }
    }

    @Test("any sequence of bytes encodes the same: data, a prefix, an array")
    func anySequenceOfBytesEncodesTheSame() {
        let data = Data([0xde, 0xad, 0xbe, 0xef, 0x01])
        #expect(data.hexEncoded == "deadbeef01")
        #expect(data.prefix(2).hexEncoded == "dead")
        #expect(AnySequence(data).hexEncoded == "deadbeef01")
    }
}
