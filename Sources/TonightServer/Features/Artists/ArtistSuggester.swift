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
actor ArtistSuggester {
    private let catalog: CatalogRepository
    let checkInterval: TimeInterval
    /// Moves whenever what a suggestion shows may have changed.
    nonisolated let generation: SuggestionGeneration
    private var index: PrefixIndex?
    private var ids: [String] = []
    private var fingerprint: (artists: String, shows: String)?
    private var lastCheck = Date.distantPast
    private var refresh: Task<Void, any Error>?

    init(catalog: CatalogRepository, checkInterval: TimeInterval = 5, generation: SuggestionGeneration = .init()) {
        self.catalog = catalog
        self.checkInterval = checkInterval
        self.generation = generation
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
                        logger.warning("artist index check failed", metadata: ["error": "\(error)"])
                    }
                }
            }
        }
    }

    /// After an import in this process: cached suggestions end now, and the next search compares
    /// the fingerprint first.
    func invalidate() {
        lastCheck = .distantPast
        generation.advance()
    }

    /// Compares the fingerprint now and rebuilds on a difference. A check already running may have
    /// read before the caller's change, so it is waited for and one more made after it.
    func check() async throws {
        if let running = refresh { _ = try? await running.value }
        if let running = refresh { return try await running.value }
        let task = Task { try await self.rebuildIfChanged() }
        refresh = task
        try await task.value
    }

    /// Artist ids for `query`, best first.
    func search(_ query: String, limit: Int) async throws -> [String] {
        if let running = refresh {
            // Someone else is checking: use the current index, or wait for the first one.
            if index == nil { try await running.value }
        } else if index == nil || Date().timeIntervalSince(lastCheck) >= checkInterval {
            let task = Task { try await self.rebuildIfChanged() }
            refresh = task
            try await task.value
        }
        guard let index else { return [] }
        return index.search(query, limit: limit).map { ids[$0] }
    }

    private func rebuildIfChanged() async throws {
        defer { refresh = nil }
        lastCheck = Date()
        let artists = try await catalog.artistsFingerprint()
        // Only SQLite caches suggestions (see ``CatalogRepository/showsFingerprint()``).
        let shows = catalog.database.kind == .sqlite ? try await catalog.showsFingerprint() : ""
        let current = (artists: artists, shows: shows)
        guard fingerprint.map({ $0 != current }) ?? true || index == nil else { return }
        if current.artists != fingerprint?.artists || index == nil { try await rebuild() }
        // The generation moves after the new index is in place: a suggestion made from the old
        // one meanwhile is then never kept. A failed rebuild leaves the fingerprint as it was.
        fingerprint = current
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
