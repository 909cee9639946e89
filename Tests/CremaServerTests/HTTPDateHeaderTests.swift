import CremaClock
@testable import CremaServer
import CremaTestSupport
import Foundation
import Synchronization
import Testing

/// The `Date` field every answer carries, against Foundation's formatter for the same instant.
@Suite struct HTTPDateHeaderTests {
    @Test("the field is the IMF fixdate foundation writes for the same second") func theFieldIsTheIMFFixdateFoundationWritesForTheSameSecond() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var generator = SeededGenerator(seed: 0x4854_5450)
        // 1583 to 9999: Foundation's calendar is Julian before the Gregorian reform, RFC 9110's is not.
        let seconds = [0, -1, 784_111_777, 951_782_400, 253_402_300_799]
            + (0..<5_000).map { _ in Int.random(in: -12_212_553_600...253_402_300_799, using: &generator) }
        for second in seconds {
            #expect(HTTPDateHeader.text(secondsSince1970: second) == formatter.string(from: Date(timeIntervalSince1970: Double(second))))
        }
        #expect(HTTPDateHeader.text(secondsSince1970: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test("the field follows the clock from one second to the next") func theFieldFollowsTheClockFromOneSecondToTheNext() {
        let now = Mutex(Date(timeIntervalSince1970: 784_111_777.2))
        let header = HTTPDateHeader(clock: CremaClock(now: { now.withLock { $0 } }, sleep: { _ in }))
        #expect(header.value == "Sun, 06 Nov 1994 08:49:37 GMT")
        now.withLock { $0 = Date(timeIntervalSince1970: 784_111_777.9) }
        #expect(header.value == "Sun, 06 Nov 1994 08:49:37 GMT")
        now.withLock { $0 = Date(timeIntervalSince1970: 784_111_778.0) }
        #expect(header.value == "Sun, 06 Nov 1994 08:49:38 GMT")
    }
}
