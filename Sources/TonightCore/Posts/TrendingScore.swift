import Foundation

/// The explore feed's time-decayed score (Hacker-News style):
///
///     score = (1 + upWeight·up − downWeight·down + commentWeight·comments + viewWeight·views)
///             / (ageHours + 2) ^ gravity
///
/// Engagement raises a post; age pulls it down, faster for a larger `gravity`. Only posts younger
/// than `windowHours` compete. Every constant is configuration (`TRENDING_*`).
public struct TrendingScore: Sendable, Equatable {
    /// Weight of an up vote (`trending.up.weight`, default 1).
    public var upWeight = 1.0
    /// Weight of a down vote, subtracted (`trending.down.weight`, default 1).
    public var downWeight = 1.0
    /// Weight of a comment (`trending.comment.weight`, default 2).
    public var commentWeight = 2.0
    /// Weight of a view (`trending.view.weight`, default 0.05).
    public var viewWeight = 0.05
    /// How fast age decays the score (`trending.gravity`, default 1.5).
    public var gravity = 1.5
    /// Posts older than this many hours are not ranked (`trending.window.hours`, default 72).
    public var windowHours = 72

    /// The defaults.
    public init() {}

    /// The score of a post with these counts, `ageHours` old.
    public func score(up: Int64, down: Int64, comments: Int64, views: Int64, ageHours: Double) -> Double {
        let engagement =
            1 + upWeight * Double(up) - downWeight * Double(down) + commentWeight * Double(comments)
            + viewWeight * Double(views)
        return engagement / pow(max(0, ageHours) + 2, gravity)
    }
}
