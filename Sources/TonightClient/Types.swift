@_exported import TonightAPI

/// The signed-in user's account, profile and preferences.
public typealias Me = Components.Schemas.Me
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
