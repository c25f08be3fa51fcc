import Foundation
import Testing

@testable import TonightServer

@Suite("Vote groups racing account deletions")
struct VoteDeletionRaceTests {
    /// Failed before on PostgreSQL: a group that met a voter deleted a moment earlier failed whole on the
    /// votes' foreign key (every other voter of the group answered an error), and on PostgreSQL a
    /// vote added between a deletion's count of the account's votes and the account's removal
    /// left its post's counter one off.
    @Test(
        "groups of votes and account deletions at once: the others' votes land, counters match rows",
        arguments: Backend.available)
    func deletionsDuringGroups(_ backend: Backend) async throws {
        // Room for every transaction at once: the race is over row locks, not pooled connections.
        try await withApp(backend, configure: { $0.databasePoolSize = 40 }) { services, client in
            let author = try await client.member("author")
            let post = try await insertPost(services, author: author.id)
            let repository = services.posts.posts
            for round in 0..<4 {
                let voters = try await quickUsers(services, 60, prefix: "r\(round)v").map(\.id)
                // Half have voted before (their deletion takes the post's counter down).
                _ = try await repository.apply(
                    voters[..<30].map { VoteChange(postID: post, userID: $0, action: .vote(1)) },
                    flagThreshold: 1000, now: 1)
                let doomed = Set(voters[20..<40])
                let shuffled = voters.shuffled()
                let groups = stride(from: 0, to: shuffled.count, by: 6).map { Array(shuffled[$0..<$0 + 6]) }
                let failures = try await withThrowingTaskGroup(of: Int.self) { group in
                    for members in groups {
                        group.addTask {
                            let changes = members.map { VoteChange(postID: post, userID: $0, action: .vote(-1)) }
                            do {
                                let (outcomes, _) = try await repository.apply(changes, flagThreshold: 1000, now: 2)
                                // Every voter still there had their vote applied.
                                return zip(members, outcomes).filter { voter, outcome in
                                    guard !doomed.contains(voter) else { return false }
                                    if case .applied = outcome { return false }
                                    return true
                                }.count
                            } catch {
                                return members.count
                            }
                        }
                    }
                    for voter in doomed {
                        group.addTask {
                            try await services.users.delete(id: voter)
                            return 0
                        }
                    }
                    return try await group.reduce(0, +)
                }
                #expect(failures == 0, "round \(round)")
                let truth = try await repository.countVotes(postID: post)
                let stored = try #require(try await repository.find(id: post))
                #expect(stored.upCount == truth.up && stored.downCount == truth.down, "round \(round)")
                #expect(truth.down == Int64(40 * (round + 1)), "round \(round)")
            }
        }
    }
}
