import CremaAPI
import CremaCore
import CremaServer
import CremaService
import Testing

/// The services refuse in their own words (`ServiceError`); the API answers each refusal with the same code, mapped
/// only at the edge, so moving a refusal out of `APIError` never changes the wire.
@Suite struct ServiceErrorMappingTests {
    static let errors: [ServiceError] = [
        .invalidField(field: "role", reason: "must be one of pos"), .invalidValue(field: "name", reason: "must be 1–120 characters"),
        .unknownApp("com.example.app"), .unknownAPNsKey("ABCDEFGHIJ"), .unknownAPIKey("k_1"), .apiKeyRevoked,
        .invalidAPNsKey("not a P-256 key"), .masterKeyNotConfigured, .webhookSecretNeedsMasterKey,
        .webhookAddressRefused(host: "localhost", reason: "it resolves to a private, loopback or reserved address"), .unknownWebhook,
        .unknownWebhookDelivery, .webhookDeliveryNotDead(state: "sent"), .webhookDisabled, .idempotencyInProgress,
    ]

    @Test("the API answers a refusal with its code", arguments: errors)
    func theAPIAnswersARefusalWithItsCode(_ error: ServiceError) {
        let answer = APIError(error, uploadLimit: 0)
        #expect(answer.code == error.code)
        #expect(answer != .internalError)
    }

    @Test("fields and values keep their details") func fieldsAndValuesKeepTheirDetails() {
        #expect(APIError(ServiceError.invalidField(field: "role", reason: "r"), uploadLimit: 0) == .invalidField(field: "role", reason: "r"))
        #expect(APIError(ServiceError.invalidValue(field: "name", reason: "r"), uploadLimit: 0) == .order(.invalidValue(field: "name", reason: "r")))
        #expect(APIError(ServiceError.idempotencyInProgress, uploadLimit: 0).statusCode == 409)
    }
}
