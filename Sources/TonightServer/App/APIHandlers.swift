import Foundation
import Prometheus
import TonightAPI

/// The API: one handler struct per feature (each holding only the services it uses), built once
/// from ``AppServices``. The generated `Generated/APIHandlers+Routes.swift` implements the
/// OpenAPI protocol by forwarding each operation to the struct that declares it.
///
/// A class on purpose: the OpenAPI runtime copies its handler into every request, and copying this
/// value (the feature structs and their hundreds of references) cost `/health` and votes about 37 µs a
/// request in retains and releases (a profile of the release build; 15–20% of `/health`'s ceiling).
final class APIHandlers: Sendable {
    let auth: AuthHandlers
    let me: MeHandlers
    let users: UsersHandlers
    let analytics: AnalyticsHandlers
    let artists: ArtistsHandlers
    let chat: ChatHandlers
    let events: EventsHandlers
    let feeds: FeedsHandlers
    let moderation: ModerationHandlers
    let devices: DevicesHandlers
    let notifications: NotificationsHandlers
    let geo: GeoHandlers
    let places: PlacesHandlers
    let posts: PostsHandlers
    let uploads: UploadsHandlers
    let promotions: PromotionsHandlers
    let recommendations: RecommendationsHandlers
    let calendar: CalendarHandlers
    let sessions: SessionsHandlers
    let invitations: InvitationsHandlers
    let social: SocialHandlers
    let wall: WallHandlers
    let system: SystemHandlers

    init(services s: AppServices, metrics: PrometheusCollectorRegistry, openAPIDocument: String) {
        auth = AuthHandlers(accounts: s.accounts, oidc: s.oidc, email: s.email)
        me = MeHandlers(
            accounts: s.accounts, users: s.users, sessions: s.sessions, eventService: s.eventService, people: s.people,
            bans: s.bans, fanout: s.fanout, oidc: s.oidc, photos: s.photos, email: s.email)
        users = UsersHandlers(users: s.users, people: s.people, reader: s.postReader, posts: s.postRepository)
        analytics = AnalyticsHandlers(analytics: s.analytics, limiter: s.accounts.limiter, config: s.config)
        artists = ArtistsHandlers(catalog: s.catalog, suggester: s.suggester, eventService: s.eventService)
        chat = ChatHandlers(
            users: s.users, social: s.social, notifier: s.notifier, chat: s.chat, fanout: s.fanout,
            notifications: s.notifications, people: s.people)
        events = EventsHandlers(
            users: s.users, places: s.places, events: s.events, catalog: s.catalog, sessions: s.sessions,
            eventService: s.eventService)
        feeds = FeedsHandlers(
            config: s.config, places: s.places, posts: s.postRepository, social: s.social, users: s.users,
            people: s.people, reader: s.postReader, adPlacer: s.adPlacer)
        moderation = ModerationHandlers(
            users: s.users, notifier: s.notifier, postService: s.posts, posts: s.postRepository, bans: s.bans,
            fanout: s.fanout, logins: s.logins,
            notifications: s.notifications, config: s.config, reader: s.postReader)
        devices = DevicesHandlers(
            devices: s.devices, webPush: s.push.webPush, subscriptions: s.push.subscriptions)
        notifications = NotificationsHandlers(notifications: s.notifications, users: s.users, people: s.people)
        geo = GeoHandlers(geo: s.geo)
        places = PlacesHandlers(geo: s.geo, places: s.places, events: s.events, nearby: s.nearby)
        posts = PostsHandlers(
            places: s.places, events: s.events, social: s.social, notifier: s.notifier, postService: s.posts,
            posts: s.postRepository,
            songSearch: s.songSearch, bans: s.bans, config: s.config, reader: s.postReader,
            limiter: s.accounts.limiter)
        uploads = UploadsHandlers(uploads: s.uploads)
        promotions = PromotionsHandlers(
            config: s.config, places: s.places, blobs: s.posts.blobs, urls: s.posts.urls, promotions: s.promotions,
            adPlacer: s.adPlacer)
        recommendations = RecommendationsHandlers(
            users: s.users, geo: s.geo, places: s.places, events: s.events, sessions: s.sessions,
            config: s.config, eventService: s.eventService, people: s.people, recommender: s.eventRecommender,
            sessionRecommender: s.sessionRecommender, sessionCache: s.recommendationCache, cardCache: s.cardCache)
        calendar = CalendarHandlers(
            users: s.users, geo: s.geo, events: s.events, sessions: s.sessions, eventService: s.eventService,
            people: s.people)
        sessions = SessionsHandlers(
            users: s.users, geo: s.geo, places: s.places, events: s.events, catalog: s.catalog, notifier: s.notifier,
            sessions: s.sessions, eventService: s.eventService, people: s.people)
        invitations = InvitationsHandlers(
            users: s.users, events: s.events, social: s.social, notifier: s.notifier, invitations: s.invitations,
            people: s.people, eventService: s.eventService)
        social = SocialHandlers(users: s.users, social: s.social, notifier: s.notifier, people: s.people)
        wall = WallHandlers(
            users: s.users, wall: s.wall, notifier: s.notifier, notifications: s.notifications, people: s.people,
            eventService: s.eventService)
        system = SystemHandlers(
            database: s.database, config: s.config, metrics: metrics, openAPIDocument: openAPIDocument,
            webPushPublicKey: s.push.webPush.vapid.publicKey)
    }
}
