import Crypto
import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct DevicesHandlers: Sendable {
    let devices: DeviceRepository
    let webPush: WebPushSender
    let subscriptions: WebPushRepository

    func addWebPushSubscription(_ input: Operations.AddWebPushSubscription.Input) async throws
        -> Operations.AddWebPushSubscription.Output
    {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        var issues: [FieldIssue] = []
        if !webPush.acceptable(body.endpoint) {
            issues.append(
                FieldIssue(
                    field: "endpoint", code: "invalid_endpoint",
                    message: "This is not the https address of a push service."))
        }
        if Base64URL.decode(body.keys.p256dh).flatMap({ try? P256.KeyAgreement.PublicKey(x963Representation: $0) })
            == nil
        {
            issues.append(
                FieldIssue(field: "keys.p256dh", code: "invalid_key", message: "This is not a P-256 public key."))
        }
        if Base64URL.decode(body.keys.auth)?.count != 16 {
            issues.append(
                FieldIssue(field: "keys.auth", code: "invalid_key", message: "The auth secret must be 16 bytes."))
        }
        guard issues.isEmpty else { throw APIError.validation(issues) }
        try await subscriptions.register(
            WebPushSubscriptionRecord(
                endpoint: body.endpoint, userID: caller.userID, p256dh: body.keys.p256dh, auth: body.keys.auth,
                createdAt: Clock.millis()))
        return .noContent(.init())
    }

    func removeWebPushSubscription(_ input: Operations.RemoveWebPushSubscription.Input) async throws
        -> Operations.RemoveWebPushSubscription.Output
    {
        let caller = try RequestInfo.requireMember()
        try await subscriptions.unregister(endpoint: input.query.endpoint, userID: caller.userID)
        return .noContent(.init())
    }

    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        let caller = try RequestInfo.requireMember()
        let items = try await devices.devices(of: caller.userID).map(Components.Schemas.Device.init)
        return .ok(.init(body: .json(.init(items: items))))
    }

    func registerDevice(_ input: Operations.RegisterDevice.Input) async throws -> Operations.RegisterDevice.Output {
        let caller = try RequestInfo.requireMember()
        let body = input.body.json
        let token = body.token.lowercased()
        guard (32...200).contains(token.count), token.allSatisfy(\.isHexDigit) else {
            throw APIError.validation([
                .init(field: "token", code: "invalid", message: "An APNs device token is 32–200 hex digits.")
            ])
        }
        let device = try await devices.register(
            token: token, platform: body.platform.rawValue, userID: caller.userID, now: Clock.millis())
        return .ok(.init(body: .json(.init(device))))
    }

    func unregisterDevice(_ input: Operations.UnregisterDevice.Input) async throws
        -> Operations.UnregisterDevice.Output
    {
        let caller = try RequestInfo.requireMember()
        try await devices.unregister(token: input.path.token.lowercased(), userID: caller.userID)
        return .noContent(.init())
    }
}

extension Components.Schemas.Device {
    init(_ device: DeviceRecord) {
        self.init(
            token: device.token, platform: .init(rawValue: device.platform) ?? .apns,
            createdAt: Clock.date(device.createdAt))
    }
}
