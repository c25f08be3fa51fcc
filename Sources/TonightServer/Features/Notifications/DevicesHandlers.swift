import Foundation
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct DevicesHandlers: Sendable {
    let devices: DeviceRepository

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
