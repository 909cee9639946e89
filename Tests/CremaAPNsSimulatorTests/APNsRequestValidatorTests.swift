import CremaAPNsProtocol
import Foundation
import Testing

@testable import CremaAPNsSimulator

/// The simulator's rules as pure functions, without a connection: the device path, a Live Activity's `aps`, a
/// channel's create body and a broadcast's body each get Apple's status and reason (docs/apns.md). The same rules
/// over real HTTP/2 and TLS are CremaAPNsTests' ValidationRuleTests.
@Suite struct APNsRequestValidatorTests {
    typealias Refusal = APNsRequestValidator.Refusal

    static func aps(_ text: String) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) }

    @Test("a device path names a token of 16 to 512 hex digits, posted") func aDevicePathNamesATokenOf16To512HexDigitsPosted() throws {
        let validator = APNsRequestValidator()
        #expect(try validator.deviceToken(method: "POST", path: "/3/device/00112233445566778899").get() == "00112233445566778899")
        #expect(validator.deviceToken(method: "GET", path: "/3/device/0011223344556677").failureReason == "MethodNotAllowed")
        #expect(validator.deviceToken(method: "POST", path: "/3/device/").failureReason == "MissingDeviceToken")
        #expect(validator.deviceToken(method: "POST", path: "/3/devices/0011223344556677").failureReason == "BadPath")
        #expect(validator.deviceToken(method: "POST", path: "/3/device/001").failureReason == "BadDeviceToken")
        #expect(validator.deviceToken(method: "POST", path: "/3/device/zz112233445566778899").failureReason == "BadDeviceToken")
        #expect(validator.deviceToken(method: "POST", path: "/3/device/" + String(repeating: "ab", count: 257)).failureReason == "BadDeviceToken")
    }

    @Test("a Live Activity push needs an event, a timestamp and a content state, and only a start carries attributes")
    func aLiveActivityPushNeedsAnEventATimestampAndAContentStateAndOnlyAStartCarriesAttributes() throws {
        #expect(throws: Never.self) { try APNsRequestValidator.checkLiveActivity(try Self.aps(#"{"event":"update","timestamp":1,"content-state":{}}"#)).get() }
        let start = #"{"event":"start","timestamp":1,"content-state":{},"attributes-type":"A","attributes":{},"alert":{"title":"t"}}"#
        #expect(throws: Never.self) { try APNsRequestValidator.checkLiveActivity(try Self.aps(start)).get() }
        let refused = [
            #"{"event":"begin","timestamp":1,"content-state":{}}"#: "aps.event must be start, update or end",
            #"{"event":"update","timestamp":"now","content-state":{}}"#: "aps.timestamp must be a number (Unix seconds)",
            #"{"event":"update","timestamp":1}"#: "aps.content-state must be an object",
            #"{"event":"update","timestamp":1,"content-state":{},"stale-date":"soon"}"#: "aps.stale-date must be a number",
            #"{"event":"start","timestamp":1,"content-state":{},"attributes":{},"alert":{}}"#: "a start needs aps.attributes-type",
            #"{"event":"end","timestamp":1,"content-state":{},"attributes-type":"A"}"#: "only a start may carry aps.attributes and aps.attributes-type",
        ]
        for (text, detail) in refused {
            let result = APNsRequestValidator.checkLiveActivity(try Self.aps(text))
            #expect(result.refusal == Refusal(400, "BadRequestPayload", detail), "\(text)")
        }
    }

    @Test("a channel is created with LiveActivity and a storage policy of 0 or 1") func aChannelIsCreatedWithLiveActivityAndAStoragePolicyOf0Or1() throws {
        #expect(try APNsRequestValidator.channelStorage(Data(#"{"message-storage-policy":1,"push-type":"LiveActivity"}"#.utf8)).get() == .latest)
        #expect(try APNsRequestValidator.channelStorage(Data(#"{"message-storage-policy":0,"push-type":"liveactivity"}"#.utf8)).get() == APNsChannelStorage.none)
        #expect(APNsRequestValidator.channelStorage(Data()).failureReason == "PayloadEmpty")
        #expect(APNsRequestValidator.channelStorage(Data("[]".utf8)).failureReason == "BadRequestPayload")
        #expect(APNsRequestValidator.channelStorage(Data(#"{"message-storage-policy":0}"#.utf8)).failureReason == "MissingPushType")
        #expect(APNsRequestValidator.channelStorage(Data(#"{"message-storage-policy":0,"push-type":"alert"}"#.utf8)).failureReason == "InvalidPushType")
        #expect(APNsRequestValidator.channelStorage(Data(#"{"message-storage-policy":2,"push-type":"LiveActivity"}"#.utf8)).failureReason == "BadRequestParams")
    }

    @Test("a broadcast body is an update or an end within 5120 bytes") func aBroadcastBodyIsAnUpdateOrAnEndWithin5120Bytes() {
        let update = #"{"aps":{"event":"update","timestamp":1,"content-state":{"n":1}}}"#
        #expect(APNsRequestValidator.checkBroadcastBody(Data(update.utf8)) == nil)
        #expect(APNsRequestValidator.checkBroadcastBody(Data())?.reason == "PayloadEmpty")
        let start = #"{"aps":{"event":"start","timestamp":1,"content-state":{},"attributes-type":"A","attributes":{},"alert":{}}}"#
        #expect(APNsRequestValidator.checkBroadcastBody(Data(start.utf8))?.reason == "BadRequestPayload")
        let large = #"{"aps":{"event":"update","timestamp":1,"content-state":{"n":""# + String(repeating: "x", count: 5120) + #""}}}"#
        #expect(APNsRequestValidator.checkBroadcastBody(Data(large.utf8)) == Refusal(413, "PayloadTooLarge", "the body is \(large.utf8.count) bytes; the limit is 5120"))
    }

    @Test("a request id is a canonical UUID") func aRequestIDIsACanonicalUUID() {
        #expect(APNsRequestValidator.isCanonicalUUID("123e4567-e89b-12d3-a456-426614174000"))
        #expect(!APNsRequestValidator.isCanonicalUUID("123e4567e89b12d3a456426614174000"))
        #expect(!APNsRequestValidator.isCanonicalUUID("123e4567-e89b-12d3-a456-42661417400g"))
    }
}

