import CremaAPI
import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat
import HTTPTypes

/// Builds JSON responses with the API's encoder.
enum JSONResponse {
    static func make(_ status: HTTPResponse.Status, _ value: some Encodable, headers: HTTPFields = [:]) throws -> Response {
        make(status, raw: String(decoding: try WireCoding.encoder.encode(value), as: UTF8.self), headers: headers)
    }

    static func make(_ status: HTTPResponse.Status, raw body: String, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

extension Request {
    /// The body, refused with 413 above the context's limit.
    func bodyData(context: CremaRequestContext) async throws -> Data {
        var request = self
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        return Data(buffer: buffer)
    }
}
