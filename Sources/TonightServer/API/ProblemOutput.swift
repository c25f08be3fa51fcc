import TonightAPI
import TonightCore

/// An operation output that can express an ``APIError`` as one of its documented responses.
protocol ProblemOutput {
    static func problem(_ error: APIError) -> Self
}

/// Runs a handler body, answering an ``APIError`` with the operation's documented problem response.
func answer<Output: ProblemOutput>(_ body: () async throws -> Output) async throws -> Output {
    do {
        return try await body()
    } catch let error as APIError {
        return .problem(error)
    } catch let issue as FieldIssue {
        return .problem(.validation([issue]))
    }
}

/// The generated problem response types all carry one problem+json body.
protocol ProblemResponse {
    init(problem: Components.Schemas.Problem)
}

extension Components.Responses.Problem: ProblemResponse {
    init(problem: Components.Schemas.Problem) { self.init(body: .applicationProblemJson(problem)) }
}
extension Components.Responses.BadRequest: ProblemResponse {
    init(problem: Components.Schemas.Problem) { self.init(body: .applicationProblemJson(problem)) }
}
extension Components.Responses.Unauthorized: ProblemResponse {
    init(problem: Components.Schemas.Problem) { self.init(body: .applicationProblemJson(problem)) }
}
extension Components.Responses.Forbidden: ProblemResponse {
    init(problem: Components.Schemas.Problem) { self.init(body: .applicationProblemJson(problem)) }
}
extension Components.Responses.NotFound: ProblemResponse {
    init(problem: Components.Schemas.Problem) { self.init(body: .applicationProblemJson(problem)) }
}
extension Components.Responses.Conflict: ProblemResponse {
    init(problem: Components.Schemas.Problem) { self.init(body: .applicationProblemJson(problem)) }
}
extension Components.Responses.Unprocessable: ProblemResponse {
    init(problem: Components.Schemas.Problem) { self.init(body: .applicationProblemJson(problem)) }
}
extension Components.Responses.TooManyRequests {
    init(error: APIError) {
        self.init(headers: .init(retryAfter: error.retryAfter), body: .applicationProblemJson(error.problem()))
    }
}

extension APIError {
    /// This error as the `default` response.
    var defaultResponse: Components.Responses.Problem { .init(problem: problem()) }
    /// This error as a specific documented response.
    func response<R: ProblemResponse>() -> R { R(problem: problem()) }
}

extension Operations.GetHealth.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self { .default(statusCode: e.status, e.defaultResponse) }
}
extension Operations.GetMetrics.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self { .default(statusCode: e.status, e.defaultResponse) }
}
extension Operations.GetOpenAPIDocument.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self { .default(statusCode: e.status, e.defaultResponse) }
}
extension Operations.GetClientConfig.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self { .default(statusCode: e.status, e.defaultResponse) }
}

extension Operations.SignUp.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 409: .conflict(e.response())
        case 422: .unprocessableContent(e.response())
        case 429: .tooManyRequests(.init(error: e))
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.LogIn.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 422: .unprocessableContent(e.response())
        case 429: .tooManyRequests(.init(error: e))
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.SignInAnonymously.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 422: .unprocessableContent(e.response())
        case 429: .tooManyRequests(.init(error: e))
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.RefreshTokens.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.LogOut.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.LogOutEverywhere.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.GetMe.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.UpdateMe.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.DeleteMe.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ChangePassword.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.GetUser.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}

extension Operations.Geocode.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ReverseGeocode.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListPlaces.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.CreatePlace.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.GetPlace.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.UpdatePlace.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListCategories.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        .default(statusCode: e.status, e.defaultResponse)
    }
}
extension Operations.ListEvents.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.CreateEvent.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.GetEvent.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.UpdateEvent.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.CancelEvent.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListAttendees.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.SetAttendance.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 409: .conflict(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.DeleteAttendance.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListMyEvents.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListArtists.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.SuggestArtists.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.GetArtist.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListFavoriteArtists.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.AddFavoriteArtist.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.RemoveFavoriteArtist.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.FavoritesFeed.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}

extension Operations.ListFriends.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.RemoveFriend.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListFriendRequests.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.SendFriendRequest.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.CancelFriendRequest.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.AcceptFriendRequest.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.DenyFriendRequest.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListBlocks.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.BlockUser.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.UnblockUser.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.GetWall.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.Swipe.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 409: .conflict(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListMatches.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.Unmatch.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListNotifications.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.UnreadNotificationCount.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.MarkAllNotificationsRead.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.MarkNotificationRead.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.GetNotificationSettings.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.PutNotificationSettings.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.SignInWithOIDC.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 409: .conflict(e.response())
        case 422: .unprocessableContent(e.response())
        case 429: .tooManyRequests(.init(error: e))
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListDevices.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.RegisterDevice.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.UnregisterDevice.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.InviteFriends.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 409: .conflict(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListInvitations.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.AnswerInvitation.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 409: .conflict(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListConversations.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.OpenConversation.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.GetConversation.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListMessages.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.SendMessage.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.MarkConversationRead.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Components.Responses.TooLarge: ProblemResponse {
    init(problem: Components.Schemas.Problem) { self.init(body: .applicationProblemJson(problem)) }
}
extension Components.Responses.UnsupportedMedia: ProblemResponse {
    init(problem: Components.Schemas.Problem) { self.init(body: .applicationProblemJson(problem)) }
}
extension Operations.CreatePost.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 413: .contentTooLarge(e.response())
        case 415: .unsupportedMediaType(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.GetPost.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.DeletePost.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.VotePost.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.FlagPost.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.UnflagPost.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListComments.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.CreateComment.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.DeleteComment.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.BookmarkPost.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.UnbookmarkPost.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.RecordViews.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListBookmarks.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.FollowUser.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.UnfollowUser.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListUserPosts.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.PlaceFeed.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.CityFeed.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.TagFeed.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.FollowingFeed.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.TrendingFeed.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.SetPostRetention.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ModerationQueue.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.RestorePost.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.RemovePost.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.SearchSongs.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.SearchUsers.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.SetPromotion.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.DeletePromotion.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.CityHub.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListAds.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.CreateAd.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.DeleteAd.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.RecordAnalytics.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.SendFeedback.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.BanUser.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.UnbanUser.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.UploadAdCreative.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 413: .contentTooLarge(e.response())
        case 415: .unsupportedMediaType(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}

extension Operations.ListSports.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self { .default(statusCode: e.status, e.defaultResponse) }
}
extension Operations.CreateSport.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 409: .conflict(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.SearchSessions.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.CreateSession.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 422: .unprocessableContent(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.UpdateSession.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        case 409: .conflict(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.DeleteSession.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.ListSessionPlayers.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.GetMyCalendar.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.CreateCalendarSubscription.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.GetCalendarFeed.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.GetPlayerStats.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 401: .unauthorized(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.PutMyPreferences.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.RecommendSessions.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.DismissRecommendation.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        case 404: .notFound(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
extension Operations.RecommendEvents.Output: ProblemOutput {
    static func problem(_ e: APIError) -> Self {
        switch e.status {
        case 400: .badRequest(e.response())
        case 401: .unauthorized(e.response())
        case 403: .forbidden(e.response())
        default: .default(statusCode: e.status, e.defaultResponse)
        }
    }
}
