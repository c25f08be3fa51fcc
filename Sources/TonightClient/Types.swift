@_exported import TonightAPI

/// The signed-in user's account, profile and preferences.
public typealias Me = Components.Schemas.Me
/// The stable codes of problem documents (`Problem.code`), as the spec documents them.
public typealias ErrorCode = Components.Schemas.ErrorCode
/// Another user's public profile.
public typealias PublicProfile = Components.Schemas.PublicProfile
/// Preferences used by recommendations and the event wall.
public typealias Preferences = Components.Schemas.Preferences
/// A profile change for ``TonightClient/updateMe(_:)``.
public typealias ProfileChange = Components.Schemas.UpdateMeRequest
/// Public client settings from the server.
public typealias ClientConfig = Components.Schemas.ClientConfig
/// Server health.
public typealias Health = Components.Schemas.Health
/// A gazetteer city with its keys and time zone.
public typealias City = Components.Schemas.City
/// A venue.
public typealias Place = Components.Schemas.Place
/// Filters for ``TonightClient/places(_:)``.
public typealias PlaceSearch = Operations.ListPlaces.Input.Query
/// A show, party or session at a place.
public typealias Event = Components.Schemas.Event
/// Filters for ``TonightClient/events(_:)``.
public typealias EventSearch = Operations.ListEvents.Input.Query
/// A new party for ``TonightClient/createEvent(_:)``.
public typealias EventInput = Components.Schemas.EventInput
/// going, interested or following.
public typealias AttendanceStatus = Components.Schemas.AttendanceStatus
/// show, party or session: what an events list asks for (``TonightClient/myEvents(status:kinds:cursor:)``).
public typealias EventKind = Components.Schemas.EventKind
/// nightlife or sports: which app's places a list asks for (``TonightClient/cityHub(_:near:group:cursor:)``).
public typealias PlaceGroup = Components.Schemas.PlaceGroup
/// The caller's attendance and the event's counts.
public typealias Attendance = Components.Schemas.Attendance
/// A performer.
public typealias Artist = Components.Schemas.Artist
/// A performer with upcoming events and similar artists.
public typealias ArtistDetail = Components.Schemas.ArtistDetail
/// A new place for ``TonightClient/createPlace(_:)``.
public typealias PlaceInput = Components.Schemas.PlaceInput
/// Changes for ``TonightClient/updatePlace(id:_:)``.
public typealias PlacePatch = Components.Schemas.PlacePatch
/// Changes for ``TonightClient/updateEvent(id:_:)``.
public typealias EventPatch = Components.Schemas.EventPatch
/// A category with its children.
public typealias Category = Components.Schemas.Category
/// Someone attending an event, for its organiser.
public typealias Attendee = Components.Schemas.Attendee
/// A friend (or a blocked user) and since when.
public typealias Friend = Components.Schemas.Friend
/// A pending friend request.
public typealias FriendRequest = Components.Schemas.FriendRequest
/// Where two users stand after a friend request.
public typealias Friendship = Components.Schemas.Friendship
/// Someone on an event's wall.
public typealias WallCard = Components.Schemas.WallCard
/// A mutual like on an event's wall.
public typealias Match = Components.Schemas.Match
/// Like or pass.
public typealias SwipeDecision = Components.Schemas.SwipeDecision
/// The answer to a like or pass.
public typealias SwipeResult = Components.Schemas.SwipeResult
/// An inbox item.
public typealias TonightNotification = Components.Schemas.Notification
/// Muted kinds and quiet hours.
public typealias NotificationSettings = Components.Schemas.NotificationSettings
/// A registered push token.
public typealias Device = Components.Schemas.Device
/// An invitation to an event or session.
public typealias Invitation = Components.Schemas.Invitation
/// Who was invited and who was skipped.
public typealias InviteResult = Components.Schemas.InviteResult
/// A one-to-one conversation with a friend or a match.
public typealias Conversation = Components.Schemas.Conversation
/// A chat message; `seq` is its place in the conversation and the sync cursor.
public typealias Message = Components.Schemas.Message
/// A read position and unread counts.
public typealias ReadState = Components.Schemas.ReadState

/// A media post (clip or still) with its counters and the caller's vote.
public typealias Post = Components.Schemas.Post
/// A page of a feed (with its 1-based page number).
public typealias FeedPage = Components.Schemas.FeedPage
/// A vote's result: the caller's vote and flag, the post's counters.
public typealias VoteState = Components.Schemas.VoteState
/// A comment on a post.
public typealias Comment = Components.Schemas.Comment
/// Whether the caller follows a user, and their follower count.
public typealias FollowState = Components.Schemas.FollowState
/// A song found for a post, and where it came from.
public typealias SongResult = Components.Schemas.SongResult
/// A venue as the city hub lists it.
public typealias HubPlace = Components.Schemas.HubPlace
/// One usage event an app reports.
public typealias AnalyticsEvent = Components.Schemas.AnalyticsEvent
/// A sport of the catalogue.
public typealias SportInfo = Components.Schemas.Sport
/// A new sports session (at a place or a spot).
public typealias SessionInput = Components.Schemas.SessionInput
/// A change to a session.
public typealias SessionPatch = Components.Schemas.SessionPatch
/// A place picked on a map: coordinates and a label.
public typealias Spot = Components.Schemas.Spot
/// Session search filters.
public typealias SessionSearch = Operations.SearchSessions.Input.Query
/// The calendar by day.
public typealias TonightCalendar = Components.Schemas.Calendar
/// A user's sports statistics.
public typealias PlayerStats = Components.Schemas.PlayerStats
/// A recommended session with its score and reasons: `reasons` as English sentences, `why` as what
/// matched (sport, level, friends, preferred players, distance) for wording them in any language.
public typealias SessionRecommendation = Components.Schemas.SessionRecommendation
/// An explore card: an event and why.
public typealias EventRecommendation = Components.Schemas.EventRecommendation
/// Explore cards and whether they are a cold start or a refresh.
public typealias EventRecommendations = Components.Schemas.EventRecommendationList
/// Why a recommendation was swiped away.
public typealias DismissalReason = Components.Schemas.DismissalReason
/// A venue's promotion in its city hub (tier, tagline, dates), for ``TonightClient/setPromotion(placeID:_:)``.
public typealias PromotionInput = Components.Schemas.PromotionInput
/// A venue's promotion as stored.
public typealias Promotion = Components.Schemas.Promotion