extension Result where Failure == APNsRequestValidator.Refusal {
    var refusal: Failure? { if case .failure(let refusal) = self { refusal } else { nil } }
    var failureReason: String? { refusal?.reason }
}

/// Crema's own rule on top of Apple's (push-anchors P8): with `startsNeedCollapseID`, a push-to-start must name what it
/// starts in `apns-collapse-id`, so that a start sent twice collapses on the phone.
@Suite struct StartCollapseIDRuleTests {
    static let start = Data(#"{"aps":{"event":"start","timestamp":1,"content-state":{},"attributes-type":"A","attributes":{},"alert":{"title":"t"}}}"#.utf8)

    static func exchange(collapseID: String?, body: Data = start) -> SimulatorExchange {
        var headers: [(name: String, value: String)] = [("apns-push-type", "liveactivity")]
        if let collapseID { headers.append(("apns-collapse-id", collapseID)) }
        return SimulatorExchange(method: "POST", uri: "/3/device/00112233445566778899", headers: headers, body: body, receivedAt: Date())
    }

    @Test("a start without apns-collapse-id is refused as BadCollapseId when the rule is on, and passes when it is off")
    func aStartWithoutACollapseIDIsRefusedWhenTheRuleIsOn() {
        let strict = APNsRequestValidator(startsNeedCollapseID: true)
        let refusal = strict.checkStartCollapseID(Self.exchange(collapseID: nil), pushType: "liveactivity")
        #expect(refusal.failureReason == "BadCollapseId")
        #expect((try? strict.checkStartCollapseID(Self.exchange(collapseID: "start-1"), pushType: "liveactivity").get()) != nil)
        #expect((try? APNsRequestValidator().checkStartCollapseID(Self.exchange(collapseID: nil), pushType: "liveactivity").get()) != nil)
    }

    @Test("an update or end needs no collapse id") func anUpdateOrEndNeedsNoCollapseID() {
        let strict = APNsRequestValidator(startsNeedCollapseID: true)
        let update = Data(#"{"aps":{"event":"update","timestamp":1,"content-state":{}}}"#.utf8)
        #expect((try? strict.checkStartCollapseID(Self.exchange(collapseID: nil, body: update), pushType: "liveactivity").get()) != nil)
    }
}
