import CremaAPNsProtocol
import Testing

@Suite struct RandomBytesTests {
    @Test("random bytes come in the count asked for, and two draws of 32 differ")
    func randomBytesComeInTheCountAskedForAndDiffer() {
        #expect([UInt8].random(count: 0).isEmpty)
        #expect([UInt8].random(count: 24).count == 24)
        // 2^-256 odds of a false failure; a generator that returned constants would fail every time.
        #expect([UInt8].random(count: 32) != [UInt8].random(count: 32))
    }

    @Test("over many draws every byte value turns up, as from a uniform source")
    func everyByteValueTurnsUp() {
        // 64 KiB of uniform bytes miss a given value with odds of about e^-256.
        #expect(Set([UInt8].random(count: 65_536)).count == 256)
    }
}
