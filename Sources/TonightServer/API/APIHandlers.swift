import Foundation
import Prometheus
import TonightAPI

/// The generated API protocol's implementation: one extension per resource
/// (`APIHandlers+Auth.swift`, `+Me`, `+Users`, `+System`). Handlers validate at the edge, call
/// services, and return the responses the spec documents.
struct APIHandlers: APIProtocol {
    let accounts: AccountService
    let users: any UserRepository
    let geo: GeoService
    let places: any PlaceRepository
    let events: any EventRepository
    let catalog: any CatalogRepository
    let suggester: ArtistSuggester
    let social: any SocialRepository
    let wall: any WallRepository
    let notifications: any NotificationRepository
    let notifier: Notifier
    let oidc: OIDCVerifier
    let devices: any DeviceRepository
    let invitations: any InvitationRepository
    let chat: any ChatRepository
    let fanout: any LiveFanout
    let postService: PostService
    let songSearch: SongSearch
    let promotions: any PromotionRepository
    let analytics: any AnalyticsRepository
    let bans: BanList
    let logins: any LoginRepository
    let sessions: any SessionRepository
    let database: Database
    let config: AppConfig
    let metrics: PrometheusCollectorRegistry
    let openAPIDocument: String
}
