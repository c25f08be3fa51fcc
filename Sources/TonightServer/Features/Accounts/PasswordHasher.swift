import HummingbirdBcrypt
import NIOConcurrencyHelpers
import NIOPosix

/// bcrypt hashing on the blocking thread pool, so event loops never wait on it.
public struct PasswordHasher: Sendable {
    /// The bcrypt cost (work factor, 4–31).
    public let cost: Int
    /// A hash to verify against for unknown users, so a login for a missing account takes as long
    /// as one with a wrong password. Made at the first such login, not at start-up (a tenth of a
    /// second that every `tonight` command would spend).
    private let dummyHash = NIOLockedValueBox<String?>(nil)

    /// Creates a hasher.
    public init(cost: Int) {
        self.cost = min(31, max(4, cost))
    }

    /// The bcrypt hash of `password`.
    public func hash(_ password: String) async throws -> String {
        let cost = UInt8(self.cost)
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches `hash`; with `nil`, spends the same time and answers false.
    public func verify(_ password: String, hash: String?) async throws -> Bool {
        let cost = UInt8(self.cost)
        let dummyHash = self.dummyHash
        let result = try await NIOThreadPool.singleton.runIfActive {
            let target =
                hash
                ?? dummyHash.withLockedValue { made in
                    if let made { return made }
                    made = Bcrypt.hash("tonight-timing-equaliser", cost: cost)
                    return made!
                }
            return Bcrypt.verify(password, hash: target)
        }
        return hash != nil && result
    }
}
