import HummingbirdBcrypt
import NIOPosix

/// bcrypt hashing on the blocking thread pool, so event loops never wait on it.
public struct PasswordHasher: Sendable {
    /// The bcrypt cost (work factor, 4–31).
    public let cost: Int
    private let dummyHash: String

    /// Creates a hasher; also prepares a hash to verify against for unknown users, so a login
    /// for a missing account takes as long as one with a wrong password.
    public init(cost: Int) {
        self.cost = min(31, max(4, cost))
        self.dummyHash = Bcrypt.hash("tonight-timing-equaliser", cost: UInt8(self.cost))
    }

    /// The bcrypt hash of `password`.
    public func hash(_ password: String) async throws -> String {
        let cost = UInt8(self.cost)
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches `hash`; with `nil`, spends the same time and answers false.
    public func verify(_ password: String, hash: String?) async throws -> Bool {
        let target = hash ?? dummyHash
        let result = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: target) }
        return hash != nil && result
    }
}
