import CremaAPNsProtocol
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHPACK

/// The wire side of broadcasts and channel management: header blocks exactly as Apple's broadcast pages name them
/// (docs/apns.md §5.6) and the answers read back.
extension APNsClient {
    /// A broadcast's header block: `apns-channel-id`, `apns-push-type: liveactivity`, `apns-priority`,
    /// `apns-expiration` (0 when the request has none) and `apns-request-id`; never `apns-topic`, since the app is
    /// in the path and a topic with a push-type suffix is 400 `TopicDisallowed`.
    static func broadcastHeaders(for request: APNsBroadcastRequest, jwt: String, endpoint: APNsEndpoint) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: endpoint.authority)
        headers.add(name: ":path", value: endpoint.pathPrefix + "/4/broadcasts/apps/" + request.bundleID)
        headers.add(name: "content-length", value: String(request.body.count))
        headers.add(name: "authorization", value: "bearer " + jwt)
        headers.add(name: "apns-channel-id", value: request.channelID)
        headers.add(name: "apns-push-type", value: APNsPushType.liveactivity.rawValue)
        headers.add(name: "apns-priority", value: String(request.priority))
        let expiration = request.expiration.map { Int64($0.timeIntervalSince1970.rounded(.down)) } ?? 0
        headers.add(name: "apns-expiration", value: String(expiration))
        headers.add(name: "apns-request-id", value: request.requestID.uuidString.lowercased())
        return headers
    }

    /// A channel-management header block; `apns-channel-id` for read and delete, a JSON body for create.
    static func channelHeaders(
        method: String, path: String, channelID: String?, bodyBytes: Int?, requestID: UUID, jwt: String, endpoint: APNsEndpoint
    ) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.add(name: ":method", value: method)
        headers.add(name: ":scheme", value: "https")
        headers.add(name: ":authority", value: endpoint.authority)
        headers.add(name: ":path", value: path)
        if let bodyBytes {
            headers.add(name: "content-type", value: "application/json")
            headers.add(name: "content-length", value: String(bodyBytes))
        }
        headers.add(name: "authorization", value: "bearer " + jwt)
        if let channelID { headers.add(name: "apns-channel-id", value: channelID) }
        headers.add(name: "apns-request-id", value: requestID.uuidString.lowercased())
        return headers
    }

    /// Reads a channel-management answer: `apns-channel-id` (create), `message-storage-policy` (read),
    /// `channels` (list), `reason` (a refusal), `Retry-After` and `apns-request-id`.
    static func channelAnswer(status: Int, headers: HPACKHeaders, body: ByteBuffer, asked channelID: String?) -> APNsChannelAnswer {
        var answer = APNsChannelAnswer(status: status, channelID: headers.first(name: "apns-channel-id") ?? channelID)
        answer.requestID = headers.first(name: "apns-request-id").flatMap(UUID.init(uuidString:))
        if let retryAfter = headers.first(name: "retry-after"),
            let seconds = TimeInterval(retryAfter.trimmingCharacters(in: .whitespaces)), seconds.isFinite, seconds >= 0
        {
            answer.retryAfter = seconds
        }
        if body.readableBytes > 0, let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] {
            answer.reason = object["reason"] as? String
            if let policy = (object["message-storage-policy"] as? NSNumber)?.intValue {
                answer.storage = APNsChannelStorage(messageStoragePolicy: policy)
            }
            answer.channelIDs = object["channels"] as? [String] ?? []
        }
        return answer
    }

    /// A bundle ID goes into the `:path` as it is: anything but letters, digits, `.` and `-` is refused before
    /// it reaches the wire.
    static func checkBundleID(_ bundleID: String) throws(APNsClientError) {
        guard !bundleID.isEmpty, bundleID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") })
        else { throw .invalidRequest("\"\(bundleID)\" is not a bundle ID") }
    }
}
