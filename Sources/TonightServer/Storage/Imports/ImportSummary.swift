import TonightCore

/// What an import did, per kind of record, with the first rejects.
public struct ImportSummary: Sendable {
    /// Tallies by kind: `categories`, `artists`, `places`, `events`, `affinity`, `cities`.
    public var tallies: [String: ImportTally] = [:]
    /// The first rejects (at most ``ImportSummary/keptRejects``), in file order.
    public var rejects: [ImportReject] = []
    /// Every reject, counted.
    public var rejectedCount = 0
    /// Events whose place, start or status changed.
    public var changes = 0
    /// Events of the source that a full feed no longer listed, marked removed (``EventStatus/removed``).
    public var removed = 0
    /// Events passed unread because their bytes were those of a stored row (not printed: the
    /// tallies count them as unchanged).
    var passedUnread = 0
    static let keptRejects = 20

    mutating func reject(_ reject: ImportReject) {
        rejectedCount += 1
        if rejects.count < Self.keptRejects { rejects.append(reject) }
    }

    mutating func count(_ kind: String, _ change: (inout ImportTally) -> Void) {
        change(&tallies[kind, default: ImportTally()])
    }

    /// Records inserted or updated so far, of every kind.
    var written: Int { tallies.values.reduce(0) { $0 + $1.inserted + $1.updated } }
}
