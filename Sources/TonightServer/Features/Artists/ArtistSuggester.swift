import Foundation
import Logging
import ServiceLifecycle
import TonightCore

/// Search as you type over every artist, answered from memory (``PrefixIndex``), most popular
/// first. The index is rebuilt when the artists table changes (an import, in this process or
/// another one): at most every `checkInterval` a request, and ``Watch`` in the background, ask the
/// database for a cheap fingerprint (count, last update, total popularity) and rebuild on a
/// difference; that request waits for it, the others keep using the previous index meanwhile.
///
/// The fingerprint also covers performers and event changes (upcoming-show counts in a
/// suggestion): any difference starts a new ``generation``, which ends every cached suggestion
/// (see ``PageCache``).
///
/// An import in this process calls ``invalidate()``: the next search then waits for a check that
/// started after it (a check already running may have read the fingerprint before the import).
actor ArtistSuggester {
    /// The fingerprint: artists, and what upcoming-show counts depend on.
    typealias Fingerprint = (artists: String, shows: String)
    private let catalog: CatalogRepository
    private let readFingerprint: @Sendable () async throws -> Fingerprint
    let checkInterval: TimeInterval
    /// Moves whenever what a suggestion shows may have changed.
    nonisolated let generation: SuggestionGeneration
    private var index: PrefixIndex?
    private var ids: [String] = []
    private var fingerprint: Fingerprint?
    private var lastCheck = Date.distantPast
    private var refresh: Task<Void, any Error>?
    /// How many times ``invalidate()`` was called, and that count when the last check that
    /// finished had started: the index is known current only while they are equal.
    private var invalidations = 0
    private var checkedInvalidations = 0

    /// `readFingerprint` defaults to the catalog's; a test may pass one that pauses.
    init(
        catalog: CatalogRepository, checkInterval: TimeInterval = 5, generation: SuggestionGeneration = .init(),
        readFingerprint: (@Sendable () async throws -> Fingerprint)? = nil
    ) {
        self.catalog = catalog
        self.checkInterval = checkInterval
        self.generation = generation
        self.readFingerprint =
            readFingerprint ?? {
                // Only SQLite caches suggestions (see ``CatalogRepository/showsFingerprint()``).
                (
                    try await catalog.artistsFingerprint(),
                    catalog.database.kind == .sqlite ? try await catalog.showsFingerprint() : ""
                )
            }
    }

    /// Checks the fingerprint every ``checkInterval`` while the server runs, so cached
    /// suggestions end soon after another process's import even when no request reaches the index.
    struct Watch: Service {
        let suggester: ArtistSuggester
        let logger: Logger

        func run() async throws {
            // Sleeps first: a server that stops within the interval (most tests) never queries
            // from here, so no query of this service races the pool's shutdown.
            try await runUntilShutdown {
                while !Task.isCancelled {
                    try await Task.sleep(for: .seconds(suggester.checkInterval))
                    do {
                        try await suggester.check()
                    } catch {
                        logger.warning("artist index check failed", metadata: LoggedError.metadata(error))
                    }
                }
            }
        }
    }

    /// After an import in this process: cached suggestions end now, and the next search waits for
    /// a fingerprint check that started after this call.
    func invalidate() {
        invalidations += 1
        generation.advance()
    }

    /// Compares the fingerprint now and rebuilds on a difference. A check already running may have
    /// read before the caller's change, so it is waited for and one more made after it.
    func check() async throws {
        if let running = refresh { _ = try? await running.value }
        try await currentCheck().value
    }

    /// The check running now, or a new one.
    private func currentCheck() -> Task<Void, any Error> {
        if let running = refresh { return running }
        let task = Task { try await self.rebuildIfChanged() }
        refresh = task
        return task
    }

    /// Artist ids for `query`, best first.
    func search(_ query: String, limit: Int) async throws -> [String] {
        if let running = refresh {
            // Someone else is checking: use the current index, or wait for the first one.
            if index == nil { try await running.value }
        } else if index == nil || Date().timeIntervalSince(lastCheck) >= checkInterval {
            try await currentCheck().value
        }
        // After an import here, only a check that started after it will do.
        while checkedInvalidations != invalidations { try await currentCheck().value }
        guard let index else { return [] }
        return index.search(query, limit: limit).map { ids[$0] }
    }

    private func rebuildIfChanged() async throws {
        defer { refresh = nil }
        lastCheck = Date()
        let started = invalidations
        let current = try await readFingerprint()
        guard fingerprint.map({ $0 != current }) ?? true || index == nil else {
            checkedInvalidations = started
            return
        }
        if current.artists != fingerprint?.artists || index == nil { try await rebuild() }
        // The generation moves after the new index is in place: a suggestion made from the old
        // one meanwhile is then never kept. A failed rebuild leaves the fingerprint as it was.
        fingerprint = current
        checkedInvalidations = started
        generation.advance()
    }

    /// Reads every artist's name into a new index.
    private func rebuild() async throws {
        let (ids, names) = try await catalog.artistNamesByPopularity()
        let built = PrefixIndex(names: names)
        self.ids = ids
        self.index = built
    }
}
