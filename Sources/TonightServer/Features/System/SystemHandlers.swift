import Foundation
import OpenAPIRuntime
import Prometheus
import TonightAPI
import TonightCore

/// The operations of this feature (routed by the generated `APIHandlers+Routes.swift`).
struct SystemHandlers: Sendable {
    let database: Database
    let config: AppConfig
    let metrics: PrometheusCollectorRegistry
    let openAPIDocument: String
    /// The VAPID public key browsers subscribe with.
    let webPushPublicKey: String

    func getHealth(_ input: Operations.GetHealth.Input) async throws -> Operations.GetHealth.Output {
        let healthy = await database.ping()
        let body = Components.Schemas.Health(
            status: healthy ? .ok : .degraded, database: healthy ? .ok : .unreachable,
            databaseKind: database.kind == .postgres ? .postgres : .sqlite, version: TonightVersion.current)
        return healthy ? .ok(.init(body: .json(body))) : .serviceUnavailable(.init(body: .json(body)))
    }

    func getMetrics(_ input: Operations.GetMetrics.Input) async throws -> Operations.GetMetrics.Output {
        .ok(.init(body: .plainText(HTTPBody(metrics.emitToBuffer()))))
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws
        -> Operations.GetOpenAPIDocument.Output
    {
        .ok(.init(body: .yaml(HTTPBody(openAPIDocument))))
    }

    func getClientConfig(_ input: Operations.GetClientConfig.Input) async throws -> Operations.GetClientConfig.Output {
        .ok(
            .init(
                body: .json(
                    .init(
                        apiVersion: TonightVersion.current, maxBodyBytes: config.bodyLimit,
                        passwordMinLength: AccountRules.passwordMinLength,
                        usernamePattern: AccountRules.usernamePattern, accessTokenTTLSeconds: config.accessTokenTTL,
                        feedbackURL: config.feedbackURL.isEmpty ? nil : config.feedbackURL,
                        appStoreURL: config.appStoreURL.isEmpty ? nil : config.appStoreURL,
                        mapTileURL: config.mapTileURL.isEmpty ? nil : config.mapTileURL,
                        mapAttribution: config.mapCredit, webPushPublicKey: webPushPublicKey))))
    }
}

/// The server's version, reported by `/health`, `/v1/config` and `tonight version`.
public enum TonightVersion {
    public static let current = "0.1.0"
}
